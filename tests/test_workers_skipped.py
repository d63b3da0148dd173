"""`run --workers N` starts its worker processes only when there is a search to split between them."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from mcpfuzz.engine.config import RunConfig
from mcpfuzz.engine.run_workers import no_search_work
from tests.conftest import SERVERS_DIR, run_cli

pytestmark = pytest.mark.process

CLEAN = SERVERS_DIR / "mcp_server.py"


def test_protocol_phases_alone_run_in_one_process_and_say_so(tmp_path: Path) -> None:
    """Only the catalogue asked for: no search, so no worker; one line says why, and the report has no workers."""
    result = run_cli(["run", "--workers", "2", "--phases", "catalogue", "--budget", "60", "--seed", "1",
                      "--json", "report.json", "--", sys.executable, str(CLEAN)], timeout=120, cwd=tmp_path)
    output = result.stdout + result.stderr
    assert result.returncode == 0, output
    report = json.loads((tmp_path / "report.json").read_text())
    said = [line for line in output.splitlines() if "no worker process is started" in line]
    assert len(said) == 1 and "no search phase (fuzz, stateful) in --phases" in said[0], output
    assert "workers" not in report["stats"], report["stats"]  # one process ran: nothing to merge
    assert report["stats"]["phases"]["catalogue"] > 0  # the run itself went on


def test_which_runs_have_search_work_for_workers() -> None:
    base = RunConfig(command=["server"])
    assert no_search_work(base) is None
    assert no_search_work(RunConfig(command=["server"], phases=("coverage", "stateful"))) is None
    assert no_search_work(RunConfig(command=["server"], phases=("catalogue", "lifecycle", "coverage"))) \
        == "no search phase (fuzz, stateful) in --phases"
    assert no_search_work(RunConfig(command=["server"], max_examples=0)) == "--max-examples 0 draws no example"
