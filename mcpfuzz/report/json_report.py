"""The JSON report, version 1 (README.md's "JSON report" is its contract: fields are only ever added)."""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path

from mcpfuzz.engine.config import RunConfig
from mcpfuzz.engine.events import Finding, RunFinished
from mcpfuzz.jsonrpc.case_json import frame_to_json
from mcpfuzz.oracles.base import Severity
from mcpfuzz.oracles.crash_signature import exception_line
from mcpfuzz.report.codes import code_of
from mcpfuzz.report.reproduce import finding_reproduction
from mcpfuzz.transport.connect import ServerTarget
from mcpfuzz.transport.target import ServerKind

REPORT_VERSION = 1


def finding_json(finding: Finding, command: ServerTarget, corpus_path: str | None = None) -> dict:
    """One finding as the contract shapes it (plus extra fields that help a reader)."""
    if finding.rule:
        reproduce, notes = rerun_command(command, "lint"), ["a lint problem: `mcpfuzz lint` shows it again"]
    elif finding.observed:
        reproduce, notes = rerun_command(command), ["seen over many requests, not on one frame: no transcript "
                                                    "replays it; run mcpfuzz on the server again to see it"]
    else:
        reproduce, notes = finding_reproduction(command, finding)
    return {
        "oracle": finding.oracle,
        "code": code_of(finding.oracle) or None,
        "severity": str(finding.severity),
        "tool": finding.tool,
        "message": finding.message,
        # A crash's exception line (the last line of a Python traceback, a JavaScript `Error:` line...).
        "exception": exception_line(finding.stderr_tail) or None if finding.oracle == "no-crash" else None,
        "title": finding.title,
        "target": finding.target,
        "also_on": list(finding.also_on),
        # Where the cause showed (up to 1,000, in the order seen) and how many distinct places that was in all.
        "occurrences": [{"target": o.target, **({"detail": o.detail} if o.detail else {})}
                        for o in finding.occurrences],
        "occurrence_count": max(finding.occurrence_count, len(finding.occurrences)),
        "also_judged": list(finding.also_judged),
        "grouped": list(finding.grouped),
        "case": finding.case_title,
        "expected": finding.expected,
        "received": list(finding.received),
        "fingerprint": finding.fingerprint,
        "baselined": finding.baselined,
        "upstream": None if finding.upstream is None else {
            "sdk": finding.upstream.sdk, "behaviour": finding.upstream.behaviour, "link": finding.upstream.link},
        "reproducible": finding.reproducible,
        "new": not finding.known,
        "observed": finding.observed,
        "reproducer": {"frames": [frame_to_json(f) for f in finding.frames], "shell": reproduce, "notes": notes},
        "corpus_path": corpus_path,
        "rule": finding.rule,
        # Where the fix goes: `*` the whole server, `tool/*` every target of a kind, else the finding's target.
        "scope": finding.where,
        # The cause's distinct evidence (a noise line's shape, each target it showed on): up to 5, each counted,
        # with one example and the frames that showed it; `sample_count` how many distinct ones there were.
        "samples": [{"evidence": s.evidence, "count": s.count, "target": s.target, "detail": s.detail,
                     "frames": [frame_to_json(f) for f in s.frames]} for s in finding.samples],
        "sample_count": max(finding.sample_count, len(finding.samples)),
    }


def entry_fails(entry: dict, fail_on: str) -> bool:
    """`counts_toward_fail_on` for a finding of the JSON report (a note, `reproducible: false`, never fails)."""
    return (Severity.parse(entry["severity"]) >= Severity.parse(fail_on) and not entry.get("baselined")
            and entry.get("reproducible") is not False)


def rerun_command(command: ServerTarget, verb: str = "run") -> str:
    """`mcpfuzz run` (or `lint`) on the same server (header values left out; a handler in memory by its label)."""
    import shlex

    if command.kind is ServerKind.URL:
        launch = f" --launch {shlex.quote(shlex.join(command.launch))}" if command.launch else ""
        return f"mcpfuzz {verb} {shlex.quote(command.url)}{launch}{_env_options(command.env_names)}"
    if command.kind is ServerKind.COMMAND:
        return f"mcpfuzz {verb}{_env_options(command.env_names)} -- {command.label}"
    return f"mcpfuzz {verb} -- {command.label}"


def _env_options(env_names: tuple[str, ...]) -> str:
    """` --env NAME="$NAME"` for each variable the server ran with: the value comes from the user's shell."""
    import shlex

    return "".join(f' --env {name}="${name}"' if name.isidentifier() and name.isascii()
                   else f" --env {shlex.quote(name + '=...')}" for name in env_names)


def report_json(config: RunConfig, finished: RunFinished) -> dict:
    """The whole report."""
    from mcpfuzz import __version__

    return {
        "version": REPORT_VERSION,
        "mcpfuzz": __version__,
        "seed": config.seed,
        "server": config.server_label,
        "protocolVersion": finished.protocol_version,
        "era": finished.era,
        # The MCP stack the server runs (name, version, evidence, built_on), null when unknown.
        "stack": finished.stack,
        "stats": finished.stats.as_dict(),
        "stopped": finished.stopped or None,
        "error": finished.error or None,
        "untested": finished.untested or None,
        "failOn": str(config.fail_on),
        "security": config.security,
        "staleBaseline": list(finished.stale_baseline),
        "findings": [finding_json(f, config.target, finished.corpus_paths.get(f.fingerprint))
                     for f in finished.findings],
        # mcpfuzz's own errors: each ended one case (the run went on); one entry per distinct error, counted.
        "internal_errors": [error.as_dict() for error in finished.internal_errors],
    }


def write_atomic(path: Path, text: str) -> None:
    """Write a file so that readers see the old or the new content, never half of it."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def write_report_data(path: Path, report: dict) -> None:
    """Write a report already built by `report_json` atomically."""
    write_atomic(path, report_text(report))


def report_text(report: dict) -> str:
    """The report as JSON text: its outline indented, each finding on a line of its own."""
    return indented_json(report, 2) + "\n"


def indented_json(value: object, levels: int, depth: int = 0) -> str:
    """JSON text indented for `levels` levels of objects and arrays, each value below on one line.

    Python's fast JSON encoder writes no indentation; the indenting one takes seconds for a thousand findings, so
    only the outline a reader scans (the report's parts, its list of findings) is indented.
    """
    if levels <= 0 or not isinstance(value, dict | list) or not value:
        return json.dumps(value)
    inner, outer = "  " * (depth + 1), "  " * depth
    if isinstance(value, dict):
        parts = [f"{inner}{json.dumps(str(name))}: {indented_json(item, levels - 1, depth + 1)}"
                 for name, item in value.items()]
        return "{\n" + ",\n".join(parts) + f"\n{outer}}}"
    parts = [inner + indented_json(item, levels - 1, depth + 1) for item in value]
    return "[\n" + ",\n".join(parts) + f"\n{outer}]"
