"""The client phase waits for a call as every call phase does: a call whose server asked for input (and got mcpfuzz's
answer) and then takes longer than --timeout gets --call-timeout, and is judged only on what that wait saw."""

from __future__ import annotations

import pytest

from mcpfuzz.jsonrpc.client_check import AnswerMode
from mcpfuzz.jsonrpc.exchange import ID_CURRENT
from mcpfuzz.jsonrpc.parts.client import ClientCheck
from tests.client_runs import LEGACY, elicit_run

pytestmark = pytest.mark.process

DELAY = 2.0  # seconds the server takes to answer a call once its elicitation was accepted: past --timeout


def test_a_call_slower_than_timeout_after_an_accepted_elicitation_is_waited_for_not_dropped() -> None:
    finished, exchanges = elicit_run(version=LEGACY, timeout=1.0, call_timeout=30.0, budget=120.0,
                                     server_args=("--answer-delay", str(DELAY)))
    accepted = [e for e in exchanges if (check := e.case.expect.part(ClientCheck)) is not None
                and check.mode is AnswerMode.ACCEPT]
    assert accepted, [e.case.title for e in exchanges]
    for exchange in accepted:
        assert any(a.id_tag == ID_CURRENT for a in exchange.responses()), exchange.case.title
        assert exchange.extended and not exchange.cut_short, exchange.case.title  # waited on past --timeout
    # (The flight phase rightly finds that the answering thread ignores notifications/cancelled: cancel-respected.)
    judged = [(f.oracle, f.case_title) for f in finished.findings if f.oracle in ("client-requests", "no-hang")]
    assert judged == []
