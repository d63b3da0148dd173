"""Servers that declare or send too much: 10,000 tools, an enum of 50,000 values, 3,000 required
properties, a flood of requests to the client.

Preparing such schemas once took longer than any budget (and ignored SIGTERM), and a flood of server
requests took mcpfuzz to 700 MB and twice its budget; now preparing takes milliseconds per schema (one
preparation for the targets of an equal schema) and stops between two targets when the run is cancelled,
schemas that cannot be drawn from in reasonable time are skipped with a warning, and the answers to server
requests go out from one task through a bounded queue.
"""

from __future__ import annotations

import contextlib
import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest

from tests.conftest import CLI, HOSTILE, cli_env, kill_leftovers, leftover_processes, run_cli

pytestmark = pytest.mark.slow

BUDGET = 15
# The run's own promise is its budget; the margin only catches a run that goes on regardless of it (generous: a
# loaded machine may take seconds to start Python, prepare 10,000 schemas or shut a server down).
MARGIN = 60


@pytest.mark.parametrize(("mode", "called"), [("many-tools", True), ("huge-enum", True), ("many-required", False)])
def test_a_server_that_declares_too_much_is_fuzzed_within_the_budget(tmp_path: Path, mode: str, called: bool) -> None:
    started = time.monotonic()
    result = run_cli(["run", "--budget", str(BUDGET), "--json", "report.json", "--events", "events.ndjson", "--",
                      sys.executable, str(HOSTILE), mode], cwd=tmp_path, timeout=BUDGET + 2 * MARGIN)
    took = time.monotonic() - started
    assert took < BUDGET + MARGIN, took
    assert result.returncode in (0, 1), result.stdout + result.stderr
    assert "Traceback" not in result.stderr
    report = json.loads((tmp_path / "report.json").read_text())
    assert report["error"] is None
    coverage = next((phase for phase in report["stats"]["plan"]["phases"] if phase["name"] == "coverage"), {})
    if called:  # once the coverage phase has had a second, it has called: a starved machine may spend the budget before
        assert report["stats"]["tool_calls"] > 0 or coverage.get("seconds", 0.0) < 1.0, coverage
    else:
        assert report["stats"]["tool_calls"] == 0, report["stats"]
    if mode == "many-tools":  # every one of the 10,000 tools is prepared: none is skipped
        events = [json.loads(line) for line in (tmp_path / "events.ndjson").read_text().splitlines()]
        planned = next(event for event in events if event["event"] == "TargetsPlanned")
        assert len(planned["fuzzed"]) == 10_000 and planned["skipped"] == []
    if mode == "many-required":
        assert "the schema has 3000 properties" in result.stdout


