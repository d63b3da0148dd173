"""mcpfuzz's own process handling against hostile servers, interrupts and the budget."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import psutil
import pytest

from tests.conftest import (
    CLI,
    HOSTILE,
    MCP_SERVER,
    SERVERS_DIR,
    cli_env,
    kill_leftovers,
    leftover_processes,
    output_lines,
    private_copy,
    processes_matching,
    run_cli,
)

pytestmark = pytest.mark.slow

# A short --startup-timeout too: a server that never answers is unusable once its start has had that long.
HOSTILE_RUN = ["run", "--timeout", "1", "--startup-timeout", "3", "--budget", "20"]
# A budget no test waits for: a run that ends by itself long before it ended for its own reason.
UNUSED_BUDGET = ["run", "--timeout", "1", "--startup-timeout", "3", "--budget", "900"]


def describe(result: subprocess.CompletedProcess[str]) -> str:
    """A run's status and output, for assertion messages."""
    return f"exit {result.returncode}\n--- stdout\n{result.stdout}\n--- stderr\n{result.stderr}"


@pytest.fixture
def hostile(tmp_path: Path) -> Iterator[Path]:
    """A private copy of hostile.py; whatever a failing test leaves running is killed afterwards."""
    copy = private_copy(HOSTILE, tmp_path)
    yield copy
    kill_leftovers(str(copy))


@pytest.mark.parametrize(("mode", "words"), [
    pytest.param("exit-at-once", ["exited with status 3", "config file missing"], id="exit-at-once"),
    pytest.param("garbage", ["this is not json"], id="garbage"),
    pytest.param("no-read", ["no answer to initialize"], id="no-read"),
    pytest.param("silent", ["no answer to initialize"], id="silent"),
])
def test_unusable_server_exits_2(hostile: Path, mode: str, words: list[str]) -> None:
    """An unusable server ends the run by itself (a 900 s budget the run would otherwise spend: the command's
    timeout catches that) with exit 2, one clear error and nothing left running."""
    # A server that never answers is waited for a short start only: no start, however slow, makes it answer.
    never_answers = ["--startup-timeout", "1"] if mode in ("no-read", "silent") else []
    result = run_cli([*UNUSED_BUDGET, *never_answers, "--", sys.executable, str(hostile), mode], timeout=300)
    assert result.returncode == 2, describe(result)
    errors = [line for line in output_lines(result) if line.startswith("error:")]
    assert len(errors) == 1, describe(result)
    text = result.stdout + result.stderr
    for word in words:
        assert word in text, f"{word!r} missing\n{describe(result)}"
    assert words[0] in errors[0], f"the error line does not say {words[0]!r}: {errors[0]!r}"
    assert "Traceback" not in text
    assert leftover_processes(str(hostile)) == []


def test_missing_command_exits_2(tmp_path: Path) -> None:
    """A server command that does not exist exits 2 with `command not found`."""
    missing = tmp_path / "no-such-mcp-server"
    result = run_cli([*HOSTILE_RUN, "--", str(missing)], timeout=30)
    assert result.returncode == 2, describe(result)
    errors = [line for line in output_lines(result) if line.startswith("error:")]
    assert len(errors) == 1 and "command not found" in errors[0], describe(result)
    assert "Traceback" not in result.stdout + result.stderr


def sleep_children(marker: str) -> set[int]:
    """Pids of `sleep 300` processes whose parent runs a command containing `marker`."""
    pids = set()
    for parent in processes_matching(marker):
        try:
            for child in parent.children():
                if child.cmdline() == ["sleep", "300"]:
                    pids.add(child.pid)
        except psutil.Error:
            continue
    return pids


def is_running(pid: int) -> bool:
    """True when `pid` exists and is not a zombie waiting to be reaped."""
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


@pytest.mark.parametrize("mode", ["fork-child", "setsid-child"])
def test_fork_child_grandchild_is_killed(hostile: Path, mode: str) -> None:
    """The `sleep 300` a server leaves in its process group, or in a session of its own while the server still
    runs, is dead once mcpfuzz exits. The lifecycle phase alone restarts it several times: each start's child too."""
    marker = str(hostile)
    process = subprocess.Popen([*CLI, *HOSTILE_RUN, "--phases", "lifecycle", "--", sys.executable, marker, mode],
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                               env=cli_env())
    seen: set[int] = set()
    try:
        deadline = time.monotonic() + 40
        while process.poll() is None and time.monotonic() < deadline:
            seen |= sleep_children(marker)
            time.sleep(0.05)
        output, _ = process.communicate(timeout=10)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
        kill_leftovers(marker)
        for pid in seen:
            if is_running(pid):
                psutil.Process(pid).kill()
    assert process.returncode in (0, 1), output.decode(errors="replace")
    assert seen, "never saw the server's `sleep 300` child: the test cannot check its cleanup"
    alive = [pid for pid in seen if is_running(pid)]
    assert not alive, f"`sleep 300` children still running after mcpfuzz exited: {alive}"
    assert leftover_processes(marker) == []


def test_a_server_that_detaches_into_a_new_session_and_exits_ends_the_run_cleanly(hostile: Path) -> None:
    """A server that moves into a session of its own (setsid) and exits at once, its detached child still holding
    the pipes: exit 2 with one clear error, no "Exception ignored" from asyncio's pipe transports left open past
    the event loop, and the child gone once its input is closed."""
    result = run_cli([*HOSTILE_RUN, "--", sys.executable, str(hostile), "setsid-exit"], timeout=40)
    assert result.returncode == 2, describe(result)
    errors = [line for line in output_lines(result) if line.startswith("error:")]
    assert errors == ["error: the server exited with status 0 during initialize, before answering it; the last frame "
                      "it was sent: `initialize`; it wrote nothing on stdout"], describe(result)
    assert "run the server itself in the foreground" in result.stdout + result.stderr, describe(result)
    assert "detached-pid=" in result.stdout + result.stderr  # the child was there, holding the pipes
    assert "Exception ignored" not in result.stderr and "Traceback" not in result.stdout + result.stderr, \
        describe(result)
    # Out of reach of a group kill, the child ends when its input closes (it lingers a second, as on shutdown).
    assert leftover_processes(str(hostile), grace=15) == []


