"""Markdown summary of a run for a CI step summary ($GITHUB_STEP_SUMMARY), built from the JSON report."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

from mcpfuzz.oracles.base import Severity
from mcpfuzz.report.json_report import entry_fails, write_atomic

SEVERITY_ORDER = ("critical", "high", "medium", "low")
# GitHub caps a step summary at 1 MiB; a long table is also useless to read. The JSON report has all.
MAX_ROWS = 100
MAX_CELL = 300
# Characters with a meaning in GitHub-flavoured Markdown tables or inline HTML; a backslash makes
# each literal (CommonMark 2.4: any ASCII punctuation may be escaped).
_MARKDOWN = re.compile(r"([\\`*_\[\]<>|~&#!])")
_CONTROL = re.compile("[\x00-\x1f\x7f\ud800-\udfff]")


def plain(text: str) -> str:
    """Text on one line with control characters and lone surrogates made visible (`\\x1b`)."""
    return _CONTROL.sub(lambda m: " " if m.group() in "\n\r\t" else f"\\u{ord(m.group()):04x}", text)


def cell(text: str) -> str:
    """A table cell that renders as the text itself, cut to a readable length."""
    text = plain(text)
    if len(text) > MAX_CELL:
        text = text[:MAX_CELL - 1] + "…"
    return _MARKDOWN.sub(r"\\\1", text)


def code(text: str) -> str:
    """An inline code span when the text allows one, escaped text otherwise (a `|` would split the cell)."""
    text = plain(text)
    return f"`{text}`" if text and not re.search(r"[`|]", text) and len(text) <= MAX_CELL else cell(text)


def fenced(lines: list[str]) -> list[str]:
    """A code block whose fence is longer than any backtick run inside it."""
    longest = max((len(run) for line in lines for run in re.findall("`+", line)), default=0)
    fence = "`" * max(3, longest + 1)
    return [fence, *(plain(line) for line in lines), fence]


def count(number: int, noun: str) -> str:
    """`1 finding`, `3 findings`."""
    return f"{number} {noun}" if number == 1 else f"{number} {noun}s"


def summary_markdown(report: dict) -> str:
    """Totals per severity, the findings, the seed and how to reproduce."""
    findings = report["findings"]
    fail_on = report["failOn"]
    failing = [f for f in findings if entry_fails(f, fail_on)]
    verdict = "error" if report["error"] and not failing else "failed" if failing else "passed"
    stats = report["stats"]
    protocol = (f"protocol {code(report['protocolVersion'])} ({report['era']} era)" if report["protocolVersion"]
                else "no protocol negotiated")
    lines = [f"## mcpfuzz: {verdict}", ""]
    lines.append(f"**{count(len(findings), 'finding')}**, {len(failing)} at or above `--fail-on {fail_on}` · "
                 f"server {code(report['server'])} · {protocol} · seed `{report['seed']}` · "
                 f"{count(stats['cases'], 'case')}, {count(stats['tool_calls'], 'tool call')} in "
                 f"{stats['duration_s']:.1f} s")
    if report["stopped"]:
        lines.append(f"The run stopped early ({report['stopped']}): what it found so far is below.")
    if report["error"]:
        lines += ["", "**The server could not be tested:**", "", *fenced(report["error"].splitlines())]
    lines += ["", "| severity | findings |", "| --- | ---: |"]
    lines += [f"| {name} | {sum(1 for f in findings if f['severity'] == name)} |" for name in SEVERITY_ORDER]
    if findings:
        ordered = sorted(findings, key=lambda f: -Severity.parse(f["severity"]))
        lines += ["", "| severity | oracle | target | message | fix belongs to |", "| --- | --- | --- | --- | --- |"]
        lines += [f"| {f['severity']} | {code(f['oracle'])} | {code(f['target'])} | {cell(_gist(f))} | "
                  f"{_owner(f)} |" for f in ordered[:MAX_ROWS]]
        if len(ordered) > MAX_ROWS:
            lines.append(f"\n{len(ordered) - MAX_ROWS} more findings are in the JSON and SARIF reports.")
    lines += ["", "### Reproduce", ""]
    replays = [f"mcpfuzz replay {shlex.quote(f['corpus_path'])}" for f in findings if f.get("corpus_path")]
    again = f"mcpfuzz run --seed {report['seed']} -- {report['server']}"
    if replays:
        lines.append("Replay the saved failures on a fresh server (the corpus folder must be there), or run "
                     "again with the same seed:")
    else:
        lines.append("Run again with the same seed:")
    lines += ["", *fenced([*replays[:MAX_ROWS], again])]
    return "\n".join(lines) + "\n"


def _gist(finding: dict) -> str:
    """The message's first line, and for a crash its exception line (not the top of a stderr tail)."""
    first = finding["message"].splitlines()[0] if finding["message"] else ""
    exception = finding.get("exception")
    return f"{first}: {exception}" if exception else first


def _owner(finding: dict) -> str:
    """`this server`, or the SDK with a link to the upstream thread; `(baseline)` when accepted."""
    upstream = finding.get("upstream")
    owner = f"[{upstream['sdk']}]({upstream['link']})" if upstream else "this server"
    return owner + (" (baseline)" if finding.get("baselined") else "")


def write_summary(path: Path, report: dict) -> None:
    """Write the Markdown summary atomically (a step summary file is read after the step ends)."""
    write_atomic(path, summary_markdown(report))