def test_sigterm_while_targets_are_prepared_stops_the_run_at_once(tmp_path: Path) -> None:
    """10,000 tools and a long budget: SIGTERM after the lifecycle phase (targets prepared, or being prepared, and
    called) ends the run with its report, in seconds."""
    events = tmp_path / "events.ndjson"
    process = subprocess.Popen([*CLI, "run", "--budget", "600", "--json", "report.json", "--events", str(events),
                                "--", sys.executable, str(HOSTILE), "many-tools"], cwd=tmp_path, env=cli_env(),
                               stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 120
        lifecycle_done = False
        while time.monotonic() < deadline and not lifecycle_done:
            time.sleep(0.2)
            lines = events.read_text().splitlines() if events.exists() else []
            done = [json.loads(line) for line in lines if '"CaseDone"' in line]
            lifecycle_done = sum(1 for event in done if event["phase"] == "lifecycle") == 6  # its six cases
        assert lifecycle_done, "the lifecycle phase never finished"
        time.sleep(1.0)
        process.send_signal(signal.SIGTERM)
        stopped_at = time.monotonic()
        _, stderr = process.communicate(timeout=2 * MARGIN)
        assert time.monotonic() - stopped_at < MARGIN
    finally:
        if process.poll() is None:
            process.kill()
    survivors = leftover_processes("many-tools")
    kill_leftovers("many-tools")
    assert not survivors, survivors
    kinds = [json.loads(line)["event"] for line in events.read_text().splitlines()]
    assert kinds[-1] == "RunFinished"
    report = json.loads((tmp_path / "report.json").read_text())
    assert report["stopped"] == "interrupted"
    assert "Traceback" not in stderr


def test_a_flood_of_server_requests_leaves_mcpfuzz_small_and_on_time(tmp_path: Path) -> None:
    process = subprocess.Popen([*CLI, "run", "--budget", str(BUDGET), "--json", "report.json", "--", sys.executable,
                                str(HOSTILE), "flood-requests"], cwd=tmp_path, env=cli_env(),
                               stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    started, peak = time.monotonic(), 0
    watched = psutil.Process(process.pid)
    try:
        while process.poll() is None and time.monotonic() - started < BUDGET + 2 * MARGIN:
            try:
                peak = max(peak, watched.memory_info().rss)
            except psutil.Error:
                break
            time.sleep(0.1)
        _, stderr = process.communicate(timeout=60)
    finally:
        if process.poll() is None:
            process.kill()
        kill_leftovers("flood-requests")
    assert time.monotonic() - started < BUDGET + MARGIN
    assert peak < 250 * 2**20, f"peak RSS {peak / 2**20:.0f} MB"
    assert "Traceback" not in stderr
    report = json.loads((tmp_path / "report.json").read_text())
    assert report["error"] is None


def test_an_http_server_that_accepts_and_never_answers_is_unusable_not_clean(tmp_path: Path) -> None:
    """Before: exit 0 and "INCOMPLETE" after the whole budget, as if nothing were wrong."""
    import socket
    import threading

    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(64)
    accepted: list[socket.socket] = []

    def accept_forever() -> None:
        while True:
            try:
                accepted.append(listener.accept()[0])
            except OSError:
                return

    threading.Thread(target=accept_forever, daemon=True).start()
    url = f"http://127.0.0.1:{listener.getsockname()[1]}/mcp"
    started = time.monotonic()
    try:
        result = run_cli(["run", url, "--budget", "8", "--timeout", "2", "--json", "report.json"], cwd=tmp_path,
                         timeout=8 + 2 * MARGIN)
    finally:
        listener.close()
        for connection in accepted:
            connection.close()
    assert time.monotonic() - started < 8 + MARGIN
    assert result.returncode == 2, result.stdout + result.stderr
    assert "did not finish the handshake within the budget" in result.stdout + result.stderr
    assert "Traceback" not in result.stderr
    report = json.loads((tmp_path / "report.json").read_text())
    assert report["stopped"] == "budget" and "did not finish the handshake" in report["error"]


def test_initialize_answered_twice_is_found_verified_and_replays_failed_every_time(tmp_path: Path) -> None:
    """The second answer comes 50 ms after the first: verification and replay wait for it (a barrier), so
    the finding is reproducible and its transcript replays FAILED each time, not by luck."""
    result = run_cli(["run", "--budget", "30", "--phases", "lifecycle", "--json", "report.json", "--", sys.executable,
                      str(HOSTILE), "double-init"], cwd=tmp_path, timeout=120)
    assert result.returncode == 1, result.stdout + result.stderr
    findings = json.loads((tmp_path / "report.json").read_text())["findings"]
    repeats = [f for f in findings if f["oracle"] == "single-response"]
    assert repeats and all(f["reproducible"] is True for f in repeats), findings
    for _ in range(4):
        replay = run_cli(["replay", repeats[0]["corpus_path"]], cwd=tmp_path, timeout=60)
        assert replay.returncode == 1 and "FAILED" in replay.stdout, replay.stdout + replay.stderr


def test_numbers_json_allows_are_answers_and_numbers_it_does_not_are_one_finding(tmp_path: Path) -> None:
    """A 5,000-digit integer in a result is valid JSON (no finding); NaN is not JSON: one response-schema."""
    # The two phases end by their work; the budget is only a bound.
    result = run_cli(["run", "--budget", "240", "--phases", "catalogue,coverage", "--json", "report.json", "--",
                      sys.executable, str(HOSTILE), "odd-numbers"], cwd=tmp_path, timeout=300)
    report = json.loads((tmp_path / "report.json").read_text())
    # The minimal server is lax about malformed frames (catalogue findings); the numbers are what is judged here.
    numbers = [f for f in report["findings"] if f["oracle"] in ("response-schema", "no-hang", "stdout-clean")]
    assert [(f["oracle"], f["severity"]) for f in numbers] == [("response-schema", "medium")], numbers
    assert "NaN" in numbers[0]["message"] and "not JSON" in numbers[0]["message"]
    assert report["stats"]["tool_calls"] > 0 and "Traceback" not in result.stderr


@pytest.mark.parametrize("mode", ["huge-body", "slowloris", "endless-sse"])
def test_an_http_server_that_floods_trickles_or_streams_forever_is_bounded(tmp_path: Path, mode: str) -> None:
    """A 100 MB refusal, a response trickled a byte at a time, an SSE stream that never ends: mcpfuzz ends within
    its budget, says what is wrong (exit 2: nothing could be tested), writes its report, stays small."""
    server = subprocess.Popen([sys.executable, str(HOSTILE.parent / "hostile_http.py"), mode], stdout=subprocess.PIPE,
                              text=True, start_new_session=True)
    try:
        assert server.stdout is not None
        port = server.stdout.readline().strip().removeprefix("port=")
        started = time.monotonic()
        run = subprocess.Popen([*CLI, "run", f"http://127.0.0.1:{port}/mcp", "--budget", "8", "--timeout", "2",
                                "--json", "report.json"], cwd=tmp_path, env=cli_env(), stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True)
        peak = 0.0
        while run.poll() is None and time.monotonic() - started < 8 + 2 * MARGIN:
            with contextlib.suppress(psutil.Error):
                peak = max(peak, psutil.Process(run.pid).memory_info().rss / 2**20)
            time.sleep(0.1)
        stdout, stderr = run.communicate(timeout=30)
    finally:
        server.kill()
        server.wait()
    assert time.monotonic() - started < 8 + MARGIN, stdout
    assert run.returncode == 2, stdout + stderr
    assert "Traceback" not in stderr
    report = json.loads((tmp_path / "report.json").read_text())
    assert report["error"]
    assert peak < 300, f"mcpfuzz reached {peak:.0f} MB"
