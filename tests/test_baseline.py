"""--baseline: accepted findings do not fail a run, a stale entry does; `mcpfuzz baseline` writes the file."""

from __future__ import annotations

import json
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


def test_a_baseline_accepts_known_findings_and_a_stale_entry_fails_the_run(tmp_path: Path) -> None:
    """Write a baseline from a buggy run: the same server passes with it; once fixed, the entry is stale (exit 1)."""
    buggy = ["--", sys.executable, str(MCP_SERVER), "--bug", "method-not-found-code"]
    first = _mcpfuzz(*RUN, "--json", "report.json", *buggy, cwd=tmp_path)
    assert first.returncode == 1, first.stdout + first.stderr
    wrote = _mcpfuzz("baseline", "report.json", "-o", "baseline.json", "--reason", "upstream SDK", cwd=tmp_path)
    assert wrote.returncode == 0 and "1 with a transcript" in wrote.stdout, wrote.stdout + wrote.stderr
    entries = json.loads((tmp_path / "baseline.json").read_text())["entries"]
    assert [(e["oracle"], e["reason"]) for e in entries] == [("method-not-found", "upstream SDK")]
    assert entries[0]["transcript"]["frames"]

    accepted = _mcpfuzz(*RUN, "--baseline", "baseline.json", "--json", "again.json", *buggy, cwd=tmp_path)
    assert accepted.returncode == 0, accepted.stdout + accepted.stderr
    assert "accepted in the baseline" in accepted.stdout
    (finding,) = json.loads((tmp_path / "again.json").read_text())["findings"]
    assert finding["baselined"] is True

    fixed = _mcpfuzz(*RUN, "--baseline", "baseline.json", "--no-replay", "--", sys.executable, str(MCP_SERVER),
                     cwd=tmp_path)
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


def test_with_workers_the_baseline_still_accepts_and_a_stale_entry_still_fails(tmp_path: Path) -> None:
    """Only the lead replays the baseline's transcripts: the merged run keeps its verdicts, stale entries too."""
    buggy = ["--", sys.executable, str(MCP_SERVER), "--bug", "method-not-found-code"]
    first = _mcpfuzz(*RUN, "--json", "report.json", *buggy, cwd=tmp_path)
    assert first.returncode == 1, first.stdout + first.stderr
    wrote = _mcpfuzz("baseline", "report.json", "-o", "baseline.json", cwd=tmp_path)
    assert wrote.returncode == 0, wrote.stdout + wrote.stderr
    workers = ["--workers", "2", "--baseline", "baseline.json"]
    accepted = _mcpfuzz(*RUN, *workers, "--json", "again.json", *buggy, cwd=tmp_path)
    assert accepted.returncode == 0, accepted.stdout + accepted.stderr
    (finding,) = json.loads((tmp_path / "again.json").read_text())["findings"]
    assert finding["baselined"] is True
    fixed = _mcpfuzz(*RUN, *workers, "--no-replay", "--", sys.executable, str(MCP_SERVER), cwd=tmp_path)
    assert fixed.returncode == 1, fixed.stdout + fixed.stderr
    assert "stale baseline entry" in fixed.stdout and "Traceback" not in fixed.stdout + fixed.stderr
