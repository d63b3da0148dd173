"""The SDKs' known behaviours (known_behaviours.json) and which of them explains a finding.

A row names the finding (oracle and key) and, where the SDK answers with words of its own, the answer itself:
`answer` is a pattern one of the finding's received lines must match (the SDK's error text, code and shape), and
`targets` the frames the SDK's own code handles, `stderr` what the SDK logs as it ends a session. A server's
own handler that fails the same oracle with the same key (its catch-all for unknown tools, its own internal error)
answers differently, so it is never excused.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from fnmatch import fnmatchcase
from functools import cache
from importlib import resources
from typing import Protocol

from mcpfuzz.engine.attribution.sdks import Sdk, SdkInfo

ANY_TRANSPORT = "any"


class Observed(Protocol):
    """What a finding says about the failure (engine.events.Finding has these)."""

    @property
    def oracle(self) -> str: ...

    @property
    def key(self) -> str: ...

    @property
    def target(self) -> str: ...

    @property
    def received(self) -> Sequence[str]: ...

    @property
    def message(self) -> str: ...

    @property
    def stderr_tail(self) -> str: ...


@dataclass(frozen=True)
class KnownBehaviour:
    """One row of the table: an SDK version range, the finding it explains, and where upstream tracks it."""

    id: str
    sdk: Sdk
    since: str | None  # first version that shows it (inclusive), None: every earlier one
    before: str | None  # first version that no longer does, None: still open
    transport: str  # "stdio", "http" or "any"
    oracle: str
    key: str  # fnmatch pattern of the finding's key
    behaviour: str
    link: str
    answer: re.Pattern[str] | None = None  # the SDK's own answer: one received line matches it
    targets: tuple[str, ...] = ()  # fnmatch patterns of the targets it shows on (none: any)
    stderr: re.Pattern[str] | None = None  # what the SDK writes to stderr as it does it (a crash's tail)
    package: str | None = None  # an optional package of the SDK that does it: the server must be seen to load it


    def covers(self, sdk: SdkInfo, transport: str) -> bool:
        """True for a server on this SDK, in the version range, over this transport."""
        if sdk.sdk is not self.sdk or self.transport not in (ANY_TRANSPORT, transport):
            return False
        if self.package is not None and self.package not in sdk.packages:
            return False  # the same answer from the server's own use of the library underneath is the server's
        version = version_key(sdk.version)
        if not version:  # version unknown (a shaded jar): only a row for every version applies
            return self.since is None and self.before is None
        major = _MAJOR_ONLY.match(sdk.version)
        if major is not None:  # `2.x` (a minified bundle): a row applies only when it holds for the whole major
            lowest, next_major = (int(major.group(1)), 0, 0), (int(major.group(1)) + 1, 0, 0)
            return (self.since is None or version_key(self.since) <= lowest) and \
                (self.before is None or version_key(self.before) >= next_major)
        if self.since is not None and version < version_key(self.since):
            return False
        return self.before is None or version < version_key(self.before)

    def explains(self, finding: Observed) -> bool:
        """True when the finding is this behaviour: its oracle and key, on a frame the SDK handles, answered the
        SDK's own way."""
        if finding.oracle != self.oracle or not fnmatchcase(finding.key, self.key):
            return False
        # The finding's own target: the other targets grouped under it may be the server's own code.
        if self.targets and not any(fnmatchcase(finding.target, pattern) for pattern in self.targets):
            return False
        if self.answer is not None and not any(self.answer.search(line) for line in finding.received):
            return False
        # A crash finding carries the stderr tail in its message; other findings may carry it apart, and a crash
        # more of stderr than its tail (the error a long usage text scrolled out).
        return self.stderr is None or any(self.stderr.search(text) for text in (
            finding.stderr_tail, finding.message, getattr(finding, "stderr_context", "")))


_MAJOR_ONLY = re.compile(r"^v?(\d+)\.x$")


def version_key(version: str) -> tuple[int, ...]:
    """`1.32.2` and `v1.32.2` -> (1, 32, 2); pre-release tails are ignored (rows name release versions)."""
    return tuple(int(part) for part in re.findall(r"\d+", version.split("-")[0].split("+")[0])[:4])


@cache
def known_behaviours() -> tuple[KnownBehaviour, ...]:
    """Every row of the table shipped with mcpfuzz."""
    text = resources.files(__package__).joinpath("known_behaviours.json").read_text(encoding="utf-8")
    return tuple(KnownBehaviour(row["id"], Sdk(row["sdk"]), row["from"], row["before"], row["transport"],
                                row["oracle"], row["key"], row["behaviour"], row["link"],
                                _pattern(row.get("answer")), tuple(row.get("targets", ())),
                                _pattern(row.get("stderr")), row.get("package"))
                 for row in json.loads(text)["rows"])


def _pattern(text: str | None) -> re.Pattern[str] | None:
    return re.compile(text) if text else None


def explain(sdk: SdkInfo, transport: str, finding: Observed,
            folded: Sequence[tuple[str, str]] = ()) -> KnownBehaviour | None:
    """The known behaviour of the server's SDK that a finding is, or None (then the fix is the server's own).

    `folded` are the (oracle, key) of other oracles' failures folded into the finding on its frame: one frame, one
    cause, so a row that explains one of them on the same answer explains the finding.
    """
    views = (finding, *(_AsJudgedBy(finding, oracle, key) for oracle, key in folded))
    for layer in sdk.layers():  # FastMCP's own rows first, then those of the mcp it is built on
        rows = [row for row in known_behaviours() if row.covers(layer, transport)]
        # The row of the finding's own oracle names the behaviour best; a folded oracle's row only stands in for it.
        for view in views:
            row = next((row for row in rows if row.explains(view)), None)
            if row is not None:
                return row
    return None


@dataclass(frozen=True)
class _AsJudgedBy:
    """A finding seen as the failure of another oracle that judged its frame (same frame, answer and stderr)."""

    finding: Observed
    oracle: str
    key: str

    @property
    def target(self) -> str:
        return self.finding.target

    @property
    def received(self) -> Sequence[str]:
        return self.finding.received

    @property
    def message(self) -> str:
        return self.finding.message

    @property
    def stderr_tail(self) -> str:
        return self.finding.stderr_tail

    @property
    def stderr_context(self) -> str:
        return getattr(self.finding, "stderr_context", "")
