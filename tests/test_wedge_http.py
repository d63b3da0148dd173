"""The wedge check over streamable HTTP: a template read that loops for ever on a server handling one POST at a time
(as one event loop does) is judged stuck long before --call-timeout, by a fresh request on a POST of its own; a read
that is slow once and then answers gives no finding.

Each call is its own POST, waited for to the end of its response; past --timeout a liveness request goes on a new
POST. Unanswered while the launched process runs, the server is busy with the call (as on stdio): the call gets the
fair wait its target's earlier answers allow, then a fresh request on another new POST decides.
"""

from __future__ import annotations

import sys

import pytest

from mcpfuzz.engine.events import CaseDone, Event, RunFinished
from mcpfuzz.transport.base import TransportKind
from mcpfuzz.transport.http_target import HttpTarget
from tests.engine_runs import run_engine
from tests.http_servers import HTTP_SERVER, SDK_SERVERS, free_port, sdk_python

pytestmark = pytest.mark.slow

TEMPLATE_TARGET = "template/mem://by-title/{title}"
CALL_TIMEOUT = 600.0  # far past the run's budget: a wedge judged at all was judged by the fair wait


def serial_server(*server_bugs: str) -> HttpTarget:
    """tests/servers/http_server.py serving the negative-refs server one POST at a time, launched by mcpfuzz."""
    launch = [sys.executable, str(HTTP_SERVER), "--port", str(free_port()), "--serve", "negative-refs", "--serial"]
    for bug in server_bugs:
        launch += ["--server-bug", bug]
    return HttpTarget(f"http://127.0.0.1:{launch[3]}/mcp", launch=tuple(launch),
                      transport=TransportKind.STREAMABLE_HTTP)


def wedge_run(*server_bugs: str) -> tuple[list[Event], RunFinished]:
    events: list[Event] = []
    finished = run_engine([], http=serial_server(*server_bugs), timeout=2.0, call_timeout=CALL_TIMEOUT, budget=60.0,
                          phases=("probe", "coverage"), protocol_version="2025-11-25", seed=3, events=events)
    return events, finished


def test_a_template_read_that_wedges_an_http_server_is_judged_stuck_within_a_short_budget() -> None:
    events, finished = wedge_run("template-loop")
    assert not finished.error
    hangs = [f for f in finished.findings if f.oracle == "no-hang"]
    assert [f.target for f in hangs] == [TEMPLATE_TARGET], \
        [(f.oracle, f.target) for f in finished.findings]
    assert "wedged, not slow" in hangs[0].message
    wedged = [e.exchange for e in events if isinstance(e, CaseDone) and e.exchange.wedged]
    # Judged before the coverage phase's share ran out (a later read that wedges again may still be cut short).
    first = next(e for e in events if isinstance(e, CaseDone) and e.exchange.extended)
    assert first.exchange.wedged and not first.exchange.cut_short
    assert wedged and all(exchange.waited < CALL_TIMEOUT / 10 for exchange in wedged)
    # The launched process' CPU was read while the fresh request waited: the loop burnt it.
    assert wedged[0].cpu_share is not None and wedged[0].cpu_share > 0.0
    assert "of a core meanwhile" in hangs[0].message
    reads = [e.exchange for e in events if isinstance(e, CaseDone) and e.exchange.case.target == TEMPLATE_TARGET]
    assert reads[0].responses() and reads.index(wedged[0]) > 0
    assert finished.stats.restarts >= 1


def test_a_read_that_is_slow_once_then_answers_gives_no_finding_over_http() -> None:
    """The first climbing read takes 8 s: past --timeout (its liveness POST unanswered meanwhile) and past the fair
    wait, but answered while the fresh request waits: slow, not stuck."""
    events, finished = wedge_run("slow-climb")
    assert not finished.error and not finished.findings, \
        [(f.oracle, f.target, f.message) for f in finished.findings]
    blocked = [e.exchange for e in events if isinstance(e, CaseDone) and e.exchange.blocked]
    assert blocked and all(exchange.responses() and not exchange.wedged for exchange in blocked)


def test_a_tool_that_blocks_the_python_sdks_event_loop_is_judged_wedged() -> None:
    """FastMCP (mcp 1.x) over streamable HTTP: a count that never ends holds the event loop, pings included."""
    port = free_port()
    launch = (sdk_python("sdk1"), str(SDK_SERVERS / "sdk1_wedge_server.py"), str(port))
    target = HttpTarget(f"http://127.0.0.1:{port}/mcp", launch=launch, transport=TransportKind.STREAMABLE_HTTP)
    events: list[Event] = []
    finished = run_engine([], http=target, timeout=2.0, call_timeout=CALL_TIMEOUT, budget=60.0,
                          phases=("probe", "coverage"), protocol_version="2025-11-25", seed=1, events=events)
    assert not finished.error
    hangs = [f for f in finished.findings if f.oracle == "no-hang"]
    assert [f.target for f in hangs] == ["tool/count"], [(f.oracle, f.target) for f in finished.findings]
    assert "wedged, not slow" in hangs[0].message and "of a core meanwhile" in hangs[0].message
    wedged = [e.exchange for e in events if isinstance(e, CaseDone) and e.exchange.wedged]
    assert wedged and all(exchange.waited < CALL_TIMEOUT / 10 for exchange in wedged)
