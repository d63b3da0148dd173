"""The barrier's answer as a fence, on real server processes: a server seen answering in order has a silent frame
settled by it (the frame judged silent, the next case clean), a late reply it writes before the fence is still the
frame's own, and a server seen answering behind a fence keeps the grace, whose answers are still caught."""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence

import anyio
import pytest

from mcpfuzz.engine.judge import FindingSet
from mcpfuzz.engine.session.order import ORDER_EVIDENCE, AnswerOrder
from mcpfuzz.engine.session.session import Session, SessionOptions
from mcpfuzz.jsonrpc import expectation as ex
from mcpfuzz.jsonrpc.exchange import ID_CURRENT, ID_MISSING, Exchange
from mcpfuzz.jsonrpc.frame import Case
from mcpfuzz.jsonrpc.oracle_ids import OracleId
from mcpfuzz.oracles.base import all_oracles
from mcpfuzz.transport.stdio_target import StdioTarget
from tests.engine_runs import MCP_SERVER

pytestmark = pytest.mark.process

EVERY = tuple(all_oracles())


def tools_list(rid: int) -> Case:
    """A valid tools/list request with its own id."""
    frame = json.dumps({"jsonrpc": "2.0", "id": rid, "method": "tools/list"}).encode()
    return Case(f"list-{rid}", "catalogue", "tools/list", frame, ex.result(rid, "tools/list"))


def unparseable(n: int) -> Case:
    """Bytes that are no JSON: due a -32700."""
    return Case(f"truncated-{n}", "parse", "a truncated frame", b'{"jsonrpc":"2.0","id":', ex.parse_error())


NOTIFICATION = Case("unknown-notification", "notification", "an unknown notification",
                    b'{"jsonrpc":"2.0","method":"notifications/unknown_kind"}', ex.no_reply())


Ran = tuple[list[Exchange], list[bool], AnswerOrder]


def run_cases(bug: str, cases: Sequence[Case], *, grace: float = 0.25) -> Ran:
    """The cases one by one on one process of the test server with `bug` on; whether order was shown before each."""

    async def main() -> Ran:
        target = StdioTarget((sys.executable, str(MCP_SERVER), "--bug", bug))
        exchanges, shown = [], []
        async with Session(target, SessionOptions(timeout=10.0, grace=grace)) as session:
            await session.ensure_ready()
            for case in cases:
                shown.append(session.collector.order.shown)
                exchanges.append(await session.run_case(case))
            assert session.restarts == 0
            return exchanges, shown, session.collector.order

    return anyio.run(main)


def fired(exchange: Exchange) -> dict[str, list[str]]:
    findings = FindingSet()
    findings.judge(exchange, EVERY)
    out: dict[str, list[str]] = {}
    for finding in findings.all():
        out.setdefault(finding.oracle, []).append(finding.message)
    return out


def ping(rid: int) -> Case:
    """A valid ping with its own id."""
    frame = json.dumps({"jsonrpc": "2.0", "id": rid, "method": "ping"}).encode()
    return Case(f"ping-{rid}", "catalogue", "ping", frame, ex.result(rid, "ping"))


def in_order_first() -> list[Case]:
    """As many answered requests as order needs to be shown."""
    return [tools_list(100 + n) for n in range(ORDER_EVIDENCE)]


def test_a_silent_frame_on_a_server_seen_answering_in_order_is_settled_by_its_fence() -> None:
    """After ORDER_EVIDENCE answers before their barriers, the fence is used: each unparseable frame the server
    ignores is judged silent (parse-error), and the request after them gets its own answer and nothing else."""
    cases = [*in_order_first(), unparseable(1), unparseable(2), tools_list(200)]
    exchanges, shown, order = run_cases("silent-parse", cases)
    assert shown == [False] * ORDER_EVIDENCE + [True, True, True]
    assert order.shown and not order.broken
    for silent in exchanges[ORDER_EVIDENCE:ORDER_EVIDENCE + 2]:
        assert silent.arrivals == [] and silent.barrier_answered, silent.arrivals
        assert list(fired(silent)) == [OracleId.PARSE_ERROR.value]
    last = exchanges[-1]
    assert [(a.id_tag, a.incoming.id) for a in last.arrivals] == [(ID_CURRENT, 200)]
    assert fired(last) == {}


def test_a_late_reply_to_a_notification_is_caught_behind_a_fence_too() -> None:
    """The server answers a notification (no id) 0.2 s late, yet before the barrier sent after it: with the fence in
    use the reply is still the notification's (notification-silent), never the next frame's."""
    exchanges, shown, order = run_cases("answer-notifications-without-id",
                                        [*in_order_first(), NOTIFICATION, tools_list(200)])
    assert shown[-2:] == [True, True] and not order.broken
    notification, after = exchanges[-2:]
    assert [a.id_tag for a in notification.responses()] == [ID_MISSING], notification.arrivals
    assert OracleId.NOTIFICATION_SILENT.value in fired(notification)
    assert [(a.id_tag, a.incoming.id) for a in after.arrivals] == [(ID_CURRENT, 200)]
    assert fired(after) == {}


def test_a_server_answering_behind_its_fence_keeps_the_grace() -> None:
    """tools/list answered from another thread after the barrier: the grace catches each answer (every case
    answered, none judged silent), and order is never shown however many such answers come."""
    cases = [tools_list(100 + n) for n in range(ORDER_EVIDENCE + 2)]
    exchanges, shown, order = run_cases("answers-out-of-order", cases, grace=3.0)
    assert not any(shown) and not order.shown
    assert order.broken == "a case answered after its barrier"
    for exchange, case in zip(exchanges, cases, strict=True):
        assert [(a.id_tag, a.incoming.id) for a in exchange.arrivals] == [(ID_CURRENT, case.expect.id)]
        assert fired(exchange) == {}


def test_a_valid_request_keeps_its_grace_behind_a_fence() -> None:
    """Order shown by pings, then tools/list answered from another thread after its barrier: a valid request is not
    settled by the fence (its handler may run beside the barrier); the grace catches its answer, and from then on
    order is no longer trusted."""
    cases = [*(ping(100 + n) for n in range(ORDER_EVIDENCE)), tools_list(200), ping(201)]
    exchanges, shown, order = run_cases("answers-out-of-order", cases, grace=3.0)
    assert shown[ORDER_EVIDENCE:] == [True, False]
    assert [(a.id_tag, a.incoming.id) for a in exchanges[ORDER_EVIDENCE].arrivals] == [(ID_CURRENT, 200)]
    assert fired(exchanges[ORDER_EVIDENCE]) == {}
    assert order.broken == "a case answered after its barrier"
