"""`--max-examples` runs repeat frame for frame, whatever the answer times: through a server whose answers stall at
random (as on a loaded machine), two runs with the same seed send the same frames, worker by worker."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from tests.conftest import SERVERS_DIR, run_cli
from tests.diffs import assert_same_lines

pytestmark = pytest.mark.slow

CLEAN = SERVERS_DIR / "mcp_server.py"
JITTERY = SERVERS_DIR / "jittery.py"


def test_the_same_seed_sends_each_worker_the_same_frames_while_answers_stall_at_random(tmp_path: Path) -> None:
    """Stalls past a second make slow answers that are timed again aside; shorter ones would steer a timed search."""
    logs = []
    for attempt in ("a", "b"):
        folder = tmp_path / attempt
        folder.mkdir()
        result = run_cli(["run", "--workers", "2", "--seed", "5", "--max-examples", "3", "--budget", "300",
                          "--phases", "fuzz,stateful", "--log-frames", "frames.log", "--json", "report.json", "--",
                          sys.executable, str(JITTERY), "--stall", "1.5", "--odds", "0.04", "--",
                          sys.executable, str(CLEAN)], timeout=420, cwd=folder)
        assert result.returncode == 0, result.stdout + result.stderr
        report = json.loads((folder / "report.json").read_text())
        assert report["stopped"] is None, report["stopped"]
        logs.append(((folder / "frames.log").read_bytes(), (folder / "frames.worker1.log").read_bytes()))
    assert_same_lines(logs[0][0], logs[1][0], what="the lead's frames")
    assert_same_lines(logs[0][1], logs[1][1], what="worker 1's frames")
    assert logs[0][0] != logs[0][1]
    assert logs[0][0].count(b'"tools/call"') > 50


def test_the_same_seed_sends_the_same_frames_whether_the_server_starts_fast_or_slow(tmp_path: Path) -> None:
    """A start measured slow (a loaded machine) once brought a standby process, which ran the fresh cases beside the
    process in use, so the next case needed no handshake: the frames of the same seed depended on the machine."""
    logs, stats = [], []
    for slow_start in ("0", "0.5"):
        folder = tmp_path / f"start-{slow_start}"
        folder.mkdir()
        result = run_cli(["run", "--seed", "5", "--max-examples", "3", "--budget", "120", "--timeout", "1",
                          "--phases", "catalogue,lifecycle", "--log-frames", "frames.log", "--json", "report.json",
                          "--", sys.executable, str(JITTERY), "--odds", "0", "--slow-start", slow_start, "--",
                          sys.executable, str(CLEAN)], timeout=300, cwd=folder)
        assert result.returncode == 0, result.stdout + result.stderr
        logs.append((folder / "frames.log").read_bytes())
        stats.append(json.loads((folder / "report.json").read_text())["stats"])
    assert_same_lines(logs[0], logs[1], what="frames")
    assert [s["warm_restarts"] for s in stats] == [stats[0]["warm_restarts"]] * 2 and stats[0]["warm_restarts"] > 0
    assert logs[0].count(b'"method":"server/discover"') > 10
