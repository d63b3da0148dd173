"""The census's pure parts: a row summarised from a saved run's events, report and console; totals; sections.

Run: python -m pytest benchmarks/test_census.py (not in the default testpaths: it is the benchmark's).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

pytestmark = pytest.mark.unit

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import census  # noqa: E402
import field  # noqa: E402

# A run's events as mcpfuzz writes them (trimmed to the fields the census reads), from a 20 s run.
EVENTS: list[dict[str, Any]] = [
    {"event": "RunStarted", "timestamp": 100.0},
    {"event": "Notice", "timestamp": 100.0, "level": "info",
     "message": "built on the TypeScript SDK 1.32.2 (/cache/npm/x/node_modules/@modelcontextprotocol/sdk/package.json)"
                ": findings that are its known behaviours are marked as such"},
    {"event": "PhaseStarted", "timestamp": 100.0, "name": "probe"},
    {"event": "ProbeDone", "timestamp": 101.0, "era": "legacy", "protocol_version": "2025-11-25",
     "tools": ["echo", "add", "wipe", "launch"]},
    {"event": "Notice", "timestamp": 105.0, "level": "warning",
     "message": "catalogue: 57 of 58 cases left out to keep the run's time for calling targets"},
    {"event": "TargetsPlanned", "timestamp": 106.0, "fuzzed": ["tool/echo", "tool/add"],
     "skipped": [["tool/wipe", "--exclude-tool"], ["tool/launch", "no time left to call it"]]},
    {"event": "PhaseStarted", "timestamp": 110.0, "name": "coverage"},
    {"event": "CaseDone", "timestamp": 111.0, "phase": "coverage", "case": {"target": "tool/echo"}},
    {"event": "CaseDone", "timestamp": 112.0, "phase": "fuzz", "case": {"target": "tool/echo"}},
    {"event": "CaseDone", "timestamp": 112.5, "phase": "catalogue", "case": {"target": "tool/add"}},
    {"event": "PhaseStarted", "timestamp": 115.0, "name": "flight"},
    {"event": "RunFinished", "timestamp": 120.0, "untested": ""},
]
REPORT: dict[str, Any] = {
    "untested": None, "error": None,
    "findings": [{"oracle": "stdout-clean"}, {"oracle": "stdout-clean"}, {"oracle": "stdout-clean"},
                 {"oracle": "parse-error", "upstream": {"sdk": "the TypeScript SDK 1.32.2"}}],
}
CONSOLE = """mcpfuzz 0.1.0 · server: x
Traceback (most recent call last):
  File "mcpfuzz/engine/runner.py", line 1, in run
