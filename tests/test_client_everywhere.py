"""The client cases beyond a plain run: a soak gives them a slice once per cycle (each worker its own), and `run
--workers N` runs them once, in the lead; both find the bugs of tests/servers/elicit_server.py, on tools, prompts
and resources alike."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import SERVERS_DIR, run_cli

pytestmark = pytest.mark.slow

ELICIT = SERVERS_DIR / "elicit_server.py"
LEGACY = ["--protocol-version", "2025-11-25"]
# Calls only: the coverage calls see the requests asking for input, the client slice follows them.
QUICK = ["--phases", "coverage,fuzz", "--seed", "11"]
ASKING = ("tool/greet", "prompt/introduce", "resource/greeting://card")


def report_of(folder: Path, command: str, args: list[str], bug: str) -> dict:
    """`mcpfuzz COMMAND ARGS --json report.json -- elicit_server.py --bug BUG` in `folder`: its report."""
    result = run_cli([command, *args, "--json", "report.json", "--", "python", str(ELICIT), "--bug", bug],
                     timeout=180, cwd=folder)
    output = result.stdout + result.stderr
    assert (folder / "report.json").exists(), output
    assert "Traceback" not in output, output
    return json.loads((folder / "report.json").read_text())


def found(report: dict) -> set[tuple[str, str]]:
    return {(finding["oracle"], finding["target"]) for finding in report["findings"]}


def test_a_soak_finds_a_call_dropped_after_an_error_answer(tmp_path: Path) -> None:
    """Legacy era: the client slice answers each elicitation with an error; the server never answers the request."""
    report = report_of(tmp_path, "soak", ["--duration", "60", "--slice", "3", "--max-findings", "3", *QUICK, *LEGACY],
                       "drops-on-error")
    assert found(report) == {("client-requests", target) for target in ASKING}


def test_a_soak_retries_every_surface_that_asks(tmp_path: Path) -> None:
    """2026-07-28: the tool, the prompt and the resource answer input_required; a tampered state is accepted by each."""
    report = report_of(tmp_path, "soak", ["--duration", "60", "--slice", "3", "--max-findings", "3", *QUICK],
                       "unsigned-state")
    assert found(report) == {("input-required", target) for target in ASKING}


def test_run_with_workers_finds_the_client_bug_once(tmp_path: Path) -> None:
    """The lead runs the client phase (a worker only searches); the finding is reported and saved once. The run
    ends by its examples: every client case runs, however long each dropped request is waited for."""
    report = report_of(tmp_path, "run", ["--workers", "2", "--max-examples", "1", *QUICK, *LEGACY], "drops-on-error")
    assert found(report) == {("client-requests", target) for target in ASKING}
    assert len(report["findings"]) == len(ASKING)
    assert len(list((tmp_path / "corpus").glob("*_client-requests_*.json"))) == len(ASKING)
