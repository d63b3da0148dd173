"""`mcpfuzz run --workers N`: N servers searched at once, the one-off phases once, findings merged and saved once."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.conftest import (
    CLI,
    SERVERS_DIR,
    cli_env,
    kill_leftovers,
    leftover_processes,
    private_copy,
    processes_matching,
    run_cli,
)

pytestmark = pytest.mark.slow

CLEAN = SERVERS_DIR / "mcp_server.py"
TOOLS = SERVERS_DIR / "tool_server.py"
TWO_BUGS = ["--bug", "crash-at-maximum", "--bug", "crash-enum-pair"]


def run_in(folder: Path, args: list[str], server: list[str], timeout: float = 150) -> tuple[str, int, dict]:
    """`mcpfuzz run ARGS --json report.json -- SERVER` in `folder`: its output, exit status and report."""
    result = run_cli(["run", *args, "--json", "report.json", "--", *server], timeout=timeout, cwd=folder)
    output = result.stdout + result.stderr
    assert (folder / "report.json").exists(), output
    assert "Traceback" not in output, output
    return output, result.returncode, json.loads((folder / "report.json").read_text())


def test_two_workers_on_the_clean_server_both_search_and_run_the_one_off_phases_once(tmp_path: Path) -> None:
    server = private_copy(CLEAN, tmp_path)
    try:
        output, status, report = run_in(tmp_path, ["--workers", "2", "--max-examples", "1", "--budget", "300",
                                                   "--seed", "3",
                                                   "--log-frames", "frames.log", "--html", "report.html"],
                                        [sys.executable, str(server)])
        assert leftover_processes(str(server), grace=10.0) == []
    finally:
        kill_leftovers(str(server))
    assert status == 0, output
    assert report["findings"] == []
    stats = report["stats"]
    workers = stats["workers"]["per_worker"]
    assert [w["worker"] for w in workers] == [0, 1]
    assert all(w["cases"] > 0 and w["frames_sent"] > 0 for w in workers), workers
    assert stats["cases"] == sum(w["cases"] for w in workers)
    # The coverage calls are deterministic: only the lead makes them, the first call of each tool first.
    assert "coverage: the first call of 3 tools" in output, output
    assert stats["phases"]["coverage"] > 0
    # Both searched every tool, each with its own frames: worker 1 draws with seeds of its own.
    assert stats["tool_calls"] > 0 and stats["targets"]["tool/echo"] > 0
    lead, other = (tmp_path / "frames.log").read_bytes(), (tmp_path / "frames.worker1.log").read_bytes()
    assert lead and other and lead != other
    assert b'"tools/call"' in other
    # The summary's table counts both workers' calls (their cases never reach the parent one by one).
    line = next(line for line in output.splitlines() if line.strip().startswith("tool/echo"))
    assert f"{stats['targets']['tool/echo']:,} calls" in line, line
    page = (tmp_path / "report.html").read_text()
    assert f"<td><code>tool/echo</code></td><td>{stats['targets']['tool/echo']:,}</td>" in page


def test_two_workers_find_the_same_bugs_and_save_each_once(tmp_path: Path) -> None:
    server = private_copy(TOOLS, tmp_path, imports=("mcp_server.py",))
    try:
        output, status, report = run_in(tmp_path, ["--workers", "2", "--max-examples", "3", "--budget", "300",
                                                   "--seed", "11",
                                                   "--phases", "coverage,fuzz"],
                                        [sys.executable, str(server), *TWO_BUGS])
        assert leftover_processes(str(server), grace=10.0) == []
    finally:
        kill_leftovers(str(server))
    assert status == 1, output
    found = sorted((f["oracle"], f["target"]) for f in report["findings"])
    assert found == [("no-crash", "tool/create_item"), ("no-crash", "tool/search")], output
    transcripts = sorted(p.name for p in (tmp_path / "corpus").glob("*no-crash*.json"))
    assert len(transcripts) == 2, transcripts


def test_workers_with_a_url_and_no_launch_are_refused_with_the_way_out(tmp_path: Path) -> None:
    result = run_cli(["run", "--workers", "2", "http://127.0.0.1:9/mcp"], cwd=tmp_path)
    assert result.returncode == 2
    assert "a URL without --launch is one server" in result.stderr and "tip:" in result.stderr
    assert "Traceback" not in result.stderr


def test_sigterm_stops_every_worker_with_one_merged_report_and_no_process_left(tmp_path: Path) -> None:
    """A long run with two workers: SIGTERM to mcpfuzz reaches both, each stops and reports, the parent merges."""
    server = private_copy(CLEAN, tmp_path)
    events = tmp_path / "events.ndjson"
    process = subprocess.Popen([*CLI, "run", "--workers", "2", "--budget", "600", "--json", "report.json",
                                "--events", str(events), "--", sys.executable, str(server)], cwd=tmp_path,
                               env=cli_env(), stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                               stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and len(processes_matching(str(server))) < 2:
            time.sleep(0.2)  # both workers' servers are up
        assert len(processes_matching(str(server))) >= 2, "the two workers never started their servers"
        time.sleep(1.0)
        process.send_signal(signal.SIGTERM)
        _, stderr = process.communicate(timeout=90)
        assert leftover_processes(str(server), grace=10.0) == []
    finally:
        if process.poll() is None:
            process.kill()
        kill_leftovers(str(server))
    assert "Traceback" not in stderr
    report = json.loads((tmp_path / "report.json").read_text())
    assert report["stopped"] == "interrupted"
    assert [w["worker"] for w in report["stats"]["workers"]["per_worker"]] == [0, 1]
    kinds = [json.loads(line)["event"] for line in events.read_text().splitlines()]
    assert kinds[0] == "RunStarted" and kinds[-1] == "RunFinished" and kinds.count("RunFinished") == 1
