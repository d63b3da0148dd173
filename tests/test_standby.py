"""The warm standby: a second process of a slow server, started ahead and taken by the next restart (real processes)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio
import psutil
import pytest

from mcpfuzz.engine import runner
from mcpfuzz.engine.config import RunConfig
from mcpfuzz.engine.events import CaseDone, Event, PhaseName, ResourcesSampled, RunFinished
from mcpfuzz.engine.session.session import Session, SessionOptions
from mcpfuzz.engine.session.standby import STANDBY_WORTH, StandbyKeeper
from mcpfuzz.engine.session.startup import StartupTimes
from mcpfuzz.jsonrpc.encode import dumps, request
from mcpfuzz.jsonrpc.exchange import ID_CURRENT
from mcpfuzz.jsonrpc.expectation import any_answer, no_reply
from mcpfuzz.jsonrpc.frame import Case
from mcpfuzz.jsonrpc.ids import ABSENT
from mcpfuzz.jsonrpc.versions import Era
from mcpfuzz.oracles.base import all_oracles
from mcpfuzz.transport.connect import standby_refusal
from mcpfuzz.transport.http_target import HttpTarget
from mcpfuzz.transport.stdio_target import StdioTarget
from tests.conftest import (
    CLI,
    SERVERS_DIR,
    cli_env,
    kill_leftovers,
    leftover_processes,
    private_copy,
)

pytestmark = pytest.mark.slow

SLOW_SERVER = SERVERS_DIR / "slow_many_tools.py"
# Sleeps this long before reading stdin: a start measured at least this long, so restarts get a standby.
DELAY = "1"
DEADLINE = 60  # generous: a test waits this long only when something is broken


def slow_server(directory: Path, *extra: str) -> tuple[Path, tuple[str, ...]]:
    """A private copy of the slow server (its path marks this test's processes) and its command."""
    server = private_copy(SLOW_SERVER, directory, imports=("mcp_server.py",))
    return server, (sys.executable, str(server), "--startup-delay", DELAY, "--tools", "2", *extra)


def is_running(pid: int) -> bool:
    """True when `pid` exists and is not a zombie."""
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


def server_children(parent: int, marker: str) -> list[int]:
    """The pids of `parent`'s children running the server marked by `marker` (mcpfuzz's own command line names the
    server too, so it is not counted)."""
    found = []
    try:
        children = psutil.Process(parent).children()
    except psutil.Error:
        return []
    for child in children:
        try:
            if any(marker in part for part in child.cmdline()) and child.status() != psutil.STATUS_ZOMBIE:
                found.append(child.pid)
        except psutil.Error:
            continue
    return found


def on_session(command: tuple[str, ...], body: Callable[[Session], Awaitable[Any]]) -> Any:
    """`body` on a legacy-era session over the command, within the deadline."""

    async def main() -> Any:
        with anyio.fail_after(DEADLINE):
            async with Session(StdioTarget(command), SessionOptions(timeout=10.0, grace=0.05)) as session:
                session.era = Era.LEGACY
                return await body(session)

    return anyio.run(main)


def batch_case() -> Case:
    """A JSON array: the server with `--bug crash-batch` exits on it with a traceback."""
    return Case("batch", "standby", "a batch", b"[1]", no_reply())


def ping_case(rid: int) -> Case:
    """A ping, answered by any live server."""
    return Case(f"ping-{rid}", "standby", "ping", dumps(request("ping", ABSENT, rid)), any_answer(rid, "ping"))


async def wait_until(condition: Callable[[], bool]) -> None:
    """Until `condition` holds (the caller's deadline bounds the wait)."""
    while not condition():
        await anyio.sleep(0.02)


def test_a_restart_after_a_crash_takes_the_standby_started_before_the_crash(tmp_path: Path) -> None:
    """The process after the crash is the standby that ran before it; the crash's stderr tail is the crashed
    process', the new one's is its own; a new standby follows once the new process has answered."""
    server, command = slow_server(tmp_path, "--bug", "crash-batch")

    async def body(session: Session) -> None:
        await session.ensure_ready()
        first, standby = session.server.pid, session.processes.standby_pid
        assert standby is not None and first is not None and standby != first
        assert session.startup.first is not None and session.startup.first >= float(DELAY)
        crash = await session.run_case(batch_case())
        assert crash.crash is not None and "cannot handle a JSON array" in crash.stderr_tail
        await session.ensure_ready()
        assert session.server.pid == standby, "the restart did not take the standby"
        assert session.processes.warm_restarts == 1 and session.restarts == 1
        assert "cannot handle a JSON array" not in session.server.stderr.text(50)
        answered = await session.run_case(ping_case(5))
        assert [a.id_tag for a in answered.responses()] == [ID_CURRENT]
        assert session.processes.standby_pid not in (None, first, standby), "no new standby after the restart"
        assert session.processes.standbys == 2
        assert is_running(session.processes.standby_pid or 0)

    try:
        on_session(command, body)
        assert leftover_processes(str(server)) == []
    finally:
        kill_leftovers(str(server))


def test_fresh_cases_borrow_the_standby_and_leave_the_process_in_use_as_it_was(tmp_path: Path) -> None:
    """A case that needs a fresh process runs on the standby, beside the process in use: tools/list before
    initialize is refused there (a handshaken process would list the tools), the case's frames are its own
    alone, the borrowed process is killed afterwards, and the process in use goes on with no restart."""
    server, command = slow_server(tmp_path)

    async def body(session: Session) -> None:
        await session.ensure_ready()
        first = session.server.pid
        for rid in (77, 78):
            standby = session.processes.standby_pid
            assert standby is not None
            case = Case(f"early-list-{rid}", "lifecycle", "tools/list first", dumps(request("tools/list", {}, rid)),
                        any_answer(rid, "tools/list"), fresh=True, era=Era.LEGACY)
            exchange = await session.run_case(case)
            replies = [a.incoming.message for a in exchange.responses() if a.id_tag == ID_CURRENT]
            assert len(replies) == 1 and "error" in replies[0], replies
            assert exchange.frames == [case.data]
            assert session.server.pid == first and not is_running(standby)
            await wait_until(lambda: session.processes.standby_pid is not None)
        listed = await session.run_case(Case("list", "standby", "tools/list", dumps(request("tools/list", {}, 90)),
                                             any_answer(90, "tools/list")))
        replies = [a.incoming.message for a in listed.responses() if a.id_tag == ID_CURRENT]
        assert len(replies) == 1 and "result" in replies[0], replies  # still the handshaken process
        assert session.server.pid == first and session.server.starts == 3 and session.processes.warm_restarts == 2

    try:
        on_session(command, body)
        assert leftover_processes(str(server)) == []
    finally:
        kill_leftovers(str(server))


def test_a_standby_killed_with_sigkill_is_replaced_and_restarts_go_on(tmp_path: Path) -> None:
    """kill -9 of the standby breaks nothing: a new standby follows, and the next restart takes it."""
    server, command = slow_server(tmp_path, "--bug", "crash-batch")

    async def body(session: Session) -> None:
        await session.ensure_ready()
        killed = session.processes.standby_pid
        assert killed is not None
        os.kill(killed, signal.SIGKILL)
        await wait_until(lambda: session.processes.standby_pid != killed)  # its end is seen
        await session.run_case(ping_case(6))  # the current process goes on; a new standby is started after it
        replacement = session.processes.standby_pid
        assert replacement not in (None, killed)
        await session.run_case(batch_case())
        await session.ensure_ready()
        assert session.server.pid == replacement
        assert session.processes.standbys == 3  # the killed one, its replacement, and the one after the restart

    try:
        on_session(command, body)
        assert leftover_processes(str(server)) == []
    finally:
        kill_leftovers(str(server))


def test_a_standby_s_own_stdout_lands_in_its_first_case(tmp_path: Path) -> None:
    """What a standby writes before it is asked anything is held, then seen in the first case it runs, as on a
    process started for that case (stdout-clean still sees a startup banner)."""
    marks = tmp_path / "marks"
    marks.mkdir()
    script = tmp_path / "banner_server.py"
    script.write_text(textwrap.dedent(f"""
        import json, os, sys, time
        time.sleep({DELAY})
        sys.stdout.write("banner: starting up\\n")
        sys.stdout.flush()
        open(os.path.join({str(marks)!r}, str(os.getpid())), "w").close()
        for line in sys.stdin:
            message = json.loads(line)
            if "id" in message:
                reply = {{"jsonrpc": "2.0", "id": message["id"], "error": {{"code": -32601, "message": "no"}}}}
                sys.stdout.write(json.dumps(reply) + "\\n")
                sys.stdout.flush()
    """))

    async def main() -> None:
        with anyio.fail_after(DEADLINE):
            options = SessionOptions(timeout=10.0, grace=0.05, plain_jsonrpc=True)
            async with Session(StdioTarget((sys.executable, str(script))), options) as session:
                session.era = Era.LEGACY
                await session.ensure_ready()
                standby = session.processes.standby_pid
                assert standby is not None
                await wait_until(lambda: (marks / str(standby)).exists())  # the standby wrote its banner
                case = Case("first", "standby", "first", dumps(request("x", ABSENT, 9)), any_answer(9), fresh=True)
                exchange = await session.run_case(case)
                assert not is_running(standby)  # it ran the case, then was killed
                noise = [a.incoming.text(80) for a in exchange.arrivals if a.incoming.kind == "noise"]
                assert noise == ["banner: starting up"], [a.incoming.text(80) for a in exchange.arrivals]

    try:
        anyio.run(main)
    finally:
        kill_leftovers(str(script))


def test_a_killed_standby_mid_run_leaves_the_run_working(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A whole run on the engine: the standby is killed with SIGKILL in the middle of the coverage phase; the run
    ends normally, finds nothing on the clean server, and counts the replacement standby; the memory monitor never
    sampled the standby."""
    server, command = slow_server(tmp_path)
    sessions: list[Session] = []
    killed: list[int] = []

    class Watched(Session):
        async def __aenter__(self) -> Watched:
            sessions.append(self)
            await super().__aenter__()
            return self

    monkeypatch.setattr(runner, "Session", Watched)

    def on_event(event: Event) -> None:
        if isinstance(event, CaseDone) and event.phase == PhaseName.COVERAGE and not killed:
            pid = sessions[0].processes.standby_pid
            if pid is not None:
                killed.append(pid)
                os.kill(pid, signal.SIGKILL)

    events: list[Event] = []
    config = RunConfig(command=list(command), seed=1, budget=60, timeout=10, oracles=tuple(all_oracles()),
                       phases=(PhaseName.PROBE, PhaseName.COVERAGE))
    try:
        finished = anyio.run(runner.run, config, lambda event: (on_event(event), events.append(event)))
        assert isinstance(finished, RunFinished)
        assert killed, "the standby was never seen during coverage"
        assert not finished.error and not finished.findings, finished
        assert finished.stats.standbys >= 2 and finished.stats.phases.get(PhaseName.COVERAGE, 0) > 0
        assert not is_running(killed[0])
        sampled = {event.pid for event in events if isinstance(event, ResourcesSampled)}
        assert sampled and killed[0] not in sampled  # the memory monitor watches the process in use only
        assert leftover_processes(str(server)) == []
    finally:
        kill_leftovers(str(server))


def test_a_crash_on_a_borrowed_process_is_found_with_its_own_stderr_and_verified(tmp_path: Path) -> None:
    """The lifecycle phase on a slow legacy server that dies on a request before initialize: the crash of the
    borrowed process is the one finding, with that process' traceback, and re-running it on a fresh process (a
    standby again) reproduces it."""
    server, command = slow_server(tmp_path, "--bug", "crash-pre-init")
    config = RunConfig(command=list(command), seed=1, budget=90, timeout=10, oracles=tuple(all_oracles()),
                       protocol_version="2025-11-25", phases=(PhaseName.PROBE, PhaseName.LIFECYCLE))
    try:
        finished = anyio.run(runner.run, config, lambda event: None)
        assert [f.target for f in finished.findings] == ["lifecycle/request-before-initialize"], finished
        (finding,) = finished.findings
        assert finding.oracle == "no-crash" and "crash-pre-init" in finding.stderr_tail
        assert finding.reproducible is True
        assert finished.stats.warm_restarts >= 1
        assert leftover_processes(str(server)) == []
    finally:
        kill_leftovers(str(server))


def test_no_process_outlives_a_run_that_kept_standbys(tmp_path: Path) -> None:
    """After a whole `mcpfuzz run` that started standbys (the report counts them), no server process is left."""
    server, command = slow_server(tmp_path)
    report = tmp_path / "report.json"
    try:
        result = subprocess.run([*CLI, "run", "--budget", "40", "--phases", "lifecycle", "--json", str(report),
                                 "--", *command], capture_output=True, text=True, timeout=180, env=cli_env(),
                                cwd=tmp_path, stdin=subprocess.DEVNULL)
        assert result.returncode in (0, 1, 2), result.stdout + result.stderr
        stats = json.loads(report.read_text())["stats"]
        assert stats["standbys"] >= 1 and stats["warm_restarts"] >= 1, stats
        assert leftover_processes(str(server)) == []
    finally:
        kill_leftovers(str(server))


def test_the_end_of_the_budget_kills_the_standby_too(tmp_path: Path) -> None:
    """A run that ends at its budget while a standby runs leaves no server process behind (five lifecycle cases on a
    server that takes a second to start cannot fit in the budget: cut short, or left out and said)."""
    server, command = slow_server(tmp_path)
    report = tmp_path / "report.json"
    try:
        result = subprocess.run([*CLI, "run", "--budget", "5", "--phases", "lifecycle", "--json", str(report), "--",
                                 *command],
                                capture_output=True, text=True, timeout=120, env=cli_env(), cwd=tmp_path,
                                stdin=subprocess.DEVNULL)
        data = json.loads(report.read_text())
        assert data["stopped"] == "budget" or "left out" in result.stdout, result.stdout + result.stderr
        assert data["stats"]["standbys"] >= 1, data["stats"]
        assert leftover_processes(str(server)) == []
    finally:
        kill_leftovers(str(server))


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_a_signal_kills_the_standby_too(tmp_path: Path, signum: signal.Signals) -> None:
    """SIGINT or SIGTERM to `mcpfuzz run` while a standby runs beside the server: every process of the server that
    was seen (the one in use and the standby) is gone once mcpfuzz has exited."""
    server, command = slow_server(tmp_path)
    report = tmp_path / "report.json"
    process = subprocess.Popen([*CLI, "run", "--budget", "120", "--json", str(report), "--", *command],
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                               env=cli_env(), cwd=tmp_path)
    seen: set[int] = set()
    try:
        deadline = time.monotonic() + DEADLINE
        while len(server_children(process.pid, str(server))) < 2:  # the server in use and its standby
            assert process.poll() is None, "mcpfuzz ended before a standby was seen"
            assert time.monotonic() < deadline, "never saw a standby beside the server"
            time.sleep(0.05)
        seen = set(server_children(process.pid, str(server)))
        process.send_signal(signum)
        output, _ = process.communicate(timeout=DEADLINE)
        assert process.returncode in (0, 1), output.decode(errors="replace")
        assert json.loads(report.read_text())["stopped"] == "interrupted"
        assert leftover_processes(str(server)) == []
        assert not [pid for pid in seen if is_running(pid)]
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
        kill_leftovers(str(server))


def test_the_atexit_net_kills_a_standby_left_running(tmp_path: Path) -> None:
    """A program that exits without closing its StdioServer still leaves no standby behind (the atexit kill)."""
    server, command = slow_server(tmp_path)
    script = tmp_path / "leave.py"
    script.write_text(textwrap.dedent(f"""
        import sys
        import anyio
        from mcpfuzz.transport.stdio import StdioServer

        async def main():
            server = StdioServer({list(command)!r}, on_line=lambda line, size: None, on_exit=lambda end: None)
            await server.__aenter__()
            await server.start()
            await server.hold_standby()
            print(server.pid, server.standby_pid, flush=True)
            sys.exit(0)  # never closed: only the atexit net is left to kill them

        anyio.run(main)
    """))
    try:
        result = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=DEADLINE,
                                env=cli_env(), stdin=subprocess.DEVNULL)
        pids = [int(word) for word in result.stdout.split()[:2]]
        assert len(pids) == 2 and pids[0] != pids[1], result.stdout + result.stderr
        assert leftover_processes(str(server)) == []
    finally:
        kill_leftovers(str(server))


class FakeHolder:
    """A connection that holds standbys, for the keeper's decisions."""

    def __init__(self, problem: str = "") -> None:
        self.standbys = 0
        self.warm_starts = 0
        self.standby_problem = problem
        self.has_standby = False
        self.standby_pid: int | None = None
        self.standby_spawned_at: float | None = None
        self.spawned_at: float | None = None

    async def hold_standby(self) -> None:
        self.standbys += 1
        self.has_standby = True

    async def drop_standby(self) -> None:
        self.has_standby = False


async def tend(keeper: StandbyKeeper, seconds: float | None) -> None:
    """The keeper after a case, once a start of `seconds` was measured (None: none was)."""
    times = StartupTimes()
    if seconds is not None:
        times.add(seconds)
        keeper.measured(times)
    await keeper.tend(times)


def test_the_keeper_holds_a_standby_only_for_a_server_slow_to_start() -> None:
    """No standby before a start is measured or for a start under STANDBY_WORTH; one for a slower start, kept."""
    notices: list[str] = []

    async def main() -> None:
        holder = FakeHolder()
        keeper = StandbyKeeper(holder, "", enabled=True, notice=notices.append)
        await tend(keeper, None)
        await tend(keeper, STANDBY_WORTH / 2)
        assert holder.standbys == 0
        await tend(keeper, STANDBY_WORTH * 4)
        await tend(keeper, STANDBY_WORTH * 4)
        assert holder.standbys == 1 and keeper.standbys == 1
        disabled = FakeHolder()
        await tend(StandbyKeeper(disabled, "", enabled=False, notice=notices.append), 5.0)
        assert disabled.standbys == 0

    anyio.run(main)
    assert notices == []


def test_the_keeper_says_once_why_restarts_wait() -> None:
    """A connection that gave standbys up, or a server that cannot have one: said once, only when it is slow."""
    notices: list[str] = []

    async def main() -> None:
        given_up = FakeHolder(problem="3 standby processes exited before they were used")
        keeper = StandbyKeeper(given_up, "", enabled=True, notice=notices.append)
        for _ in range(3):
            await tend(keeper, 2.0)
        assert given_up.standbys == 0
        none = StandbyKeeper(None, "the --launch command listens on a fixed port", enabled=True,
                             notice=notices.append)
        await tend(none, 0.01)
        await tend(none, 2.0)
        await tend(none, 2.0)

    anyio.run(main)
    assert len(notices) == 2, notices
    assert "exited before they were used" in notices[0] and "fixed port" in notices[1]


def test_a_launch_command_on_a_fixed_port_gets_no_standby() -> None:
    """Why a --launch server gets none; a stdio command is not refused."""
    fixed = HttpTarget("http://127.0.0.1:8000/mcp", launch=("python", "server.py"))
    picked = HttpTarget("http://127.0.0.1:{port}/mcp", launch=("python", "server.py", "--port", "{port}"))
    assert "fixed port" in standby_refusal(fixed)
    assert standby_refusal(picked) and "fixed port" not in standby_refusal(picked)
    assert standby_refusal(HttpTarget("http://127.0.0.1:8000/mcp")) == ""
    assert standby_refusal(StdioTarget(("python", "server.py"))) == ""
