"""A report's opening: one line per root cause (severity, oracle, how many targets, where the fix belongs)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from mcpfuzz.engine.events import Finding
from mcpfuzz.jsonrpc.oracle_ids import OracleId
from mcpfuzz.oracles.crash_signature import exception_line

GIST_LENGTH = 100  # of a cause's message in its line
NO_CRASH = OracleId.NO_CRASH.value


@dataclass(frozen=True)
class Cause:
    """One finding as a line of triage: what to fix first, and whose fix it is."""

    number: int
    severity: str  # `high`, or `note` for a finding that did not fail again on a fresh server
    oracle: str
    targets: int  # the finding's target and the others it showed on
    occurrences: int  # distinct places it showed (targets, lines of one statement)
    fix: str  # `server`, or `SDK <name and version>`
    link: str | None  # the upstream issue, for an SDK's
    gist: str
    target: str = ""  # where it was first seen (`targets` counts the others)

    def describe(self) -> str:
        """`HIGH stdout-clean · 74 targets · fix: server · wrote a line ...` (numbered apart)."""
        where = f"{self.targets} target{'s' if self.targets != 1 else ''}"
        if self.occurrences > self.targets:
            where += f", {self.occurrences} occurrences"
        fix = f"fix: {self.fix}" + (f" ({self.link})" if self.link else "")
        return f"{self.severity.upper()} {self.oracle} · {where} · {fix} · {self.gist}"


def gist(message: str, exception: str | None = None) -> str:
    """The first line of a message, without the stderr tail and the "also on" list it may carry, cut short; a
    crash's exception line after it (two crashes read alike until their exceptions are named)."""
    head = message.split("\nstderr tail:", 1)[0]
    head = head.splitlines()[0] if head else ""
    head = head.rsplit(" (also on ", 1)[0]
    if exception:
        head = f"{head}: {exception}"
    return head if len(head) <= GIST_LENGTH else head[:GIST_LENGTH - 3] + "..."


def causes(findings: Iterable[Finding]) -> list[Cause]:
    """The findings as triage lines, numbered in the order given (the order the report lists them in)."""
    return [Cause(number, "note" if finding.reproducible is False else str(finding.severity), finding.oracle,
                  1 + len(finding.also_on), max(finding.occurrence_count, len(finding.occurrences), 1),
                  "server" if finding.upstream is None else f"SDK {finding.upstream.sdk.removeprefix('the ')}",
                  None if finding.upstream is None else finding.upstream.link,
                  gist(finding.message, exception_line(finding.stderr_tail) if finding.oracle == NO_CRASH else None),
                  finding.target)
            for number, finding in enumerate(findings, 1)]


def causes_of_report(entries: Iterable[dict]) -> list[Cause]:
    """The same lines from the JSON report's findings (the HTML report is built from it)."""
    result = []
    for number, entry in enumerate(entries, 1):
        upstream = entry.get("upstream")
        occurrences = max(int(entry.get("occurrence_count") or 0), len(entry.get("occurrences") or ()), 1)
        result.append(Cause(number, "note" if entry.get("reproducible") is False else str(entry["severity"]),
                            str(entry["oracle"]), 1 + len(entry.get("also_on") or ()), occurrences,
                            "server" if not upstream else f"SDK {str(upstream['sdk']).removeprefix('the ')}",
                            upstream["link"] if upstream else None,
                            gist(str(entry.get("message") or ""), entry.get("exception")), str(entry["target"])))
    return result
