"""The catalogue for a plain JSON-RPC 2.0 server: every JSON-RPC case, none of MCP's (no handshake, no tools).

Requests that must be answered use a method no server serves, so the answer to expect is -32601 with the
request's own id, whatever the server's methods are; `method` is a method the OpenRPC document declares.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace

from mcpfuzz.strategies.messages import FrameBuilder

from mcpfuzz.jsonrpc import expectation as ex
from mcpfuzz.jsonrpc.encode import dumps
from mcpfuzz.jsonrpc.expectation import Expectation
from mcpfuzz.jsonrpc.frame import Case
from mcpfuzz.jsonrpc.ids import ABSENT
from mcpfuzz.jsonrpc.oracle_ids import OracleId
from mcpfuzz.jsonrpc.versions import LATEST_LEGACY, Era

UNKNOWN = "mcpfuzz.no_such_method"
FIRST_ID = 100
RESPONSE_ID = 987655  # the id of the response object sent to the server (no request of the server carries it)


def _parse(b: FrameBuilder) -> Iterator[Case]:
    valid = b.frame(UNKNOWN, id=b.fresh_id())
    yield Case("truncated", "parse", "truncated JSON object", valid[:-1], ex.parse_error())
    yield Case("bad-json", "parse", "not JSON at all", b"{bad json", ex.parse_error())
    yield Case("trailing-comma", "parse", "trailing comma in an object", valid[:-1] + b",}", ex.parse_error())
    yield Case("invalid-utf8", "parse", "bytes that are not UTF-8", b"\xff\xfe\xfd", ex.parse_error())


def _envelope(b: FrameBuilder) -> Iterator[Case]:
    for name, raw in (("empty-object", b"{}"), ("number", b"42"), ("string", b'"x"'), ("true", b"true")):
        yield Case(name, "envelope", f"bare {raw.decode()}", raw, ex.invalid_request(None))
    for name, version in (("jsonrpc-missing", ABSENT), ("jsonrpc-1.0", "1.0"), ("jsonrpc-number", 2.0)):
        rid = b.fresh_id()
        yield Case(name, "envelope", f"jsonrpc member {name.split('-', 1)[1]}",
                   b.frame(UNKNOWN, id=rid, jsonrpc=version), ex.invalid_request(rid))
    for name, value in (("method-missing", ABSENT), ("method-number", 5), ("method-null", None)):
        rid = b.fresh_id()
        yield Case(name, "envelope", f"method {name.split('-', 1)[1]}", b.frame(value, {}, rid),
                   ex.invalid_request(rid))


def _batches(b: FrameBuilder) -> Iterator[Case]:
    """JSON-RPC 2.0 section 6: `[]` is one -32600 with id null; notifications alone get no reply at all."""
    yield Case("empty-array", "batch", "an empty batch", b"[]", ex.invalid_request(None))
    notification = b.frame(UNKNOWN)
    yield Case("notifications-only", "batch", "a batch of two notifications",
               b"[" + notification + b"," + notification + b"]", ex.no_reply())


def _ids(b: FrameBuilder) -> Iterator[Case]:
    """Ids of every type JSON-RPC 2.0 allows come back unchanged (section 5: the same value and type)."""
    for name, value in (("string-digits", "1"), ("leading-zeros", "007"), ("zero", 0), ("negative", -1),
                        ("above-2-53", 2**53 + 1), ("long-string", "i" * 10_000)):
        yield Case(name, "id", f"id {name}", b.frame(UNKNOWN, id=value), ex.method_not_found(value))
    # Section 4: a request is a notification only when it has no `id` member; `"id": null` is a request (its use
    # is discouraged, not forbidden), so it gets a response whose id is null. MCP forbids null ids, JSON-RPC not.
    yield Case("null", "id", "id null: a request, not a notification", b.frame(UNKNOWN, id=None),
               replace(ex.method_not_found(None), null_id_ok=True))


def _methods(b: FrameBuilder, method: str) -> Iterator[Case]:
    rid = b.fresh_id()
    yield Case("unknown", "method", "an unknown method", b.frame(UNKNOWN, id=rid), ex.method_not_found(rid))
    yield Case("unknown-notification", "method", "an unknown notification", b.frame(UNKNOWN), ex.no_reply())
    rid = b.fresh_id()
    yield Case("params-string", "params", f"{method} with params that are a string",
               dumps({"jsonrpc": "2.0", "id": rid, "method": method, "params": "x"}),
               ex.invalid_params(rid, also=frozenset({ex.INVALID_REQUEST})))
    # JSON-RPC 2.0 alone: a server receives requests and notifications, so a response object sent to it is not a
    # valid request, and -32600 (its id, or null) is as right as silence. "Never answer a response" is MCP's rule
    # for two peers that both send requests, not JSON-RPC's.
    yield Case("response-result", "notification", "a response object sent to the server",
               dumps({"jsonrpc": "2.0", "id": RESPONSE_ID, "result": {}}),
               Expectation(judge=OracleId.NO_HANG, reply=False, id_recoverable=False, batch_ids=(RESPONSE_ID,),
                           note="a response object sent to a JSON-RPC server: silence, or -32600 (invalid request)"))


def _sizes(b: FrameBuilder) -> Iterator[Case]:
    deep: object = "bottom"
    for _ in range(256):
        deep = {"a": deep}
    rid = b.fresh_id()
    yield Case("nested-256", "size", "params nested 256 deep", b.frame(UNKNOWN, {"deep": deep}, rid),
               ex.any_answer(rid))
    rid = b.fresh_id()
    yield Case("crlf", "size", "a request ending in CRLF", b.frame(UNKNOWN, id=rid) + b"\r",
               ex.method_not_found(rid))


def jsonrpc_catalogue(method: str) -> list[Case]:
    """Every case, in a fixed order; `method` is one the server declares (for the params case)."""
    b = FrameBuilder(Era.LEGACY, LATEST_LEGACY, next_id=FIRST_ID)  # the legacy builder adds no `_meta`
    return [*_parse(b), *_envelope(b), *_batches(b), *_ids(b), *_methods(b, method), *_sizes(b)]
