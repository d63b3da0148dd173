"""Every case that calls a tool waits for it as the call phases do: past --timeout on to --call-timeout while the
server answers, judged only on what that wait saw. The client phase's calls (the server asked for input and got
mcpfuzz's answer) and the catalogue's requests sent at once (a read-only tool's call among them) alike."""

from __future__ import annotations

import sys

import pytest

from mcpfuzz.engine.events import CaseDone, Event
from mcpfuzz.jsonrpc.client_check import AnswerMode
from mcpfuzz.jsonrpc.exchange import ID_CURRENT
from mcpfuzz.jsonrpc.parts.client import ClientCheck
from tests.client_runs import LEGACY, elicit_run
from tests.engine_runs import SERVERS, run_engine

pytestmark = pytest.mark.process

DELAY = 2.0  # seconds the server takes to answer a call once its elicitation was accepted: past --timeout


def test_a_call_slower_than_timeout_after_an_accepted_elicitation_is_waited_for_not_dropped() -> None:
    # The flight phase's oracles left out: its cancelled calls would each wait out the slow answer too.
    finished, exchanges = elicit_run(version=LEGACY, timeout=1.0, call_timeout=30.0, budget=120.0,
                                     server_args=("--answer-delay", str(DELAY)),
                                     leave_out=("cancel-respected", "concurrency"))
    accepted = [e for e in exchanges if (check := e.case.expect.part(ClientCheck)) is not None
                and check.mode is AnswerMode.ACCEPT]
    assert accepted, [e.case.title for e in exchanges]
    for exchange in accepted:
        assert any(a.id_tag == ID_CURRENT for a in exchange.responses()), exchange.case.title
        assert exchange.extended and not exchange.cut_short, exchange.case.title  # waited on past --timeout
    assert [(f.oracle, f.case_title) for f in finished.findings] == []


def test_requests_at_once_with_a_slow_read_only_call_wait_for_it_as_a_call() -> None:
    """slow_server's read-only `report` answers after 2 s (pings answered meanwhile): sent at once with the list
    requests, its answer is waited for past --timeout, and the concurrency oracle sees every answer."""
    events: list[Event] = []
    finished = run_engine([sys.executable, str(SERVERS / "slow_server.py"), "--delay", str(DELAY)], timeout=1.0,
                          budget=120.0, phases=("catalogue",), events=events)
    at_once = [e.exchange for e in events if isinstance(e, CaseDone) and e.exchange.case.family == "concurrency"]
    assert at_once and all(b'"tools/call"' in e.case.data for e in at_once), [e.case.title for e in at_once]
    for exchange in at_once:
        answered = {a.incoming.id for a in exchange.responses() if a.id_tag == ID_CURRENT}
        assert answered == set(exchange.case.expect.batch_ids), exchange.case.title
    assert [(f.oracle, f.case_title) for f in finished.findings] == []
