"""What a correct server answers to a frame, decided from the frame's final bytes alone.

The frame is read as RFC 8259 reads it; where readers may legitimately differ (a BOM, bad bytes inside
a string, duplicate keys, two texts on one line, a huge or deeply nested text) every defensible answer
is accepted. When the spec leaves the answer open, only a crash, a hang or garbage on stdout counts.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from mcpfuzz.strategies.frames.context import INT64, FrameContext, anything
from mcpfuzz.strategies.frames.read import JsonObject, depth, has_big_integer, has_duplicates, lax_values, strict_value
from mcpfuzz.strategies.frames.request import expect_object

from mcpfuzz.jsonrpc import expectation as ex
from mcpfuzz.jsonrpc.expectation import Expectation, ReaderLimit
from mcpfuzz.jsonrpc.ids import is_valid_mcp_id
from mcpfuzz.jsonrpc.oracle_ids import OracleId
from mcpfuzz.jsonrpc.parts.leniency import Lenient
from mcpfuzz.jsonrpc.parts.past_limit import PastLimit
from mcpfuzz.jsonrpc.versions import BATCH_VERSION

BIG_FRAME = 64 * 1024  # RFC 8259 section 9: a reader may limit the size of texts
DEEP = 32  # ... and their nesting; past these, a refusal with id null is accepted too
# The shallowest nesting limit of the readers the SDKs use (pydantic-core's). A frame no deeper than this that
# also carries an integer beyond 2**53 is refused for the integer, if at all (JavaScript's readers cannot hold it).
SDK_READER_DEPTH = 200
# The judges of a frame whose envelope is valid: a server refuses it after reading it whole, so silence on such a
# frame past a reader limit is the limit's.
ANSWERED_PAST_THE_ENVELOPE = frozenset({OracleId.METHOD_NOT_FOUND, OracleId.INVALID_PARAMS})


def expect_frame(data: bytes, ctx: FrameContext, ids: tuple[Any, ...] = ()) -> Expectation:
    """The expectation for one frame (no line break inside); `ids` are every id it was built with."""
    if not data.strip(b" \t\r"):
        return anything("a blank line carries no message", ids)
    ok, value = strict_value(data)
    if ok and not has_duplicates(value):
        return _loosen(expect_value(value, ctx), data, [value], ids)
    values = lax_values(data)
    if values is None:
        return _loosen(ex.parse_error(), data, [], ids)  # no reader can take it, however lenient
    if not values:
        return anything("a BOM alone carries no message", ids)
    return _loosen(_either_reading(values, ctx, ids), data, values, ids)


def expect_value(value: Any, ctx: FrameContext) -> Expectation:
    """JSON-RPC 2.0 section 5 and MCP on one decoded JSON text."""
    if isinstance(value, list):
        return _array(value, ctx)
    if not isinstance(value, dict):
        return ex.invalid_request(None)
    return expect_object(value, ctx)


def _either_reading(values: list[Any], ctx: FrameContext, ids: tuple[Any, ...]) -> Expectation:
    """A frame strict readers refuse (-32700, id null) and lenient ones read: both answers are fine."""
    # The lax reader decodes every object as a JsonObject, which remembers its repeated keys.
    if all(isinstance(v, JsonObject) and "method" in v and "id" not in v.conflicting and _readable(v.get("id"))
           for v in values):
        found = tuple(v["id"] for v in values)
        if len({repr(i) for i in found}) == len(found):
            # As the catalogue's parse/utf8-bom and parse/two-on-one-line.
            return Expectation(judge=OracleId.PARSE_ERROR, id=found[0], codes=frozenset({ex.PARSE_ERROR}),
                               result_ok=True, null_id_ok=True, batch_ids=found if len(found) > 1 else (),
                               parts=(Lenient(),))
    if len(values) == 1 and not has_duplicates(values[0]):
        inner = expect_value(values[0], ctx)
        if inner.reply and not inner.id_recoverable and inner.codes and not inner.batch_ids:
            return Expectation(judge=OracleId.PARSE_ERROR, id=None, id_recoverable=False, result_ok=inner.result_ok,
                               codes=inner.codes | {ex.PARSE_ERROR})
    return anything("readers may differ on this frame (a BOM, bad bytes, duplicate keys or two texts)", ids)


def _readable(id: Any) -> bool:
    """A valid MCP id every reader takes the same way: no integer beyond 64 bits, no string that looks like a
    number (a server that coerces it answers under another id, which the parse-error oracle would blame)."""
    if isinstance(id, str):
        try:
            float(id)
        except ValueError:
            return True
        return False
    return is_valid_mcp_id(id) and abs(id) < INT64


def _loosen(expect: Expectation, data: bytes, values: list[Any], ids: tuple[Any, ...]) -> Expectation:
    """RFC 8259 section 9: past a size or depth limit a reader may refuse the text (with id null); section 6:
    integers beyond 2**53 may be read inexactly. Silence past such a limit is low (a `PastLimit` part)."""
    limit = _limit_passed(data, values)
    if limit is None:
        return expect
    if limit is ReaderLimit.BIG_INTEGER:
        # A reader may refuse the frame (any error, id null when it cannot hold the id): allowed, not a finding.
        return replace(expect.with_part(PastLimit(limit)), error_ok=True, null_id_ok=True) if expect.reply else expect
    if not expect.reply or expect.has(Lenient):
        return anything("a reader may refuse a frame this big or this deep", ids)
    # Silence is blamed on the limit only when nothing else is wrong with the frame: an invalid envelope that is
    # also deep is dropped for being invalid as often as for its depth, and invalid-request says so. An unknown
    # method or params a method does not take are nothing wrong with the envelope (servers answer them, -32601
    # and -32602; the deep value is itself a member the method does not take): silence there is the limit's too.
    past: ReaderLimit | None = limit if expect.well_formed or expect.judge in ANSWERED_PAST_THE_ENVELOPE else None
    if past is ReaderLimit.NESTING and all(depth(v) <= SDK_READER_DEPTH for v in values) \
            and any(has_big_integer(v) for v in values):
        past = ReaderLimit.BIG_INTEGER  # past both limits, and only this one is any SDK's
    return replace(expect if past is None else expect.with_part(PastLimit(past)), codes=frozenset(), error_ok=True,
                   null_id_ok=True, note="a frame this big or this deep may be refused")


def _limit_passed(data: bytes, values: list[Any]) -> ReaderLimit | None:
    """The first reader limit the frame goes past: size, then nesting, then big integers."""
    if len(data) > BIG_FRAME:
        return ReaderLimit.SIZE
    if max((depth(v) for v in values), default=0) > DEEP:
        return ReaderLimit.NESTING
    if any(has_big_integer(v) for v in values):
        return ReaderLimit.BIG_INTEGER
    return None


def _array(items: list, ctx: FrameContext) -> Expectation:
    """JSON-RPC 2.0 section 6 batches: MCP has them only in 2025-03-26; `[]` is invalid everywhere."""
    if not items:
        return ex.invalid_request(None)
    # Every id in the batch, valid or not: a server that serves batches may echo any of them.
    ids = tuple(i["id"] for i in items if isinstance(i, dict) and i.get("id") is not None)
    if len({repr(i) for i in ids}) != len(ids):
        return anything("a batch that repeats an id", ids)
    inner = [expect_object(i, ctx) if isinstance(i, dict) else ex.invalid_request(None) for i in items]
    if ctx.version != BATCH_VERSION:
        refused = [e for e in inner if not e.well_formed]
        if not all(e.reply for e in inner) or any(not e.codes for e in refused):
            # A server that still serves batches may stay silent on some elements or pick any code.
            return anything(f"an array: invalid before {BATCH_VERSION}, but a lenient server may serve it", ids)
        codes = frozenset({ex.INVALID_REQUEST}).union(*(e.codes for e in refused))
        # A server that still serves batches answers each element: accepted, as in the catalogue.
        return Expectation(judge=OracleId.INVALID_REQUEST, id=None, id_recoverable=False, batch_ids=ids, codes=codes,
                           result_ok=True, note=f"batches exist only in protocol {BATCH_VERSION}")
    methods = {e.method for e in inner}
    if all(e.well_formed and not e.error_ok and not e.null_id_ok for e in inner) and len(methods) == 1:
        return Expectation(judge=OracleId.NO_HANG, id=ids[0], batch_ids=ids, result_ok=True, error_ok=False,
                           well_formed=True, method=methods.pop())
    if len(items) == 1:
        return inner[0]  # a batch of one is judged as its element (the session unpacks the reply array)
    if all(not isinstance(i, dict) for i in items):
        return ex.invalid_request(None)
    return anything("a batch mixing kinds of elements", ids)
