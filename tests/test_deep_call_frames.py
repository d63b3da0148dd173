"""A tools/call frame nested past a reader's limit, on a real server that drops such frames: its silence is the
limit's (one low no-hang finding, as for any frame that deep), not a medium invalid-params one."""

from __future__ import annotations

import json
import sys

import anyio
import pytest
from mcpfuzz.strategies.frames.context import FrameContext
from mcpfuzz.strategies.frames.expect import expect_frame

from mcpfuzz.engine.judge import FindingSet
from mcpfuzz.engine.session.session import Session, SessionOptions
from mcpfuzz.jsonrpc.exchange import Exchange
from mcpfuzz.jsonrpc.expectation import ReaderLimit
from mcpfuzz.jsonrpc.frame import Case
from mcpfuzz.jsonrpc.oracle_ids import OracleId
from mcpfuzz.jsonrpc.parts.past_limit import PastLimit
from mcpfuzz.jsonrpc.versions import Era
from mcpfuzz.oracles.base import Severity, all_oracles
from mcpfuzz.transport.stdio_target import StdioTarget
from tests.engine_runs import MCP_SERVER

pytestmark = pytest.mark.process

ECHO = {"name": "echo", "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}},
                                        "required": ["text"]}}
CONTEXT = FrameContext(Era.LEGACY, "2025-11-25", ECHO, {"text": ""}, False, frozenset({"echo"}))
DEPTH = 256  # past the test server's drop-deep limit (200) and past every reader limit mcpfuzz allows for


def deep_call(rid: int) -> bytes:
    """The frame family `nesting` draws: a call of the tool whose params carry a deep value beside its arguments."""
    deep: object = "bottom"
    for _ in range(DEPTH):
        deep = {"a": deep}
    return json.dumps({"jsonrpc": "2.0", "id": rid, "method": "tools/call",
                       "params": {"name": "echo", "arguments": {"text": ""}, "deep": deep}}).encode()


def test_silence_on_a_deep_call_is_blamed_on_the_nesting_limit() -> None:
    """A deep member a method does not take is nothing wrong with the envelope: past the limit, silence is low."""
    expect = expect_frame(deep_call(7), CONTEXT)
    assert expect.judge == OracleId.INVALID_PARAMS
    assert expect.part(PastLimit) == PastLimit(ReaderLimit.NESTING)


def test_a_server_dropping_a_deep_call_gets_one_low_no_hang_finding() -> None:
    """drop-deep: the call is dropped unanswered; judged, the only finding is no-hang's, low."""
    data = deep_call(41)
    case = Case("nesting", "frames", "a deep call", data, expect_frame(data, CONTEXT))

    async def main() -> Exchange:
        target = StdioTarget((sys.executable, str(MCP_SERVER), "--bug", "drop-deep"))
        async with Session(target, SessionOptions(timeout=10.0)) as session:
            await session.ensure_ready()
            return await session.run_case(case)

    exchange = anyio.run(main)
    assert exchange.arrivals == [] and exchange.barrier_answered
    findings = FindingSet()
    findings.judge(exchange, tuple(all_oracles()))
    assert [(f.oracle, f.severity) for f in findings.all()] == [(OracleId.NO_HANG.value, Severity.LOW)]