@dataclass
class StoppedRun:
    """What a run stopped from outside left behind."""

    returncode: int
    output: str
    report: dict[str, Any] | None
    elapsed_after_stop: float
    leftovers: list[str]


def wait_for_server(marker: str, process: subprocess.Popen[bytes], limit: float = 120) -> None:
    """Block until a server process with `marker` in its command line is running."""
    deadline = time.monotonic() + limit
    # mcpfuzz's own command line names the server too: only another process is the server.
    while not [found for found in processes_matching(marker) if found.pid != process.pid]:
        assert process.poll() is None, "mcpfuzz ended before the server started"
        assert time.monotonic() < deadline, "the server never started"
        time.sleep(0.05)


def interrupted_run(directory: Path, signum: signal.Signals) -> StoppedRun:
    """Start a slow run, send `signum` to mcpfuzz once it is fuzzing, and collect what is left."""
    server = private_copy(MCP_SERVER, directory)
    report_path = directory / "report.json"
    process = subprocess.Popen(
        [*CLI, "run", "--json", str(report_path), "--timeout", "5", "--", sys.executable, str(server),
         "--bug", "silent-invalid-request"],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, env=cli_env())
    try:
        wait_for_server(str(server), process)
        time.sleep(1.5)  # into the catalogue, waiting on a frame the server never answers
        assert process.poll() is None, "the run ended before it could be interrupted"
        process.send_signal(signum)
        stopped = time.monotonic()
        output, _ = process.communicate(timeout=90)
        elapsed = time.monotonic() - stopped
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    leftovers = leftover_processes(str(server))
    kill_leftovers(str(server))
    report = json.loads(report_path.read_text(encoding="utf-8")) if report_path.is_file() else None
    return StoppedRun(process.returncode, output.decode(errors="replace"), report, elapsed, leftovers)


@pytest.fixture(scope="module", params=[signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def signalled(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> StoppedRun:
    """One interrupted run per signal, shared by the checks below."""
    return interrupted_run(tmp_path_factory.mktemp(request.param.name), request.param)


def test_signal_writes_partial_report(signalled: StoppedRun) -> None:
    """An interrupted run still writes its JSON report, marked `stopped: interrupted`."""
    assert signalled.report is not None, signalled.output
    assert signalled.report["stopped"] == "interrupted"
    assert signalled.report["version"] == 1
    assert signalled.report["stats"]["cases"] > 0
    assert "Traceback" not in signalled.output
    assert signalled.returncode in (0, 1), signalled.output


def test_signal_leaves_no_server(signalled: StoppedRun) -> None:
    """No server process outlives an interrupted run."""
    assert signalled.leftovers == []


def test_signal_stops_the_run_where_it_was(signalled: StoppedRun) -> None:
    """mcpfuzz exits after the signal by itself (the wait is a generous deadline that only catches a run going on),
    with the phase it was in stopped."""
    assert signalled.elapsed_after_stop < 60, f"exited {signalled.elapsed_after_stop:.1f}s after the signal"
    assert signalled.report is not None and signalled.report["stopped"] == "interrupted"


@pytest.fixture(scope="module")
def budget_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[subprocess.CompletedProcess[str], float,
                                                                     dict[str, Any], list[str]]:
    """A `--budget 2` run against a server whose every tool call takes 0.4 s: its plan cannot fit in 2 s of wall
    time however fast the machine is (a quick server's whole plan can)."""
    directory = tmp_path_factory.mktemp("budget")
    server = private_copy(SERVERS_DIR / "slow_async_server.py", directory, imports=("mcp_server.py",))
    report = directory / "report.json"
    started = time.monotonic()
    result = run_cli(["run", "--budget", "2", "--timeout", "1", "--json", str(report), "--",
                      sys.executable, str(server), "--delay", "0.4"], timeout=40)
    elapsed = time.monotonic() - started
    leftovers = leftover_processes(str(server))
    kill_leftovers(str(server))
    return result, elapsed, json.loads(report.read_text(encoding="utf-8")), leftovers


def test_budget_stops_the_run(budget_run: tuple[subprocess.CompletedProcess[str], float, dict[str, Any],
                                                list[str]]) -> None:
    """A budget too small for the plan: the run is cut short (`stopped: budget`) or the phases leave out what does
    not fit, and say so; a consistent exit status, no leftovers."""
    result, _, report, leftovers = budget_run
    assert report["stopped"] == "budget" or "left out" in result.stdout, describe(result)
    assert "budget" in result.stdout
    failing = [f for f in report["findings"] if f["severity"] in ("medium", "high", "critical")]
    assert result.returncode == (1 if failing else 0), describe(result)
    assert leftovers == []


def test_budget_is_a_wall_clock_cap(budget_run: tuple[subprocess.CompletedProcess[str], float,
                                                      dict[str, Any], list[str]]) -> None:
    """A `--budget 2` run ends by itself (`test_budget_stops_the_run` checks that it was the budget); the wall clock
    only catches a run that went on regardless (a generous deadline: a loaded machine may take seconds to start)."""
    result, elapsed, report, _ = budget_run
    assert elapsed < 60, f"--budget 2 took {elapsed:.1f}s (report duration {report['stats']['duration_s']}s)"
