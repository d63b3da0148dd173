"""Answers without an `id` member, on a real server process: an error that refuses a frame answers that frame (not
silence), and a reply to the handshake's notification is charged to no case that follows it."""

from __future__ import annotations

import json
import sys

import anyio
import pytest
from mcpfuzz.strategies.arguments.call import POSITIVE, ArgumentCall
from mcpfuzz.strategies.arguments.tool_calls import call_expectation

from mcpfuzz.engine.judge import FindingSet
from mcpfuzz.engine.session.session import Session, SessionOptions
from mcpfuzz.jsonrpc import expectation as ex
from mcpfuzz.jsonrpc.exchange import ID_MISSING, Exchange
from mcpfuzz.jsonrpc.frame import Case
from mcpfuzz.jsonrpc.oracle_ids import OracleId
from mcpfuzz.oracles.base import all_oracles
from mcpfuzz.transport.stdio_target import StdioTarget
from tests.engine_runs import MCP_SERVER

pytestmark = pytest.mark.process

EVERY = tuple(all_oracles())
ECHO = {"name": "echo", "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}}}


def run_first_case(bug: str, case: Case) -> Exchange:
    """The case as the first one after the handshake of a fresh process of the test server with `bug` on."""

    async def main() -> Exchange:
        target = StdioTarget((sys.executable, str(MCP_SERVER), "--bug", bug))
        async with Session(target, SessionOptions(timeout=10.0)) as session:
            await session.ensure_ready()
            return await session.run_case(case)

    return anyio.run(main)


def oracles_fired(exchange: Exchange) -> dict[str, list[str]]:
    findings = FindingSet()
    findings.judge(exchange, EVERY)
    fired: dict[str, list[str]] = {}
    for finding in findings.all():
        fired.setdefault(finding.oracle, []).append(f"{finding.target}: {finding.message}")
    return fired


def test_an_error_without_id_refusing_a_lone_surrogate_is_its_answer_not_silence() -> None:
    """A parser that refuses a lone surrogate answers -32700 with no id member: the call has its answer (a -32700,
    which a lenient frame may get); the missing id is the envelope's fault, response-schema's alone."""
    call = ArgumentCall(POSITIVE, {"text": "\ud800"}, "a lone surrogate")
    frame = json.dumps({"jsonrpc": "2.0", "id": 41, "method": "tools/call",
                        "params": {"name": "echo", "arguments": call.arguments}}).encode()
    exchange = run_first_case("error-without-id", Case("echo", "tool", "echo: a lone surrogate", frame,
                                                       call_expectation(41, call, ECHO)))
    refusals = [a for a in exchange.responses() if a.id_tag == ID_MISSING]
    assert [a.incoming.error_code for a in refusals] == [-32700], exchange.arrivals
    fired = oracles_fired(exchange)
    assert OracleId.PARSE_ERROR.value not in fired, fired
    assert OracleId.NO_HANG.value not in fired, fired
    assert list(fired) == [OracleId.RESPONSE_SCHEMA.value], fired


def test_an_error_without_id_on_unparseable_bytes_is_not_a_wrong_id() -> None:
    """-32700 with no id member for bytes that are no JSON: the code is right; the envelope is response-schema's."""
    case = Case("truncated", "parse", "a truncated frame", b'{"jsonrpc":"2.0","id":', ex.parse_error())
    fired = oracles_fired(run_first_case("error-without-id", case))
    assert list(fired) == [OracleId.RESPONSE_SCHEMA.value], fired


def test_a_late_reply_to_the_handshake_notification_is_no_answer_of_the_next_frame() -> None:
    """The server answers notifications/initialized (no id) a moment later: the NUL-byte frame sent first on the
    fresh process gets its own -32700 only, and no finding says it was answered with a result."""
    case = Case("nul-byte", "parse", "a NUL byte", b"\x00", ex.parse_error())
    exchange = run_first_case("answer-notifications-without-id", case)
    assert [a.incoming.error_code for a in exchange.responses()] == [-32700], exchange.arrivals
    assert oracles_fired(exchange) == {}
