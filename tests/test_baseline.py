"""--baseline: accepted findings do not fail a run, a stale entry does; `mcpfuzz baseline` writes the file."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import cli_env
from tests.engine_runs import MCP_SERVER

pytestmark = pytest.mark.slow

CLI = [sys.executable, "-m", "mcpfuzz.cli"]
RUN = ["run", "--budget", "30", "--timeout", "2", "--phases", "catalogue,lifecycle", "--seed", "1"]


def _mcpfuzz(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*CLI, *args], capture_output=True, text=True, cwd=cwd, env=cli_env(), timeout=300)


BUGGY = ["--", sys.executable, str(MCP_SERVER), "--bug", "method-not-found-code"]


@pytest.fixture(scope="module")
def first_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder after a buggy run (report.json, its corpus) and `mcpfuzz baseline` of its report (baseline.json)."""
    folder = tmp_path_factory.mktemp("first-run")
    first = _mcpfuzz(*RUN, "--json", "report.json", *BUGGY, cwd=folder)
    assert first.returncode == 1, first.stdout + first.stderr
    wrote = _mcpfuzz("baseline", "report.json", "-o", "baseline.json", "--reason", "upstream SDK", cwd=folder)
    assert wrote.returncode == 0 and "1 with a transcript" in wrote.stdout, wrote.stdout + wrote.stderr
    return folder


def after_first_run(first_run: Path, tmp_path: Path) -> Path:
    """A copy of the first run's folder for one test's runs (each run replays the corpus it finds there)."""
    shutil.copytree(first_run, tmp_path, dirs_exist_ok=True)
    return tmp_path


def test_a_baseline_accepts_known_findings_and_a_stale_entry_fails_the_run(first_run: Path, tmp_path: Path) -> None:
    """Write a baseline from a buggy run: the same server passes with it; once fixed, the entry is stale (exit 1)."""
    folder = after_first_run(first_run, tmp_path)
    entries = json.loads((folder / "baseline.json").read_text())["entries"]
    assert [(e["oracle"], e["reason"]) for e in entries] == [("method-not-found", "upstream SDK")]
    assert entries[0]["transcript"]["frames"]

    accepted = _mcpfuzz(*RUN, "--baseline", "baseline.json", "--json", "again.json", *BUGGY, cwd=folder)
    assert accepted.returncode == 0, accepted.stdout + accepted.stderr
    assert "accepted in the baseline" in accepted.stdout
    (finding,) = json.loads((folder / "again.json").read_text())["findings"]
    assert finding["baselined"] is True

    fixed = _mcpfuzz(*RUN, "--baseline", "baseline.json", "--no-replay", "--", sys.executable, str(MCP_SERVER),
                     cwd=folder)
    assert fixed.returncode == 1, fixed.stdout + fixed.stderr
    assert "stale baseline entry" in fixed.stdout and "no longer reproduces" in fixed.stdout


def test_a_baseline_that_cannot_be_read_stops_the_run_with_a_tip(tmp_path: Path) -> None:
    """A missing or foreign file is a usage error (exit 2) saying what is wrong and how to make one."""
    missing = _mcpfuzz(*RUN, "--baseline", "nope.json", "--", sys.executable, str(MCP_SERVER), cwd=tmp_path)
    assert missing.returncode == 2 and "no such file" in missing.stderr and "mcpfuzz baseline" in missing.stderr
    (tmp_path / "other.json").write_text('{"findings": []}')
    foreign = _mcpfuzz(*RUN, "--baseline", "other.json", "--", sys.executable, str(MCP_SERVER), cwd=tmp_path)
    assert foreign.returncode == 2 and "not an mcpfuzz baseline" in foreign.stderr
    assert "Traceback" not in missing.stderr + foreign.stderr


def test_with_workers_the_baseline_still_accepts_and_a_stale_entry_still_fails(first_run: Path,
                                                                             tmp_path: Path) -> None:
    """Only the lead replays the baseline's transcripts: the merged run keeps its verdicts, stale entries too."""
    folder = after_first_run(first_run, tmp_path)
    workers = ["--workers", "2", "--baseline", "baseline.json"]
    accepted = _mcpfuzz(*RUN, *workers, "--json", "again.json", *BUGGY, cwd=folder)
    assert accepted.returncode == 0, accepted.stdout + accepted.stderr
    (finding,) = json.loads((folder / "again.json").read_text())["findings"]
    assert finding["baselined"] is True
    fixed = _mcpfuzz(*RUN, *workers, "--no-replay", "--", sys.executable, str(MCP_SERVER), cwd=folder)
    assert fixed.returncode == 1, fixed.stdout + fixed.stderr
    assert "stale baseline entry" in fixed.stdout and "Traceback" not in fixed.stdout + fixed.stderr
