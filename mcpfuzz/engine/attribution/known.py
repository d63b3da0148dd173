"""The SDKs' known behaviours (known_behaviours.json) and which of them explains a finding."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from fnmatch import fnmatchcase
from functools import cache
from importlib import resources

from mcpfuzz.engine.attribution.detect import Sdk, SdkInfo

ANY_TRANSPORT = "any"


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

    def covers(self, sdk: SdkInfo, transport: str) -> bool:
        """True for a server on this SDK, in the version range, over this transport."""
        if sdk.sdk is not self.sdk or self.transport not in (ANY_TRANSPORT, transport):
            return False
        version = version_key(sdk.version)
        if self.since is not None and version < version_key(self.since):
            return False
        return self.before is None or version < version_key(self.before)

    def explains(self, oracle: str, key: str) -> bool:
        """True when a finding of this oracle and key is this behaviour."""
        return oracle == self.oracle and fnmatchcase(key, self.key)


def version_key(version: str) -> tuple[int, ...]:
    """`1.32.2` -> (1, 32, 2); pre-release tails are ignored (rows name release versions)."""
    return tuple(int(part) for part in re.findall(r"\d+", version.split("-")[0].split("+")[0])[:4])


@cache
def known_behaviours() -> tuple[KnownBehaviour, ...]:
    """Every row of the table shipped with mcpfuzz."""
    text = resources.files(__package__).joinpath("known_behaviours.json").read_text(encoding="utf-8")
    return tuple(KnownBehaviour(row["id"], Sdk(row["sdk"]), row["from"], row["before"], row["transport"],
                                row["oracle"], row["key"], row["behaviour"], row["link"])
                 for row in json.loads(text)["rows"])


def explain(sdk: SdkInfo, transport: str, oracle: str, key: str) -> KnownBehaviour | None:
    """The known behaviour of the server's SDK that a finding is, or None (then the fix is the server's own)."""
    for layer in sdk.layers():  # FastMCP's own rows first, then those of the mcp it is built on
        for row in known_behaviours():
            if row.covers(layer, transport) and row.explains(oracle, key):
                return row
    return None
