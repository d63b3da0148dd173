"""Session over the in-process transport: windows, barriers, id tags and restarts, with no subprocess."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import anyio
import pytest

from mcpfuzz.engine.session.session import Session, SessionOptions
from mcpfuzz.jsonrpc.encode import dumps, error_response, request, response
from mcpfuzz.jsonrpc.exchange import ID_CURRENT, ID_UNKNOWN, Exchange
from mcpfuzz.jsonrpc.expectation import any_answer, no_reply
from mcpfuzz.jsonrpc.frame import Case
from mcpfuzz.jsonrpc.ids import ABSENT
from mcpfuzz.jsonrpc.incoming import NOTIFICATION, RESPONSE
from mcpfuzz.transport.base import TransportKind
from mcpfuzz.transport.memory import MemoryTarget, Reply, as_reply

pytestmark = pytest.mark.unit

# Generous: a test waits this long only when something is broken (the grace is what a quiet case costs).
OPTIONS = SessionOptions(timeout=10.0, grace=0.01)
CASE_ID = 7
CASE_FRAME = dumps(request("tools/list", {}, CASE_ID))
Answer = Callable[[dict[str, Any]], "Reply | bytes | list[bytes] | None"]


class FakeServer:
    """A legacy-era MCP server in a few lines: handshake and ping answered, every frame kept, the rest to `answer`."""

    def __init__(self, answer: Answer | None = None, *, answers_ping: bool = True) -> None:
        self.answer = answer
        self.answers_ping = answers_ping
        self.frames: list[dict[str, Any]] = []

    def __call__(self, frame: bytes) -> Reply | bytes | list[bytes] | None:
        message = json.loads(frame)
        self.frames.append(message)
        method, rid = message.get("method"), message.get("id", ABSENT)
        if method == "initialize":
            return dumps(response(rid, {"protocolVersion": message["params"]["protocolVersion"],
                                        "capabilities": {}, "serverInfo": {"name": "fake", "version": "1"}}))
        if method == "ping" and self.answers_ping:
            return dumps(response(rid, {}))
        if method in ("notifications/initialized", "ping") or method is None:
            return None
        return self.answer(message) if self.answer is not None else None

    def methods(self) -> list[str]:
        """The methods of the frames read so far (responses show as "")."""
        return [m.get("method", "") for m in self.frames]


def run_cases(server: FakeServer, *cases: Case, options: SessionOptions = OPTIONS) -> tuple[list[Exchange], Session]:
    """Each case on one session over `server`, in order; the session is returned closed, for its counters."""

    async def main() -> tuple[list[Exchange], Session]:
        with anyio.fail_after(60):  # a hang is a failure, not a stuck test run
            async with Session(MemoryTarget(server), options) as session:
                return [await session.run_case(case) for case in cases], session

    return anyio.run(main)


def tools_list(frame: bytes = CASE_FRAME) -> Case:
    return Case("tools-list", "memory", "tools/list", frame, any_answer(CASE_ID, "tools/list"))


def answer_with(*messages: dict[str, Any]) -> Answer:
    return lambda message: [dumps(m) for m in messages]


def test_an_answered_request_is_tagged_as_its_own_and_settled_by_the_barrier() -> None:
    server = FakeServer(lambda m: dumps(response(m["id"], {"tools": []})))
    [exchange], session = run_cases(server, tools_list())
    assert session.transport is TransportKind.MEMORY
    assert [(a.incoming.kind, a.id_tag, a.answer_count) for a in exchange.arrivals] == [(RESPONSE, ID_CURRENT, 1)]
    assert exchange.barrier_answered is True and not exchange.timed_out and exchange.crash is None
    # The handshake (its notification settled by a ping), then the frame and its barrier (in one write, as on stdio).
    assert server.methods() == ["initialize", "notifications/initialized", "ping", "tools/list", "ping"]
    assert exchange.frames[-1] == CASE_FRAME and session.wire.frames_sent == 5 and session.restarts == 0


def test_a_wrong_id_is_tagged_unknown() -> None:
    [exchange], _ = run_cases(FakeServer(answer_with(response(999, {"tools": []}))), tools_list())
    assert [(a.id_tag, a.incoming.id) for a in exchange.arrivals] == [(ID_UNKNOWN, 999)]
    assert exchange.barrier_answered is True


def test_silence_with_an_answered_barrier_ends_after_the_grace_and_keeps_the_server() -> None:
    [first, second], session = run_cases(FakeServer(), tools_list(), tools_list())
    for exchange in (first, second):
        assert exchange.arrivals == [] and exchange.barrier_answered is True
        assert not exchange.timed_out and exchange.crash is None
    assert session.server.starts == 1 and session.restarts == 0


def test_a_stuck_server_times_out_is_killed_and_the_next_case_restarts_it() -> None:
    server = FakeServer(answers_ping=False)
    [first, second], session = run_cases(server, tools_list(), tools_list(),
                                         options=SessionOptions(timeout=0.5, grace=0.01))
    assert first.timed_out and first.barrier_answered is False and first.crash is None
    assert second.timed_out and second.barrier_answered is False
    assert session.server.starts == 2 and session.restarts == 1
    assert server.methods().count("initialize") == 2


def test_a_crash_is_recorded_with_its_stderr_and_the_next_case_runs_on_a_fresh_server() -> None:
    crashed: list[bool] = []

    def crash_once(message: dict[str, Any]) -> Reply:
        if crashed:
            return Reply((dumps(response(message["id"], {"tools": []})),))
        crashed.append(True)
        return Reply((b'{"jsonrpc":"2.0","method":"notifications/message","params":{}}',),
                     stderr="Traceback: boom\n", exit=-11)

    server = FakeServer(crash_once)
    [first, second], session = run_cases(server, tools_list(), tools_list())
    assert first.crash is not None and first.crash.returncode == -11 and "boom" in first.crash.stderr_tail
    assert first.crash.describe() == "killed by SIGSEGV"
    # What the server wrote before dying still arrives, before the exit.
    assert [a.incoming.kind for a in first.arrivals] == [NOTIFICATION]
    assert first.barrier_answered is False  # the barrier went into the pipe of a dying process
    assert [a.id_tag for a in second.arrivals] == [ID_CURRENT] and second.crash is None
    assert session.server.starts == 2 and session.restarts == 1
    assert server.methods() == ["initialize", "notifications/initialized", "ping", "tools/list",
                                "initialize", "notifications/initialized", "ping", "tools/list", "ping"]


def test_restarts_of_an_in_process_server_start_no_standby_and_measure_no_start() -> None:
    """The memory transport has no process: restarts work as before, with no standby and no start to wait for."""
    [first, second], session = run_cases(FakeServer(answers_ping=False), tools_list(), tools_list(),
                                         options=SessionOptions(timeout=0.5, grace=0.01))
    assert first.timed_out and second.timed_out and session.restarts == 1
    processes = session.processes
    assert processes.standbys == 0 and processes.warm_restarts == 0 and processes.standby_pid is None
    assert session.startup.as_dict() is None and not session.processes.standby_warm


def test_a_double_reply_is_counted_per_id() -> None:
    twice = response(CASE_ID, {"tools": []})
    [exchange], _ = run_cases(FakeServer(answer_with(twice, twice)), tools_list())
    assert [(a.id_tag, a.answer_count) for a in exchange.arrivals] == [(ID_CURRENT, 1), (ID_CURRENT, 2)]


def test_a_notification_gets_nothing_and_the_barrier_settles_it() -> None:
    frame = dumps(request("notifications/mcpfuzz-test", {}))
    case = Case("notification", "memory", "a notification", frame, no_reply())
    [exchange], _ = run_cases(FakeServer(), case)
    assert exchange.arrivals == [] and exchange.barrier_answered is True and not exchange.timed_out


def test_a_request_of_the_server_is_recorded_and_answered() -> None:
    asks = [request("ping", ABSENT, "s-1"), request("sampling/createMessage", {}, "s-2"),
            request("mcpfuzz/unknown", {}, "s-3")]
    server = FakeServer(lambda m: [*(dumps(a) for a in asks), dumps(response(m["id"], {"tools": []}))])

    def replies() -> dict[Any, dict[str, Any]]:
        return {m["id"]: m for m in server.frames if "method" not in m}

    async def main() -> Exchange:
        with anyio.fail_after(60):
            async with Session(MemoryTarget(server), OPTIONS) as session:
                exchange = await session.run_case(tools_list())
                while len(replies()) < 3:  # the answers go out from a task of their own: the case does not wait
                    await anyio.sleep(0.01)
                return exchange

    exchange = anyio.run(main)
    assert [r.message["id"] for r in exchange.server_requests] == ["s-1", "s-2", "s-3"]
    assert [a.id_tag for a in exchange.arrivals] == [ID_CURRENT]
    # Sampling is a declared capability (by default): a text message; a request no capability covers: -32601.
    assert replies()["s-1"]["result"] == {} and replies()["s-2"]["result"]["role"] == "assistant"
    assert replies()["s-3"]["error"]["code"] == -32601


@pytest.mark.parametrize(("answer", "lines"), [
    (None, ()), (b"x", (b"x",)), ([b"a", b"b"], (b"a", b"b")), (Reply((b"c",), exit=0), (b"c",)),
])
def test_a_handler_may_answer_with_a_reply_a_line_lines_or_nothing(answer: Any, lines: tuple[bytes, ...]) -> None:
    assert tuple(as_reply(answer).lines) == lines


def test_initialize_answered_with_another_id_says_which_id_came_back() -> None:
    """A server that gets the handshake's id wrong is unusable; the error names the id it sent, not a timeout."""
    from mcpfuzz.engine.errors import UnusableServer
    from mcpfuzz.engine.surface.probe import probe

    def server(frame: bytes) -> bytes | None:
        message = json.loads(frame)
        if message.get("method") == "initialize":
            return dumps(response(999, {"protocolVersion": "2025-11-25", "capabilities": {}, "serverInfo": {}}))
        if "id" in message:
            return dumps(error_response(message["id"], -32601, "no such method"))
        return None

    async def main() -> str:
        with anyio.fail_after(60):
            async with Session(MemoryTarget(server), OPTIONS) as session:
                try:
                    await probe(session, None)
                except UnusableServer as error:
                    return error.message
        return "no error"

    message = anyio.run(main)
    assert "was answered with id 999" in message and "initialize (id " in message, message
