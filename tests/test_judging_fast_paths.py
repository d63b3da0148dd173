"""The shortcuts of a judged case keep behaviour: a line decoded by the shared decoder reads as the careful
decoding reads it, a stderr tail read from its end is the whole's last lines, ids keep their JSON type, and the
collector's waits end on an arrival, at their deadline, or on cancellation without waking or breaking another."""

from __future__ import annotations

import json
import sys
from typing import Any

import anyio
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mcpfuzz.engine.session.collector import Collector
from mcpfuzz.jsonrpc.ids import id_key, json_type
from mcpfuzz.jsonrpc.incoming import EXACT_DIGITS, NOISE, classify, kind_of, read_integer
from mcpfuzz.jsonrpc.oracle_ids import OracleId
from mcpfuzz.transport.stderr_tail import StderrTail, whole_text

pytestmark = pytest.mark.unit


def careful(line: bytes) -> tuple[Any, str, str]:
    """The message, kind and constant of a line read the careful way only (every integer and constant hooked)."""
    constants: list[str] = []

    def constant(name: str) -> float:
        constants.append(name)
        return float(name)

    try:
        message = json.loads(line.decode("utf-8"), parse_int=read_integer, parse_constant=constant)
    except (UnicodeDecodeError, ValueError, RecursionError):
        return None, NOISE, ""
    return message, kind_of(message), constants[0] if constants else ""


def same(a: Any, b: Any) -> bool:
    """Equal with JSON types kept apart (1 is not 1.0 nor True) and NaN equal to itself."""
    if isinstance(a, float) and isinstance(b, float) and a != a and b != b:
        return True
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    return bool(a == b)


LINES = [
    b'{"jsonrpc":"2.0","id":1,"result":{}}',
    b'{"jsonrpc":"2.0","id":"7","result":{"content":[{"type":"text","text":"NaN and Infinity in a string"}]}}',
    b'{"jsonrpc":"2.0","id":2,"result":{"x":NaN}}',
    b'{"jsonrpc":"2.0","id":2,"result":{"x":-Infinity}}',
    b'{"jsonrpc":"2.0","id":' + b"9" * 4100 + b',"result":{}}',
    b'{"jsonrpc":"2.0","id":' + b"9" * 5000 + b',"result":{}}',
    b'{"jsonrpc":"2.0","id":-' + b"9" * (EXACT_DIGITS + 5) + b',"result":{}}',
    b'{"jsonrpc":"2.0","id":1.5e400,"result":{}}',
    b'\xef\xbb\xbf{"jsonrpc":"2.0","id":1,"result":{}}',
    b'{"jsonrpc":"2.0","id":1,"result":{}} trailing',
    b'{"a":1,"a":2}',
    b"\xff\xfe not utf-8",
    b"[" * 100_000 + b"]" * 100_000,
    b"[]", b"[1, 2]", b'[{"id":1,"result":{}}]', b"null", b"42", b'"text"', b"", b"   ",
]


@pytest.mark.parametrize("line", LINES, ids=range(len(LINES)))
def test_a_line_reads_as_the_careful_decoding_reads_it(line: bytes) -> None:
    incoming = classify(line)
    message, kind, constant = careful(line)
    assert incoming.kind == kind
    assert incoming.non_json_number == constant
    if kind != NOISE:
        assert same(incoming.message, message)


JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=4), inner, max_size=4),
    max_leaves=12)


@settings(max_examples=300, deadline=None)
@given(value=JSON_VALUES, constant=st.sampled_from(["", "NaN", "Infinity", "-Infinity"]),
       huge=st.sampled_from([0, 4000, 4400]))
def test_drawn_lines_read_as_the_careful_decoding_reads_them(value: Any, constant: str, huge: int) -> None:
    text = json.dumps({"jsonrpc": "2.0", "id": 3, "result": {"v": value}})
    if constant:
        text = text[:-2] + f', "c": {constant}' + "}}"
    if huge:
        text = text[:-2] + f', "n": {"7" * huge}' + "}}"
    line = text.encode()
    incoming = classify(line)
    message, kind, found = careful(line)
    assert (incoming.kind, incoming.non_json_number) == (kind, found)
    assert same(incoming.message, message)


STDERR_BYTES = st.lists(st.sampled_from([
    b"\n", b"\r\n", b"\r", b"  ", b"\t", b"\x0b", b"\x1c", b"\xc2\x85", b"\xe2\x80\xa8", b"\xe2\x82", b"\xff",
    b"\xc3\xa9", b"log line", b"x", b"Traceback (most recent call last):"]), max_size=60).map(b"".join)


@settings(max_examples=500, deadline=None)
@given(data=STDERR_BYTES, lines=st.integers(0, 12))
def test_the_stderr_tail_read_from_its_end_is_the_last_lines_of_the_whole(data: bytes, lines: int) -> None:
    tail = StderrTail(1 << 20)
    tail.add(data)
    assert tail.text(lines) == whole_text(data, lines)


