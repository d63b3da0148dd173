"""The fixed, deterministic catalogue of malformed and unusual frames, each with its expected outcome."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import replace

from mcpfuzz.strategies.logging_cases import logging_family
from mcpfuzz.strategies.messages import FrameBuilder
from mcpfuzz.strategies.meta_cases import meta_family
from mcpfuzz.strategies.subscription_cases import subscription_family

from mcpfuzz.jsonrpc import expectation as ex
from mcpfuzz.jsonrpc.encode import dumps
from mcpfuzz.jsonrpc.expectation import Expectation, ReaderLimit
from mcpfuzz.jsonrpc.frame import Case
from mcpfuzz.jsonrpc.ids import ABSENT
from mcpfuzz.jsonrpc.json_value import Json
from mcpfuzz.jsonrpc.oracle_ids import OracleId
from mcpfuzz.jsonrpc.parts.leniency import IsErrorResultOk, Lenient, QuietOk
from mcpfuzz.jsonrpc.parts.past_limit import PastLimit
from mcpfuzz.jsonrpc.parts.version_check import VersionCheck
from mcpfuzz.jsonrpc.versions import BATCH_VERSION, META_CAPABILITIES_KEY, META_VERSION_KEY, Era

BOM = b"\xef\xbb\xbf"
UNKNOWN_METHOD = "mcpfuzz/no-such-method"
UNKNOWN_TOOL = "mcpfuzz-no-such-tool"
UNSUPPORTED_VERSION = "2099-01-01"

Family = Callable[[FrameBuilder, "CatalogueContext"], Iterator[Case]]


class CatalogueContext:
    """What the probe learned that the catalogue needs: the era, a tool name, advertised capabilities, a URI."""

    def __init__(self, era: Era, version: str, tool: str | None = None,
                 capabilities: dict | None = None, resource: str | None = None) -> None:
        self.era = era
        self.version = version
        self.tool = tool
        self.capabilities = capabilities or {}
        self.resource = resource  # a listed resource's URI


def _quiet_invalid(id: Json) -> Expectation:
    """An MCP-invalid id (null, fraction, boolean, object): -32600, echoed or null; silence is low."""
    return Expectation(judge=OracleId.INVALID_REQUEST, id=id, id_recoverable=True, null_id_ok=True,
                       codes=frozenset({ex.INVALID_REQUEST}), parts=(QuietOk(),))


def parse_family(b: FrameBuilder, ctx: CatalogueContext) -> Iterator[Case]:
    """Bytes that are not JSON (JSON-RPC 2.0 section 5.1: -32700, id null)."""
    method = b.barrier_method
    valid = b.frame(method, id=b.fresh_id())
    yield Case("truncated", "parse", "truncated JSON object", valid[:-1], ex.parse_error())
    yield Case("bad-json", "parse", "not JSON at all", b"{bad json", ex.parse_error())
    yield Case("trailing-comma", "parse", "trailing comma in an object",
               valid[:-1] + b",}", ex.parse_error())
    yield Case("single-quotes", "parse", "single-quoted keys", b"{'jsonrpc':'2.0','id':1}", ex.parse_error())
    yield Case("invalid-utf8", "parse", "bytes that are not UTF-8", b"\xff\xfe\xfd", ex.parse_error())
    yield Case("nul-byte", "parse", "a NUL byte outside any string", b'{"jsonrpc":"2.0",\x00}', ex.parse_error())
    bad_string_id = b.fresh_id()
    bad_string = b.frame(method, {"note": "X"}, bad_string_id).replace(b'"X"', b'"\xc3\x28"')
    yield Case("invalid-utf8-in-string", "parse", "invalid UTF-8 inside a string value", bad_string,
               Expectation(judge=OracleId.PARSE_ERROR, id=bad_string_id, codes=frozenset({ex.PARSE_ERROR}),
                           result_ok=True, null_id_ok=True, parts=(Lenient(),)))
    bom_id = b.fresh_id()
    yield Case("utf8-bom", "parse", "a UTF-8 byte order mark before a valid request",
               BOM + b.frame(method, id=bom_id),
               Expectation(judge=OracleId.PARSE_ERROR, id=bom_id, codes=frozenset({ex.PARSE_ERROR}), result_ok=True,
                           null_id_ok=True, parts=(Lenient(),)))
    first, second = b.fresh_id(), b.fresh_id()
    yield Case("two-on-one-line", "parse", "two requests on one line",
               b.frame(method, id=first) + b.frame(method, id=second),
               Expectation(judge=OracleId.PARSE_ERROR, id=first, codes=frozenset({ex.PARSE_ERROR}), result_ok=True,
                           null_id_ok=True, batch_ids=(first, second), parts=(Lenient(),)))


def envelope_family(b: FrameBuilder, ctx: CatalogueContext) -> Iterator[Case]:
    """Parseable JSON that is not a valid request (JSON-RPC 2.0 section 5: -32600)."""
    for name, raw in (("empty-object", b"{}"), ("null", b"null"), ("number", b"42"), ("string", b'"x"'),
                      ("empty-array", b"[]"), ("true", b"true")):
        yield Case(name, "envelope", f"bare {raw.decode()}", raw, ex.invalid_request(None))
    method = b.barrier_method
    for name, version in (("jsonrpc-missing", ABSENT), ("jsonrpc-1.0", "1.0"), ("jsonrpc-number", 2.0)):
        rid = b.fresh_id()
        yield Case(name, "envelope", f"jsonrpc member {name.split('-', 1)[1]}",
                   b.frame(method, id=rid, jsonrpc=version), ex.invalid_request(rid))
    for name, value in (("method-missing", ABSENT), ("method-number", 5), ("method-null", None)):
        rid = b.fresh_id()
        yield Case(name, "envelope", f"method {name.split('-', 1)[1]}", b.frame(value, {}, rid),
                   ex.invalid_request(rid))
    rid = b.fresh_id()
    yield Case("method-empty", "envelope", "method is the empty string", b.frame("", id=rid),
               ex.invalid_request(rid, codes=frozenset({ex.INVALID_REQUEST, ex.METHOD_NOT_FOUND})))
    yield from _batches(b, ctx)


def _batches(b: FrameBuilder, ctx: CatalogueContext) -> Iterator[Case]:
    """Batches exist only in protocol 2025-03-26; elsewhere a batch is an invalid request."""
    first, second = b.fresh_id(), b.fresh_id()
    method = b.barrier_method
    batch = b"[" + b.frame(method, id=first) + b"," + b.frame(method, id=second) + b"]"
    if ctx.version == BATCH_VERSION:
        expect = Expectation(judge=OracleId.NO_HANG, id=first, batch_ids=(first, second), result_ok=True,
                             error_ok=False, well_formed=True, method=method)
    else:
        expect = Expectation(judge=OracleId.INVALID_REQUEST, id=None, id_recoverable=False, batch_ids=(first, second),
                             codes=frozenset({ex.INVALID_REQUEST}), result_ok=True,
                             note=f"batches exist only in protocol {BATCH_VERSION}")
    yield Case("batch", "envelope", "a batch of two valid requests", batch, expect)


def id_family(b: FrameBuilder, ctx: CatalogueContext) -> Iterator[Case]:
    """Ids of every JSON type; MCP allows strings and integers only (basic/index)."""
    method = b.barrier_method
    for name, value in (("string-digits", "1"), ("leading-zeros", "007"), ("zero", 0), ("negative", -1),
                        ("long-string", "i" * 10_000)):
        yield Case(name, "id", f"id {_short(value)}", b.frame(method, id=value), ex.result(value, method))
    # RFC 8259 section 6: past 2**53 a reader may lose the id's exact value, so a changed id or silence is low.
    above = 2**53 + 1
    yield Case("above-2-53", "id", f"id {above}", b.frame(method, id=above),
               replace(ex.result(above, method).with_part(PastLimit(ReaderLimit.BIG_INTEGER)), error_ok=True,
                       null_id_ok=True))
    big = 2**63
    yield Case("2-63", "id", "id 2**63 (beyond 64-bit signed)", b.frame(method, id=big),
               Expectation(judge=OracleId.NO_HANG, id=big, result_ok=True, error_ok=True, null_id_ok=True,
                           well_formed=True, method=method, parts=(PastLimit(ReaderLimit.BIG_INTEGER),)))
    yield Case("null", "id", "id null", b.frame(method, id=None), ex.invalid_request(None))
    for name, invalid in (("fraction", 1.5), ("true", True), ("object", {}), ("array", [])):
        yield Case(name, "id", f"id {_short(invalid)}", b.frame(method, id=invalid), _quiet_invalid(invalid))


def params_family(b: FrameBuilder, ctx: CatalogueContext) -> Iterator[Case]:
    """`params` that are not an object, and bad `tools/call` params."""
    for name, value in (("string", "x"), ("array", [1]), ("null", None)):
        rid = b.fresh_id()
        yield Case(name, "params", f"tools/call with params {_short(value)}",
                   dumps({"jsonrpc": "2.0", "id": rid, "method": "tools/call", "params": value}),
                   ex.invalid_params(rid, also=frozenset({ex.INVALID_REQUEST})))
    rid = b.fresh_id()
    yield Case("call-without-name", "params", "tools/call without a tool name",
               b.frame("tools/call", {"arguments": {}}, rid), ex.invalid_params(rid))
    rid = b.fresh_id()
    # MCP server/tools, "Error Handling": an unknown tool is a protocol error; the spec's example uses -32602, and
    # no MUST fixes the code, so -32601 (the tool as an unknown method) is as right.
    yield Case("call-unknown-tool", "params", "tools/call of a tool that does not exist",
               b.frame("tools/call", {"name": UNKNOWN_TOOL, "arguments": {}}, rid),
               ex.invalid_params(rid, also=frozenset({ex.METHOD_NOT_FOUND}),
                                 note="a protocol error for an unknown tool"))
    if ctx.tool is not None:
        rid = b.fresh_id()
        yield Case("call-arguments-string", "params", "tools/call with arguments that are a string",
                   b.frame("tools/call", {"name": ctx.tool, "arguments": "x"}, rid),
                   Expectation(judge=OracleId.INVALID_PARAMS, id=rid, codes=frozenset({ex.INVALID_PARAMS}),
                               result_ok=True, method="tools/call", parts=(IsErrorResultOk(),)))


def method_family(b: FrameBuilder, ctx: CatalogueContext) -> Iterator[Case]:
    """Unknown methods, with and without an id, and methods of capabilities not advertised."""
    rid = b.fresh_id()
    yield Case("unknown", "method", "an unknown method", b.frame(UNKNOWN_METHOD, id=rid), ex.method_not_found(rid))
    yield Case("unknown-notification", "method", "an unknown notification", b.frame(UNKNOWN_METHOD),
               ex.no_reply())
    yield Case("unknown-namespaced-notification", "method", "an unknown notifications/* notification",
               b.frame("notifications/mcpfuzz-unknown"), ex.no_reply())
    for method, capability in (("resources/list", "resources"), ("prompts/list", "prompts")):
        rid = b.fresh_id()
        advertised = capability in ctx.capabilities
        yield Case(method.replace("/", "-"), "method",
                   f"{method} ({'advertised' if advertised else 'not advertised'})",
                   b.frame(method, {}, rid), ex.any_answer(rid))


def notification_family(b: FrameBuilder, ctx: CatalogueContext) -> Iterator[Case]:
    """Notifications and responses sent to the server: never answered."""
    if ctx.era is Era.LEGACY:
        yield Case("initialized-again", "notification", "notifications/initialized a second time",
                   b.frame("notifications/initialized"), ex.no_reply())
    yield Case("cancel-unknown", "notification", "notifications/cancelled for a request never sent",
               b.frame("notifications/cancelled", {"requestId": 987654, "reason": "mcpfuzz"}), ex.no_reply())
    yield Case("response-result", "notification", "a response object sent to the server",
               dumps({"jsonrpc": "2.0", "id": 987655, "result": {}}),
               Expectation(judge=OracleId.NOTIFICATION_SILENT, reply=False, id_recoverable=False,
                           note="a response object sent to the server"))
    yield Case("response-error", "notification", "an error response sent to the server",
               dumps({"jsonrpc": "2.0", "id": 987656, "error": {"code": -1, "message": "x"}}),
               Expectation(judge=OracleId.NOTIFICATION_SILENT, reply=False, id_recoverable=False,
                           note="an error response sent to the server"))


def size_family(b: FrameBuilder, ctx: CatalogueContext) -> Iterator[Case]:
    """Deep nesting, a big frame, and a CRLF line ending."""
    method = b.barrier_method
    deep: object = "bottom"
    for _ in range(256):
        deep = {"a": deep}
    rid = b.fresh_id()
    # RFC 8259 section 9 lets a reader limit nesting and size: silence on these is low, any answer is fine.
    yield Case("nested-256", "size", "params nested 256 deep", b.frame(method, {"deep": deep}, rid),
               replace(ex.any_answer(rid).with_part(PastLimit(ReaderLimit.NESTING)), null_id_ok=True))
    rid = b.fresh_id()
    yield Case("one-megabyte", "size", "a 1 MB frame", b.frame(method, {"pad": "x" * (1 << 20)}, rid),
               replace(ex.any_answer(rid).with_part(PastLimit(ReaderLimit.SIZE)), null_id_ok=True))
    rid = b.fresh_id()
    yield Case("crlf", "size", "a request ending in CRLF", b.frame(method, id=rid) + b"\r",
               ex.result(rid, method))


def modern_family(b: FrameBuilder, ctx: CatalogueContext) -> Iterator[Case]:
    """2026-07-28 requests with a missing, mistyped or unsupported `_meta` (modern era only)."""
    if ctx.era is not Era.MODERN:
        return
    rid = b.fresh_id()
    yield Case("no-meta", "modern", "a request without _meta",
               dumps({"jsonrpc": "2.0", "id": rid, "method": "tools/list"}), ex.any_answer(rid))
    rid = b.fresh_id()
    yield Case("meta-not-object", "modern", "_meta that is a string",
               dumps({"jsonrpc": "2.0", "id": rid, "method": "tools/list", "params": {"_meta": "x"}}),
               Expectation(judge=OracleId.INVALID_PARAMS, id=rid))
    rid = b.fresh_id()
    meta: dict[str, Json] = {META_VERSION_KEY: UNSUPPORTED_VERSION, META_CAPABILITIES_KEY: {}}
    yield Case("unsupported-version", "modern", f"protocol version {UNSUPPORTED_VERSION} in _meta",
               dumps({"jsonrpc": "2.0", "id": rid, "method": "tools/list", "params": {"_meta": meta}}),
               Expectation(judge=OracleId.VERSION_NEGOTIATION, id=rid, result_ok=True, well_formed=True,
                           parts=(VersionCheck(unsupported=UNSUPPORTED_VERSION),)))


FAMILIES: dict[str, Family] = {
    "parse": parse_family,
    "envelope": envelope_family,
    "id": id_family,
    "params": params_family,
    "method": method_family,
    "notification": notification_family,
    "size": size_family,
    "modern": modern_family,
    "meta": meta_family,
    "logging": logging_family,
    "subscription": subscription_family,
}


def catalogue(ctx: CatalogueContext) -> list[Case]:
    """Every catalogue case for the negotiated era, in a fixed order."""
    builder = FrameBuilder(ctx.era, ctx.version)
    return [case for family in FAMILIES.values() for case in family(builder, ctx)]


def _short(value: object) -> str:
    import json

    text = json.dumps(value)
    return text if len(text) <= 24 else f"{text[:12]}... ({len(text)} chars)"
