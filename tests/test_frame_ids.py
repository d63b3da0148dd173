"""Random frames with an id written in: a request a server may still be running is never sent again on its process.

Seen on the npm filesystem server: a deep `tools/call` with id "0922" got no answer before the barrier (the
tool reads the disk asynchronously), was taken for dropped, and the same frame sent again on that process
collected both answers: a `single-response` finding that no fresh server repeated.
"""

from __future__ import annotations

from typing import Any

import anyio
import pytest

from mcpfuzz.engine.judge import FindingSet
from mcpfuzz.engine.searches.frame_fuzz import FrameFuzz, dispatchable
from mcpfuzz.engine.searches.search import SearchOptions
from mcpfuzz.engine.session.session import Session, SessionOptions
from mcpfuzz.jsonrpc.encode import dumps, response
from mcpfuzz.jsonrpc.expectation import any_answer
from mcpfuzz.jsonrpc.frame import Case
from mcpfuzz.jsonrpc.oracle_ids import OracleId
from mcpfuzz.transport.memory import MemoryTarget
from tests.test_memory_transport import FakeServer

pytestmark = pytest.mark.unit

SLOW_CALL = b'{"jsonrpc":"2.0","id":"0922","method":"tools/call","params":{"name":"read","arguments":{}}}'


class LateAnswers(FakeServer):
    """A tool slower than a ping the first time (its disk cold): that answer comes with the next call's own."""

    def __init__(self) -> None:
        super().__init__(self._call)
        self.calls = 0

    def _call(self, message: dict[str, Any]) -> Any:
        self.calls += 1
        answer = dumps(response(message["id"], {"content": [], "isError": True}))
        return None if self.calls == 1 else [answer] * (2 if self.calls == 2 else 1)

    def __call__(self, frame: bytes) -> Any:
        if b'"initialize"' in frame:
            self.calls = 0  # a fresh process: its disk cache is cold again
        return super().__call__(frame)


def test_dispatchable_is_a_request_a_server_could_answer_later() -> None:
    assert dispatchable(SLOW_CALL)
    assert dispatchable(b'[1, {"jsonrpc":"2.0","id":3,"method":"ping"}]')
    assert not dispatchable(b'{"jsonrpc":"2.0","id":"0922","method":"tools/call"')  # not JSON
    assert not dispatchable(b'{"id":"0922","method":"tools/call"}')  # no "jsonrpc": "2.0"
    assert not dispatchable(b'{"jsonrpc":"2.0","id":"x","method":7}')
    assert not dispatchable(b'{"jsonrpc":"2.0","id":true,"method":"ping"}')
    assert not dispatchable(b'{"jsonrpc":"2.0","method":"notifications/initialized"}')


def test_a_request_unanswered_at_its_barrier_is_not_sent_again_on_its_process() -> None:
    server = LateAnswers()
    findings = FindingSet()

    def judge(phase: object, exchange: Any) -> list:
        return findings.judge_all(exchange, (OracleId.SINGLE_RESPONSE,))

    case = Case("frames/nesting", "frames", "a slow call", SLOW_CALL, any_answer("0922", "tools/call"))

    async def main() -> tuple[list | None, list | None, int]:
        with anyio.fail_after(60):
            async with Session(MemoryTarget(server), SessionOptions(timeout=10.0, grace=0.01)) as session:
                fuzz = FrameFuzz(session, judge, SearchOptions(seed=1, database_root=None, server_label="fake"))
                await session.ensure_ready()
                first = await fuzz._send(case, ("0922",), shrinking=False)
                assert first == []  # judged: no answer before the barrier (a no-reply oracle's business)
                again = await fuzz._send(case, ("0922",), shrinking=False)  # generating: left out
                shrinking = await fuzz._send(case, ("0922",), shrinking=True)  # shrinking: on a fresh process
                return again, shrinking, session.planned_restarts  # a fresh process asked for, not forced

    again, shrinking, restarts = anyio.run(main)
    assert again is None
    assert shrinking is not None and restarts >= 1
    assert [f.oracle for f in findings.all()] == []
