"""A baseline: findings a team has accepted for now. They do not fail a run; an entry that no longer
reproduces does (a stale baseline hides nothing and claims a bug that is gone).

Each entry keeps the finding's transcript when one was saved, so a run replays it first and knows for
certain whether it is still there, whatever the fuzzing reaches this time.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

BASELINE_FORMAT = 1


class BaselineError(Exception):
    """A baseline file that cannot be read or written; the message says what, where and what to do."""


@dataclass(frozen=True)
class BaselineEntry:
    """One accepted finding: its fingerprint (what makes it the same bug), what it is, and its transcript."""

    fingerprint: str
    oracle: str
    target: str
    severity: str
    message: str
    reason: str = ""
    transcript: dict[str, Any] | None = field(default=None, compare=False, repr=False)

    def to_json(self) -> dict[str, Any]:
        """The entry as written to the baseline file."""
        return {"fingerprint": self.fingerprint, "oracle": self.oracle, "target": self.target,
                "severity": self.severity, "message": self.message, "reason": self.reason,
                "transcript": self.transcript}

    def describe(self) -> str:
        """`no-crash on envelope/batch (fingerprint 1a2b…)` for messages."""
        return f"{self.oracle} on {self.target} (fingerprint {self.fingerprint})"


@dataclass(frozen=True)
class Baseline:
    """The accepted findings, by fingerprint."""

    entries: tuple[BaselineEntry, ...]
    path: Path | None = None

    @property
    def fingerprints(self) -> frozenset[str]:
        """Every accepted fingerprint."""
        return frozenset(entry.fingerprint for entry in self.entries)

    def stale(self, found: set[str]) -> list[BaselineEntry]:
        """Entries whose finding this run did not see again although it could replay them."""
        return [entry for entry in self.entries if entry.fingerprint not in found and entry.transcript is not None]

    def unseen_unreplayable(self, found: set[str]) -> list[BaselineEntry]:
        """Entries not seen again that carry no transcript (observed findings): unknown, not stale."""
        return [entry for entry in self.entries if entry.fingerprint not in found and entry.transcript is None]


def load_baseline(path: Path) -> Baseline:
    """Read a baseline file; BaselineError says what is wrong with it."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise BaselineError(f"baseline {path}: no such file\ntip: write one from a report with "
                            f"`mcpfuzz baseline REPORT.json -o {path}`") from None
    except (OSError, UnicodeDecodeError, ValueError) as error:
        raise BaselineError(f"baseline {path}: not a readable JSON file ({error})") from None
    if not isinstance(data, dict) or data.get("mcpfuzz_baseline") != BASELINE_FORMAT:
        raise BaselineError(f"baseline {path}: not an mcpfuzz baseline (it needs \"mcpfuzz_baseline\": "
                            f"{BASELINE_FORMAT})\ntip: write one with `mcpfuzz baseline REPORT.json -o {path}`")
    raw = data.get("entries")
    if not isinstance(raw, list):
        raise BaselineError(f"baseline {path}: \"entries\" must be a list")
    entries = []
    for index, item in enumerate(raw):
        if not isinstance(item, dict) or not isinstance(item.get("fingerprint"), str):
            raise BaselineError(f"baseline {path}: entry {index} needs a string \"fingerprint\"")
        transcript = item.get("transcript")
        entries.append(BaselineEntry(
            item["fingerprint"], str(item.get("oracle", "")), str(item.get("target", "")),
            str(item.get("severity", "")), str(item.get("message", "")), str(item.get("reason", "")),
            transcript if isinstance(transcript, dict) else None))
    return Baseline(tuple(entries), path)


def entries_from_report(report: Any, report_path: Path) -> list[BaselineEntry]:
    """Every finding of a JSON report as a baseline entry, with its transcript when the corpus still holds it."""
    if not isinstance(report, dict) or not isinstance(report.get("findings"), list):
        raise BaselineError(f"{report_path}: not an mcpfuzz JSON report (no \"findings\" list)\n"
                            "tip: write one with `mcpfuzz run --json REPORT.json ...`")
    entries = []
    for finding in report["findings"]:
        if not isinstance(finding, dict) or not isinstance(finding.get("fingerprint"), str):
            continue
        entries.append(BaselineEntry(
            finding["fingerprint"], str(finding.get("oracle", "")), str(finding.get("target", "")),
            str(finding.get("severity", "")), str(finding.get("message", "")).splitlines()[0][:200]
            if finding.get("message") else "", "", _transcript(finding.get("corpus_path"), report_path)))
    return entries


def _transcript(corpus_path: Any, report_path: Path) -> dict[str, Any] | None:
    """The transcript a report's finding points to (relative paths from the report's folder or here)."""
    if not isinstance(corpus_path, str):
        return None
    for candidate in (Path(corpus_path), report_path.parent / corpus_path):
        try:
            data = json.loads(candidate.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, ValueError):
            continue
        if isinstance(data, dict) and data.get("case") is not None:
            return data
    return None


def write_baseline(path: Path, entries: list[BaselineEntry]) -> None:
    """Write a baseline file (sorted by fingerprint, so that it diffs well under version control)."""
    data = {"mcpfuzz_baseline": BASELINE_FORMAT,
            "entries": [e.to_json() for e in sorted(entries, key=lambda e: e.fingerprint)]}
    try:
        path.write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    except OSError as error:
        raise BaselineError(f"baseline {path}: cannot be written ({error.strerror or error})") from None
