"""Pipelined windows over the in-process transport: several cases in flight, each judged as if it ran alone."""

from __future__ import annotations

import contextlib
import json
import sys
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import anyio
import pytest

from mcpfuzz.engine.judge import FindingSet
from mcpfuzz.engine.searches.caller import CALL_FIRST_ID
from mcpfuzz.engine.searches.frame_fuzz import FRAME_FIRST_ID
from mcpfuzz.engine.session.session import HARNESS_FIRST_ID, Session, SessionOptions
from mcpfuzz.engine.session.windows import run_in_order
from mcpfuzz.jsonrpc import expectation as ex
from mcpfuzz.jsonrpc.encode import dumps, error_response, request, response
from mcpfuzz.jsonrpc.exchange import ID_CURRENT, Exchange
from mcpfuzz.jsonrpc.frame import Case
from mcpfuzz.jsonrpc.ids import ABSENT
from mcpfuzz.oracles.base import all_oracles
from mcpfuzz.transport.memory import MemoryTarget, Reply
from tests.conftest import run_cli
from tests.diffs import assert_same_lines
from tests.engine_runs import TOOL_SERVER

pytestmark = pytest.mark.process

OPTIONS = SessionOptions(timeout=10.0, grace=0.01)  # generous: a test waits this long only when something is broken
FIRST_ID = 101
CASES = 6
# What the server does with one case's request: the lines it answers (None: the right answer).
Misbehaviour = Callable[[dict[str, Any]], "list[bytes] | Reply | None"]


class WindowServer:
    """A legacy-era server that holds its answers until the next ping, so a window's answers all come at once.

    `batches` lists, for each ping of the harness, the case ids read since the previous one: a pipelined
    window shows as one batch holding every case. `reverse` answers each batch last first.
    """

    def __init__(self, misbehave: Misbehaviour | None = None, *, reverse: bool = False,
                 barrier_first: bool = False) -> None:
        self.misbehave = misbehave
        self.reverse = reverse
        self.barrier_first = barrier_first  # the ping answered before the answers held (as an async server may)
        self.held: list[bytes] = []
        self.batches: list[list[Any]] = []
        self._read: list[Any] = []

    def __call__(self, frame: bytes) -> Reply | list[bytes] | None:
        message = json.loads(frame)
        method, rid = message.get("method"), message.get("id", ABSENT)
        if method == "initialize":
            self.held, self._read = [], []  # a new process: nothing of the old one is held
            return [dumps(response(rid, {"protocolVersion": message["params"]["protocolVersion"],
                                         "capabilities": {}, "serverInfo": {"name": "held", "version": "1"}}))]
        if method == "notifications/initialized":
            return None
        if method == "ping" and isinstance(rid, int) and rid > HARNESS_FIRST_ID:
            if self._read or self.held:  # a barrier with no case before it (the handshake's own) is no batch
                self.batches.append(self._read)
            self._read = []
            held, self.held = self.held, []
            answers = list(reversed(held) if self.reverse else held)
            barrier = dumps(response(rid, {}))
            return [barrier, *answers] if self.barrier_first else [*answers, barrier]
        self._read.append(rid)
        answer = self.misbehave(message) if self.misbehave is not None else None
        if isinstance(answer, Reply):
            held, self.held = self.held, []
            return Reply((*held, *answer.lines), answer.stderr, answer.exit)
        self.held.extend(answer if answer is not None else
                         [dumps(error_response(rid, ex.METHOD_NOT_FOUND, "Method not found"))])
        return None


def cases() -> list[Case]:
    """Requests for unknown methods, each due -32601 with its own id: every one may share a window."""
    made = []
    for rid in range(FIRST_ID, FIRST_ID + CASES):
        frame = dumps(request(f"mcpfuzz/unknown-{rid}", {}, rid))
        made.append(Case(f"unknown-{rid}", "window", f"unknown method {rid}", frame, ex.method_not_found(rid)))
    return made


def run(server: WindowServer, *, pipelined: bool, patient: bool = False,
        options: SessionOptions = OPTIONS) -> tuple[list[Exchange], Session]:
    """Every case on one session over `server`, in windows or each alone; the session is returned closed."""
    made = [replace(case, patient=True) for case in cases()] if patient else cases()

    async def main() -> tuple[list[Exchange], Session]:
        with anyio.fail_after(60):  # a hang is a failure, not a stuck test run
            async with Session(MemoryTarget(server), options) as session:
                if pipelined:
                    return [exchange async for exchange in run_in_order(session, made)], session
                return [await session.run_case(case) for case in made], session

    return anyio.run(main)


