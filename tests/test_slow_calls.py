"""Slow is not dropped: a valid call to a server that answers pings meanwhile gets --call-timeout."""

from __future__ import annotations

import sys
import time

import pytest

from mcpfuzz.engine.events import CaseDone, Event, Notice
from mcpfuzz.jsonrpc.parts.leniency import Lenient
from mcpfuzz.oracles.base import Severity
from tests.engine_runs import SERVERS, run_engine

pytestmark = pytest.mark.slow

SLOW_SERVER = SERVERS / "slow_server.py"
BLOCKING_SERVER = SERVERS / "slow_tool_server.py"  # its one thread sleeps in the tool: no ping answered meanwhile
PHASES = ("probe", "coverage")


def _findings(finished: object) -> list[tuple[str, str, Severity]]:
    return [(f.oracle, f.target, f.severity) for f in finished.findings]  # type: ignore[attr-defined]


def _slow_notes(events: list[Event]) -> list[str]:
    return [e.message for e in events if isinstance(e, Notice) and "slow, not a hang" in e.message]


def test_a_tool_slower_than_timeout_is_no_finding_and_is_noted_once() -> None:
    """The tool answers after 3 s, --timeout is 1 s, pings are answered meanwhile: no finding, one note."""
    events: list[Event] = []
    finished = run_engine([sys.executable, str(SLOW_SERVER), "--delay", "3"], timeout=1, budget=40, phases=PHASES,
                          events=events)
    assert not finished.error, finished.error
    assert _findings(finished) == []
    (note,) = _slow_notes(events)
    assert note.startswith("tool/report answered after ")


def test_a_slow_tool_that_reports_progress_gives_no_finding() -> None:
    """Progress notifications are the spec's way to say a long request is working: nothing to report."""
    events: list[Event] = []
    finished = run_engine([sys.executable, str(SLOW_SERVER), "--delay", "3", "--progress"], timeout=1, budget=40,
                          phases=PHASES, events=events)
    assert not finished.error, finished.error
    assert _findings(finished) == []
    assert "progress notifications" in _slow_notes(events)[0]


def test_a_call_never_answered_by_a_live_server_is_dropped_after_the_call_timeout() -> None:
    """The server answers pings but never the call: critical no-hang, after --call-timeout, not --timeout."""
    finished = run_engine([sys.executable, str(SLOW_SERVER), "--drop"], timeout=1, call_timeout=4, budget=40,
                          phases=PHASES)
    assert _findings(finished) == [("no-hang", "tool/report", Severity.CRITICAL)]
    message = finished.findings[0].message
    assert "dropped" in message and "--call-timeout" in message


def test_a_call_still_reporting_progress_at_the_limit_is_working_not_dropped() -> None:
    """Progress every half second for far longer than --call-timeout: no finding; mcpfuzz gives up and cancels."""
    events: list[Event] = []
    finished = run_engine([sys.executable, str(SLOW_SERVER), "--delay", "600", "--progress"], timeout=1,
                          call_timeout=3, budget=30, phases=PHASES, events=events)
    assert not finished.error, finished.error
    assert _findings(finished) == []


def test_a_slow_call_is_waited_for_only_until_its_phase_ends() -> None:
    """--call-timeout 60 in a 20 s run: the wait stops at the coverage phase's end, no verdict, the run on time."""
    started = time.monotonic()
    finished = run_engine([sys.executable, str(SLOW_SERVER), "--drop"], timeout=1, call_timeout=60, budget=20,
                          phases=PHASES)
    assert time.monotonic() - started < 60 - 5  # not the --call-timeout 60 wait
    assert _findings(finished) == []


def test_a_tool_that_blocks_the_server_for_a_while_is_slow_not_a_hang() -> None:
    """The tool blocks the server's only thread for 3 s (no ping answered meanwhile), --timeout is 1 s: the call
    is waited for to --call-timeout and answered, so no finding, and the note says the server was busy."""
    events: list[Event] = []
    finished = run_engine([sys.executable, str(BLOCKING_SERVER), "--delay", "3"], timeout=1, call_timeout=30,
                          budget=40, phases=PHASES, events=events)
    assert not finished.error, finished.error
    assert _findings(finished) == []
    (note,) = _slow_notes(events)
    assert note.startswith("tool/wait answered after ") and "answered nothing else meanwhile" in note


def test_a_server_silent_to_the_end_of_the_call_timeout_is_stuck() -> None:
    """The tool blocks the server far longer than --call-timeout: nothing answered, not even a ping, is a hang."""
    finished = run_engine([sys.executable, str(BLOCKING_SERVER), "--delay", "600"], timeout=1, call_timeout=3,
                          budget=40, phases=PHASES)
    assert ("no-hang", "tool/wait", Severity.CRITICAL) in _findings(finished)
    (hang,) = [f for f in finished.findings if f.oracle == "no-hang"]
    assert "stopped answering other requests too" in hang.message


def test_a_blocking_tool_cut_short_by_its_phase_is_not_called_stuck() -> None:
    """The tool blocks the server's only thread far longer than the phase lasts, --call-timeout 60: the wait stops
    at the phase's end, before --call-timeout, so nobody can tell stuck from slow. No verdict, and a note says so.

    Seen on a FastMCP server whose tool took 66 s to answer a 100 kB argument: it was called stuck after 6 s."""
    events: list[Event] = []
    started = time.monotonic()
    finished = run_engine([sys.executable, str(BLOCKING_SERVER), "--delay", "600"], timeout=1, call_timeout=60,
                          budget=20, phases=PHASES, events=events)
    assert time.monotonic() - started < 60 - 5  # not the --call-timeout 60 wait
    assert [f for f in _findings(finished) if f[0] == "no-hang"] == []
    notes = [e.message for e in events if isinstance(e, Notice) and "not judged" in e.message]
    assert notes and notes[0].startswith("tool/wait was still unanswered")


def test_a_lone_surrogate_call_answered_late_by_an_async_server_is_no_finding() -> None:
    """Every call takes 0.5 s on a server that answers pings meanwhile: a lone-surrogate call (a parser may refuse
    it, so it goes out with a barrier) is answered after the barrier, and is waited for as long as its target's
    calls take, not the short grace."""
    events: list[Event] = []
    finished = run_engine([sys.executable, str(SERVERS / "slow_async_server.py"), "--delay", "0.5"], budget=60,
                          phases=PHASES, events=events)
    assert not finished.error, finished.error
    assert _findings(finished) == []
    surrogates = [e.exchange for e in events if isinstance(e, CaseDone) and e.exchange.case.expect.has(Lenient)]
    assert surrogates, "coverage sent no lone-surrogate call"
    assert all(exchange.responses() for exchange in surrogates)