def test_a_chatty_servers_stderr_keeps_its_last_lines() -> None:
    tail = StderrTail(64 * 1024)
    for number in range(5000):
        tail.add(f"INFO request {number} handled\n".encode())
    assert tail.text(3) == "INFO request 4997 handled\nINFO request 4998 handled\nINFO request 4999 handled"


class IntId(int):
    """An int subclass (an IntEnum member is one): keyed by json_type, not the exact-type shortcut."""


@pytest.mark.parametrize("value", [0, 7, -3, 2**70, "1", "", True, False, None, 1.0, [1], {"a": 1}, IntId(5),
                                   OracleId.NO_HANG])
def test_an_id_keeps_its_json_type(value: Any) -> None:
    key = id_key(value)
    assert key[0] == json_type(value)
    assert (id_key(1) == id_key(value)) == (json_type(value) == "integer" and value == 1)


def test_a_wait_ends_at_its_deadline_without_an_arrival() -> None:
    async def main() -> None:
        collector = Collector(alive=lambda: True)
        pending = collector.expect_reply(1)
        with anyio.fail_after(30):
            await collector.wait_reply(pending, 0.05)
        assert pending.reply is None

    anyio.run(main)


def test_a_cancelled_waiter_leaves_the_others_waiting_and_wakeable() -> None:
    async def main() -> None:
        collector = Collector(alive=lambda: True)
        first, second = collector.expect_reply(1), collector.expect_reply(2)
        finished: list[int] = []

        async def wait(number: int, pending: Any) -> None:
            await collector.wait_reply(pending, 60)
            finished.append(number)

        async with anyio.create_task_group() as group:
            cancelled = anyio.CancelScope()

            async def cancellable() -> None:
                with cancelled:
                    await collector.wait_reply(first, 60)
                finished.append(-1)

            group.start_soon(cancellable)
            group.start_soon(wait, 2, second)
            await anyio.wait_all_tasks_blocked()
            cancelled.cancel()
            await anyio.wait_all_tasks_blocked()
            assert finished == [-1]  # the cancelled wait ended; the other still waits
            assert not collector._waiters or all(not w.done() for w in collector._waiters)
            second.reply = object()  # type: ignore[assignment]  (any reply will do)
            collector.wake()
            with anyio.fail_after(30):
                while 2 not in finished:
                    await anyio.sleep(0.01)
        assert finished == [-1, 2]
        assert collector._waiters == []

    anyio.run(main)


def test_waits_registered_after_a_deadline_still_wait() -> None:
    """A waiter woken by its own timer leaves nothing behind that would end the next wait at once."""
    async def main() -> None:
        collector = Collector(alive=lambda: True)
        pending = collector.expect_reply(1)
        for _ in range(3):
            await collector.wait_reply(pending, 0.01)
        assert collector._waiters == []
        with anyio.move_on_after(0.2) as scope:
            await collector.wait_reply(pending, 60)
        assert scope.cancelled_caught  # it was still waiting when cancelled from outside, not returned at once

    anyio.run(main)


@pytest.mark.parametrize("limit", [0, EXACT_DIGITS + 1])
def test_without_a_digit_limit_within_exact_digits_every_line_is_read_carefully(
        monkeypatch: pytest.MonkeyPatch, limit: int) -> None:
    """No limit (or one past EXACT_DIGITS): int() would read a huge integer exactly where read_integer rounds it."""
    from mcpfuzz.jsonrpc import incoming

    monkeypatch.setattr(incoming, "_int_digit_limit", lambda: limit)
    line = b'{"jsonrpc":"2.0","id":1,"result":{"n":' + b"9" * (EXACT_DIGITS + 1) + b"}}"
    before = sys.get_int_max_str_digits()
    sys.set_int_max_str_digits(limit)  # the plain decoder would now read the integer exactly
    try:
        message, kind, _ = careful(line)
        assert classify(line).message == message and kind == "response"
    finally:
        sys.set_int_max_str_digits(before)


def test_a_schema_met_again_judges_as_a_fresh_one() -> None:
    """The validator found by the schema object gives the verdicts one built from the schema's text gives."""
    from mcpfuzz.oracles.tool_results import schema_problem

    declared = {"type": "object", "properties": {"n": {"type": "integer", "maximum": 3}}, "required": ["n"]}
    values = [{"n": 1}, {"n": 4}, {"n": "x"}, {}, [], {"n": 3, "m": None}]
    first = [schema_problem(declared, value) for value in values]
    again = [schema_problem(declared, value) for value in values]
    copied = [schema_problem(json.loads(json.dumps(declared)), value) for value in values]
    assert first == again == copied
    assert first[0] is None and first[1] is not None and first[1][2] == "maximum" and first[3][2] == "required"
    for bound in range(300):  # short-lived schemas, each its own limit: never another's validator
        assert (schema_problem({"type": "integer", "maximum": bound}, bound + 1) is None) is False
        assert schema_problem({"type": "integer", "maximum": bound}, bound) is None
    assert schema_problem({"type": 5}, 1) is None  # an invalid schema judges nothing