def findings(exchanges: list[Exchange]) -> list[tuple[str, str, str]]:
    """Every finding of the exchanges: oracle, the case it is on, and its message."""
    found = FindingSet()
    oracles = tuple(all_oracles())
    for exchange in exchanges:
        found.judge_all(exchange, oracles)
    return sorted((f.oracle, f.target, f.message) for f in found.all())


def own_answers(exchange: Exchange) -> list[Any]:
    """The ids of the answers tagged as this case's own."""
    return [a.incoming.id for a in exchange.arrivals if a.id_tag == ID_CURRENT]


def test_a_window_puts_every_case_in_flight_before_one_barrier() -> None:
    server = WindowServer()
    exchanges, session = run(server, pipelined=True)
    # The server read all six cases before the harness' first ping after the handshake: one window, one barrier.
    assert server.batches == [list(range(FIRST_ID, FIRST_ID + CASES))]
    assert [own_answers(e) for e in exchanges] == [[rid] for rid in range(FIRST_ID, FIRST_ID + CASES)]
    assert all(e.barrier_answered and not e.timed_out and e.crash is None for e in exchanges)
    assert session.process == 1 and session.restarts == 0
    assert findings(exchanges) == []


def test_each_case_alone_gets_a_barrier_of_its_own() -> None:
    server = WindowServer()
    run(server, pipelined=False)
    assert server.batches == [[rid] for rid in range(FIRST_ID, FIRST_ID + CASES)]


def test_calls_answered_after_the_barrier_are_waited_for_as_alone_not_just_the_grace() -> None:
    server = WindowServer(barrier_first=True)
    exchanges, session = run(server, pipelined=True, patient=True, options=SessionOptions(timeout=10.0, grace=0.0))
    assert server.batches == [list(range(FIRST_ID, FIRST_ID + CASES))]  # one window, never sent back
    assert [own_answers(e) for e in exchanges] == [[rid] for rid in range(FIRST_ID, FIRST_ID + CASES)]
    assert all(e.barrier_answered and not e.timed_out for e in exchanges)
    assert session.process == 1


def test_answers_after_the_barrier_with_no_grace_send_a_window_back() -> None:
    server = WindowServer(barrier_first=True)
    exchanges, session = run(server, pipelined=True, options=SessionOptions(timeout=10.0, grace=0.0))
    assert server.batches[0] == list(range(FIRST_ID, FIRST_ID + CASES))
    assert session.process > 1  # sent back: alone each case is judged on its own


def test_answers_out_of_order_are_each_their_own_case_after_a_run_alone() -> None:
    server = WindowServer(reverse=True)
    exchanges, session = run(server, pipelined=True)
    # Out of sending order a swap of ids could not be told: the window is run again, one case at a time.
    assert server.batches[0] == list(range(FIRST_ID, FIRST_ID + CASES))
    assert server.batches[1:] == [[rid] for rid in range(FIRST_ID, FIRST_ID + CASES)]
    assert [own_answers(e) for e in exchanges] == [[rid] for rid in range(FIRST_ID, FIRST_ID + CASES)]
    assert session.process == 2 and session.restarts == 0  # mcpfuzz's own restart, not the server's fault
    assert findings(exchanges) == []


@pytest.mark.parametrize("misbehave", [
    pytest.param(lambda m: [dumps(error_response(None, -32603, "oops"))] if m["id"] == FIRST_ID + 2 else None,
                 id="id-null-in-the-middle"),
    pytest.param(lambda m: [dumps(error_response({FIRST_ID + 2: FIRST_ID + 3, FIRST_ID + 3: FIRST_ID + 2}.get(
        m["id"], m["id"]), ex.METHOD_NOT_FOUND, "Method not found"))], id="two-ids-swapped"),
    pytest.param(lambda m: [dumps(error_response(m["id"], ex.METHOD_NOT_FOUND, "no")),
                            dumps(error_response(m["id"], ex.METHOD_NOT_FOUND, "again"))]
                 if m["id"] == FIRST_ID + 4 else None, id="answered-twice"),
    pytest.param(lambda m: [dumps(error_response(str(m["id"]), ex.METHOD_NOT_FOUND, "no"))]
                 if m["id"] == FIRST_ID + 1 else None, id="id-turned-into-a-string"),
])
def test_a_wrong_answer_in_a_window_is_found_on_exactly_its_case_as_when_run_alone(misbehave: Misbehaviour) -> None:
    pipelined, _ = run(WindowServer(misbehave), pipelined=True)
    alone, _ = run(WindowServer(misbehave), pipelined=False)
    found = findings(pipelined)
    assert found, "the misbehaviour is a finding"
    assert found == findings(alone)
    assert [own_answers(e) for e in pipelined] == [own_answers(e) for e in alone]


