"""--startup-timeout: a server's start is waited for apart from --timeout, and measured."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import anyio
import pytest

from mcpfuzz.engine.session.collector import Collector, Pending
from mcpfuzz.engine.session.startup import StartupTimes
from mcpfuzz.jsonrpc.incoming import classify
from tests.conftest import SERVERS_DIR, kill_leftovers, leftover_processes, private_copy, run_cli

pytestmark = pytest.mark.process

SLOW_SERVER = SERVERS_DIR / "slow_many_tools.py"


def test_a_server_that_starts_in_8s_is_fuzzed_with_the_default_options(tmp_path: Path) -> None:
    """Asserts: a server that sleeps 8 s before reading stdin (longer than the default --timeout of 5 s) is not
    unusable: the run goes to its end and exits 0 (the server is clean), its start is measured at 8 s or more (it
    slept that long: a lower bound, whatever the machine's speed) and the header says so.

    Waits on a real slow process; the deadline is generous for a loaded machine."""
    server = private_copy(SLOW_SERVER, tmp_path, imports=("mcp_server.py",))
    report = tmp_path / "report.json"
    try:
        result = run_cli(["run", "--budget", "90", "--phases", "catalogue,coverage", "--json", str(report), "--",
                          sys.executable, str(server), "--startup-delay", "8", "--tools", "2"], timeout=240)
        assert result.returncode == 0, result.stdout + result.stderr
        data = json.loads(report.read_text())
        startup = data["stats"]["startup"]
        # Timed from when the spawn returned: a loaded machine may return from it a little after the child began.
        assert startup["first_s"] >= 7.0, startup
        assert data["stats"]["cases"] > 0 and not data["error"], data
        assert "startup " in result.stdout and "s, 2 tools" in result.stdout, result.stdout
        assert leftover_processes(str(server)) == []
    finally:
        kill_leftovers(str(server))


def test_a_server_that_never_answers_is_unusable_once_its_start_had_startup_timeout(tmp_path: Path) -> None:
    """Asserts: a server that sleeps longer than --startup-timeout before reading is unusable (exit 2), with a tip
    that names --startup-timeout."""
    server = private_copy(SLOW_SERVER, tmp_path, imports=("mcp_server.py",))
    try:
        result = run_cli(["run", "--budget", "60", "--timeout", "1", "--startup-timeout", "2", "--", sys.executable,
                          str(server), "--startup-delay", "600"], timeout=120)
        assert result.returncode == 2, result.stdout + result.stderr
        assert "--startup-timeout" in result.stdout + result.stderr
        assert leftover_processes(str(server)) == []
    finally:
        kill_leftovers(str(server))


def test_until_the_first_answer_a_wait_lasts_to_the_startup_deadline_then_timeout_past_that_answer() -> None:
    """The collector's limit: `startup_until` while nothing came; `timeout` past the first line once one did."""
    collector = Collector(lambda: True)
    now = time.monotonic()
    assert collector._limit(now + 5, 5, None) == now + 5
    assert collector._limit(now + 5, 5, now + 30) == now + 30
    line = b'{"jsonrpc":"2.0","id":1,"result":{}}'
    collector.route(classify(line, len(line)))
    assert collector.first_answer is not None
    first = collector.first_answer
    assert collector._limit(now + 5, 5, now + 30) == max(now + 5, min(now + 30, first + 5))
    collector.forget()
    assert collector.first_answer is None


def test_a_harness_request_waits_for_a_slow_first_answer_past_its_timeout() -> None:
    """`wait_reply` with a startup deadline keeps waiting past `timeout` while the server has said nothing."""

    async def main() -> float:
        collector = Collector(lambda: True)
        pending = collector.expect_reply(7)

        async def answer_later() -> None:
            await anyio.sleep(0.3)
            line = b'{"jsonrpc":"2.0","id":7,"result":{}}'
            collector.route(classify(line, len(line)))
            collector.wake()

        started = time.monotonic()
        async with anyio.create_task_group() as group:
            group.start_soon(answer_later)
            await collector.wait_reply(pending, 0.05, startup_until=time.monotonic() + 60)
        assert pending.reply is not None
        return time.monotonic() - started

    assert anyio.run(main) >= 0.3


def test_startup_figures() -> None:
    """The first, last and median start, their count and the time starts kept the run waiting."""
    times = StartupTimes()
    assert times.as_dict() is None
    for seconds in (3.0, 1.0, 2.0):
        times.add(seconds)
    times.add_wait(3.0)
    times.add_wait(0.5)
    assert times.as_dict() == {"first_s": 3.0, "last_s": 2.0, "median_s": 2.0, "count": 3, "waited_s": 3.5}


def test_pending_is_unanswered_without_a_reply() -> None:
    """A harness request whose wait ends at its deadline stays unanswered (no startup deadline: --timeout only)."""

    async def main() -> Pending:
        collector = Collector(lambda: True)
        pending = collector.expect_reply(3)
        await collector.wait_reply(pending, 0.01)
        return pending

    assert anyio.run(main).reply is None