RuntimeError: mcpfuzz bug in the random frames, please report it: boom
"""


def summarised(events: list[dict[str, Any]] = EVENTS, report: dict[str, Any] = REPORT, console: str = CONSOLE,
               exit_status: int | None = 1) -> census.Row:
    row = census.Row("x 1.0", "stdio", "npm:x==1.0", exit_status=exit_status)
    census.fill_row(row, events, report, console, {"tool/wipe"})
    return row


def test_a_row_reads_the_handshake_and_the_stack_mcpfuzz_detected() -> None:
    row = summarised()
    assert row.handshake == "2025-11-25 (legacy)"
    assert row.stack_detected == "the TypeScript SDK 1.32.2"
    assert row.untested == ""


def test_the_detected_stack_loses_where_it_was_read_even_when_that_was_redacted() -> None:
    events = [{"event": "Notice", "message": "built on FastMCP 4.2.3 (on the Python SDK (mcp) 2.3.0) (<redacted>>pypi/"
                                             "x/mcp-2.3.0.dist-info): findings that are its known behaviours"}]
    assert census.detected_stack(events) == "FastMCP 4.2.3 (on the Python SDK (mcp) 2.3.0)"


def test_targets_called_count_calling_phases_only_and_leave_excluded_targets_out() -> None:
    row = summarised()
    # wipe was excluded by the user: not callable. launch was skipped for time: callable, never called. add was
    # only reached by a catalogue case, which is not a call of the target.
    assert (row.called, row.callable) == (1, 3)
    assert row.uncalled == {"tool/add": "planned, never called", "tool/launch": "no time left to call it"}
    assert row.call_share == pytest.approx(5 / 20)


def test_findings_are_counted_by_oracle_and_the_largest_flood_is_named() -> None:
    row = summarised()
    assert row.findings == 4
    assert row.top_oracle == ("stdout-clean", 3)
    assert row.upstream_marked == 1


def test_internal_errors_are_tracebacks_bug_reports_and_unexpected_exit_statuses() -> None:
    assert len(summarised().internal_errors) == 2  # the traceback's first line and the bug report's
    assert summarised(console="", exit_status=3).internal_errors == ["exit status 3"]
    assert summarised(console="", exit_status=2).internal_errors == []  # 2: a usage error or unusable server


def test_a_run_without_a_report_says_why_from_its_console() -> None:
    events = [{"event": "RunStarted", "timestamp": 1.0}]
    row = summarised(events=events, report={}, console="error: the server exited before answering initialize\n")
    assert row.handshake == "no"
    assert row.untested == "no report: error: the server exited before answering initialize"
    assert census.started(row) == "no"
    row.sdk_client = "ok: 3 tools (2025-11-25)"
    assert census.started(row) == "yes"


def test_a_report_that_says_what_went_untested_is_quoted() -> None:
    row = summarised(report={**REPORT, "untested": "no target was called:\n  the server never answered"})
    assert row.untested == "no target was called: the server never answered"


def test_leftovers_are_the_lines_the_sandbox_wrote(tmp_path: Path) -> None:
    assert census.read_leftovers(tmp_path / "missing.txt") is None  # the sandbox was killed before it listed
    listing = tmp_path / "leftovers.txt"
    listing.write_text("7 node /x/server.js \n\n9 python -c import x\nx.run() \n")
    assert census.read_leftovers(listing) == ["7 node /x/server.js ", "9 python -c import x"]


def test_totals_count_each_target_of_the_issue() -> None:
    good = summarised(console="")
    good.sdk_client, good.over_budget_s, good.leftovers = "ok: 4 tools", 3.0, []
    bad = summarised(events=[], report={}, console="")
    bad.sdk_client, bad.over_budget_s, bad.leftovers = "ok: 2 tools", 40.0, ["7 node server.js"]
    not_installed = census.Row("y 1.0", "stdio", "pypi:y==1.0", note="install failed")  # never ran at all
    summary = census.totals([good, bad, not_installed])
    assert (summary.servers, summary.sdk_client_ok, summary.tested, summary.sdk_ok_untested) == (3, 2, 1, 1)
    assert (summary.over_budget, summary.left_behind, summary.internal_errors) == (1, 1, 0)
    assert summary.every_target_called == 0  # good left launch and add uncalled


def test_a_section_is_replaced_between_its_markers_and_appended_when_missing(tmp_path: Path) -> None:
    doc = tmp_path / "census.md"
    doc.write_text("# Census\n\nintro\n")
    census.write_section(doc, "before", "| a |")
    census.write_section(doc, "before", "| b |")
    census.write_section(doc, "after", "| c |")
    text = doc.read_text()
    assert text.count("<!-- census:before -->") == 1 and "| a |" not in text
    assert text.index("| b |") < text.index("| c |") and text.startswith("# Census\n\nintro\n")


def test_the_confinement_makes_the_root_read_only_after_binding_the_writable_folders() -> None:
    script = field.Confinement((Path("/w/row"),), Path("/w/row/left.txt")).script()
    assert script.index("mount -t tmpfs tmpfs /tmp") < script.index("mount --bind /w/row /w/row")
    assert script.index("mount --bind /w/row /w/row") < script.index("mount -o remount,bind,ro /")
    assert "> /w/row/left.txt" in script and "exit $status" in script
    assert field.Confinement().script() == 'ip link set lo up && "$@"'  # the field benchmark's sandbox, unchanged


def test_every_census_server_has_a_unique_row_name_and_http_rows_a_port() -> None:
    keys = [spec.key for spec in census.SERVERS]
    assert len(keys) == len(set(keys)) and len(keys) >= 40
    http = [spec for spec in census.SERVERS if spec.transport is field.Transport.HTTP]
    assert len(http) >= 8
    # {port} in both the URL and the launch line, or in neither (a server that picks its own port)
    assert all(("{port}" in spec.url) == any("{port}" in word for word in spec.command) for spec in http)