def test_a_crash_in_a_window_is_attributed_to_the_frame_that_caused_it() -> None:
    crasher = FIRST_ID + 3

    def crash(message: dict[str, Any]) -> Reply | None:
        if message["id"] == crasher:
            return Reply(stderr="Traceback (most recent call last):\nKeyError: 'boom'\n", exit=1)
        return None

    pipelined, session = run(WindowServer(crash), pipelined=True)
    alone, _ = run(WindowServer(crash), pipelined=False)
    assert [e.case.expect.id for e in pipelined if e.crash is not None] == [crasher]
    assert [e.case.expect.id for e in alone if e.crash is not None] == [crasher]
    assert findings(pipelined) == findings(alone)
    assert [f[1] for f in findings(pipelined)] == [f"window/unknown-{crasher}"]
    assert session.restarts == 1  # the crash's restart counts; the one before the window's re-run does not


def test_what_may_break_the_stream_or_change_state_runs_alone() -> None:
    ping = dumps(request("ping", ABSENT, 5))
    shared = Case("ping", "window", "ping", ping, ex.result(5, "ping"))
    assert shared.pipelinable
    notification = Case("note", "window", "a notification", dumps(request("notifications/mcpfuzz", {})), ex.no_reply())
    assert notification.pipelinable
    alone = [
        Case("truncated", "window", "truncated", ping[:-1], ex.parse_error()),
        Case("bom", "window", "bom", b"\xef\xbb\xbf" + ping, ex.result(5, "ping")),
        Case("big", "window", "big", dumps(request("ping", {"x": "y" * 100_000}, 5)), ex.result(5, "ping")),
        Case("deep", "window", "deep", dumps(request("ping", {"x": [[[[[[[[[[1]]]]]]]]]]}, 5)), ex.result(5, "ping")),
        Case("call", "window", "call", dumps(request("tools/call", {"name": "t"}, 5)), ex.result(5, "tools/call")),
        Case("null-id", "window", "null id", dumps(request("ping", ABSENT, None)), ex.invalid_request(None)),
        Case("fresh", "window", "fresh", ping, ex.result(5, "ping"), fresh=True),
        Case("setup", "window", "setup", ping, ex.result(5, "ping"), setup=(ping,)),
        Case("dup-key", "window", "duplicate id key", b'{"jsonrpc":"2.0","id":5,"id":6,"method":"ping"}',
             ex.result(5, "ping")),
        Case("other-id", "window", "id not its own", dumps(request("ping", ABSENT, 6)), ex.result(5, "ping")),
        Case("response", "window", "a response to the server", dumps(response(5, {})), ex.no_reply()),
    ]
    assert [c.id for c in alone if c.pipelinable] == []
    read_only_call = Case("call", "window", "call", dumps(request("tools/call", {"name": "t"}, 5)),
                          ex.result(5, "tools/call"), shared_ok=True)
    assert read_only_call.pipelinable


def _lines(log: bytes) -> list[dict[str, Any]]:
    """The frames of a frame log that are JSON objects (random frames need not be)."""
    frames = []
    for line in log.splitlines():
        with contextlib.suppress(ValueError):
            value = json.loads(line)
            if isinstance(value, dict):
                frames.append(value)
    return frames


def test_a_read_only_tools_calls_share_windows_and_the_same_seed_sends_the_same_frames(tmp_path: Path) -> None:
    """The fuzz phase on the tool server's read-only tools: an example's calls go out together, then one ping."""
    logs = []
    for run_number in range(2):
        log = tmp_path / f"frames-{run_number}.log"
        result = run_cli(["run", "--seed", "7", "--budget", "60", "--timeout", "2", "--max-examples", "4",
                          "--phases", "fuzz", "--read-only", "--corpus", str(tmp_path / f"c{run_number}"),
                          "--log-frames", str(log), "--", sys.executable, str(TOOL_SERVER)], timeout=120)
        assert result.returncode == 0, result.stdout + result.stderr
        logs.append(log.read_bytes())
    assert_same_lines(logs[0], logs[1], what="frames")
    frames = _lines(logs[0])
    # Alone, a valid call waits for its answer and sends no barrier: calls followed by a harness ping are a window.
    def numbered(frame: dict[str, Any], low: int, high: int) -> bool:
        rid = frame.get("id")
        return isinstance(rid, int) and low <= rid < high

    def tool_call(frame: dict[str, Any]) -> bool:
        return frame.get("method") == "tools/call" and numbered(frame, CALL_FIRST_ID, FRAME_FIRST_ID)

    windows = [index for index in range(2, len(frames))
               if frames[index].get("method") in ("ping", "server/discover")
               and numbered(frames[index], HARNESS_FIRST_ID, CALL_FIRST_ID)
               and tool_call(frames[index - 1]) and tool_call(frames[index - 2])]
    assert windows, "no example's calls went out as one window"
