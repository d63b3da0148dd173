"""What a correct server answers to one decoded JSON object: a request, a notification or a response.

JSON-RPC 2.0 section 5 and MCP: the first defect of a request names the oracle that judges it, and the
code of every defect it has is accepted (servers check members in different orders).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from mcpfuzz.strategies.arguments.call import NEGATIVE, POSITIVE, ArgumentCall
from mcpfuzz.strategies.arguments.tool_calls import call_expectation
from mcpfuzz.strategies.frames.context import INT64, UNKNOWN_PREFIX, FrameContext, anything, quiet_invalid

from mcpfuzz.jsonrpc import expectation as ex
from mcpfuzz.jsonrpc.expectation import Expectation
from mcpfuzz.jsonrpc.ids import ABSENT, is_valid_mcp_id
from mcpfuzz.jsonrpc.oracle_ids import OracleId
from mcpfuzz.jsonrpc.parts.leniency import IsErrorResultOk
from mcpfuzz.jsonrpc.versions import Era

ENVELOPE = frozenset({"jsonrpc", "id", "method", "params"})


def expect_object(message: dict, ctx: FrameContext) -> Expectation:
    """A response, a notification, a request with an invalid id, or a request judged by its defects."""
    if "method" not in message and ("result" in message or "error" in message):
        return _response(message)
    ids = (message["id"],) if message.get("id") is not None else ()
    if set(message) - ENVELOPE:
        return anything("members JSON-RPC does not define", ids)
    if "id" not in message:
        method, params = message.get("method"), message.get("params", ABSENT)
        if message.get("jsonrpc") == "2.0" and isinstance(method, str) and method and \
                (params is ABSENT or isinstance(params, dict)):
            return ex.no_reply()
        return anything("an invalid message without an id: an error with id null or silence", ids)
    rid = message["id"]
    if rid is None:
        return replace(ex.invalid_request(None), codes=_codes(message, ctx) | {ex.INVALID_REQUEST})
    if not is_valid_mcp_id(rid):
        return replace(quiet_invalid(rid), codes=_codes(message, ctx) | {ex.INVALID_REQUEST})
    expect = _request(message, rid, ctx)
    if isinstance(rid, int) and abs(rid) >= INT64 and rid != -INT64:
        # Beyond 64-bit integers a server may refuse the id itself (the catalogue's id/2-63).
        expect = replace(expect, null_id_ok=True, error_ok=True)
    return expect


def _response(message: dict) -> Expectation:
    """A response sent to the server: never answered (catalogue notification/response-*)."""
    outcome = "result" if "result" in message else "error"
    if set(message) == {"jsonrpc", "id", outcome} and message["jsonrpc"] == "2.0" and is_valid_mcp_id(message["id"]):
        return Expectation(judge=OracleId.NOTIFICATION_SILENT, reply=False, id_recoverable=False,
                           note=f"a{'n' if outcome == 'error' else ''} {outcome} response sent to the server")
    return anything("a malformed response object", (message.get("id"),) if message.get("id") is not None else ())


def _envelope_codes(message: dict) -> frozenset[int]:
    """-32600 (and -32601 for an empty method) when `jsonrpc` or `method` is wrong; empty when both are fine."""
    method = message.get("method", ABSENT)
    codes: set[int] = set()
    if message.get("jsonrpc", ABSENT) != "2.0" or not isinstance(message.get("jsonrpc"), str):
        codes.add(ex.INVALID_REQUEST)
    if not isinstance(method, str):
        codes.add(ex.INVALID_REQUEST)
    elif method == "":
        codes |= {ex.INVALID_REQUEST, ex.METHOD_NOT_FOUND}
    return frozenset(codes)


def _codes(message: dict, ctx: FrameContext) -> frozenset[int]:
    """Every code some defect of this message may rightly be answered with (the server picks one to check)."""
    codes = set(_envelope_codes(message))
    method, params = message.get("method"), message.get("params", ABSENT)
    if isinstance(method, str) and method.startswith(UNKNOWN_PREFIX):
        codes.add(ex.METHOD_NOT_FOUND)
    if params is not ABSENT and not isinstance(params, dict) or method == "tools/call":
        codes |= {ex.INVALID_PARAMS, ex.INVALID_REQUEST}
    return frozenset(codes)


def _meta_missing(message: dict, ctx: FrameContext) -> bool:
    """2026-07-28: every request carries `params._meta`; without it a server may answer any error (the
    catalogue's modern/no-meta). Params that are not an object are their own defect (catalogue params/*)."""
    params = message.get("params", ABSENT)
    if ctx.era is not Era.MODERN or not (params is ABSENT or isinstance(params, dict)):
        return False
    return not (isinstance(params, dict) and isinstance(params.get("_meta"), dict))


def _request(message: dict, rid: Any, ctx: FrameContext) -> Expectation:
    """A request with a valid id: the first defect names the judge; every defect's code is accepted."""
    method, params = message.get("method"), message.get("params", ABSENT)
    any_code = _meta_missing(message, ctx)
    codes = _codes(message, ctx)
    if _envelope_codes(message):
        return Expectation(judge=OracleId.INVALID_REQUEST, id=rid, codes=frozenset() if any_code else codes)
    assert isinstance(method, str)  # (a method that is not a string is an envelope defect, handled above)
    known = method in ctx.methods
    if not known and not method.startswith(UNKNOWN_PREFIX):
        return anything(f"method {method!r} is not one mcpfuzz knows", (rid,))
    if params is not ABSENT and not isinstance(params, dict):
        # MCP params are objects (catalogue params/*), checked with the envelope by most servers. One
        # that ignores the params of ping or tools/list still answers rightly; not so for tools/call.
        return Expectation(judge=OracleId.INVALID_PARAMS, id=rid, result_ok=known and method != "tools/call",
                           codes=codes)
    if not known:
        return Expectation(judge=OracleId.METHOD_NOT_FOUND, id=rid, codes=frozenset() if any_code else codes)
    if method == "tools/call":
        return _call(params if isinstance(params, dict) else {}, rid, ctx, any_code)
    if any_code:
        return ex.any_answer(rid, note="a modern request without _meta (the catalogue's modern/no-meta)")
    extra = set(params) - {"_meta"} if isinstance(params, dict) else set()
    if extra:
        return ex.any_answer(rid, method, note="params MCP does not define for this method")
    return ex.result(rid, method)


def _call(params: dict, rid: Any, ctx: FrameContext, any_code: bool) -> Expectation:
    """`tools/call` of the context's tool: a missing or unknown name is -32602 (server/tools)."""
    assert ctx.tool is not None
    name, arguments = params.get("name", ABSENT), params.get("arguments", ABSENT)
    if not isinstance(name, str) or name not in ctx.tool_names:
        codes = frozenset() if any_code else frozenset({ex.INVALID_PARAMS})
        return Expectation(judge=OracleId.INVALID_PARAMS, id=rid, codes=codes, method="tools/call")
    if name != ctx.tool["name"] or any_code or set(params) - {"name", "arguments", "_meta"}:
        return Expectation(judge=OracleId.INVALID_PARAMS, id=rid, result_ok=True, method="tools/call",
                           note="any answer with its id")
    if arguments is ABSENT or arguments is None or arguments == {}:
        if not ctx.empty_arguments_valid:
            return call_expectation(rid, ArgumentCall(NEGATIVE, {}, "no arguments", "required"), ctx.tool)
        if arguments is None:  # null may be read as no arguments, or refused as not an object
            return ex.any_answer(rid, "tools/call", judge=OracleId.VALID_INPUT_ACCEPTED)
        return call_expectation(rid, ArgumentCall(POSITIVE, {}, "no arguments"), ctx.tool)
    if not isinstance(arguments, dict):
        # The catalogue's params/call-arguments-string: -32602, or an isError result (SEP-1303).
        return Expectation(judge=OracleId.INVALID_PARAMS, id=rid, codes=frozenset({ex.INVALID_PARAMS}), result_ok=True,
                           method="tools/call", parts=(IsErrorResultOk(),))
    if arguments == ctx.arguments:
        return call_expectation(rid, ArgumentCall(POSITIVE, arguments, "the simplest valid arguments"), ctx.tool)
    return anything("arguments mcpfuzz did not check against the schema", (rid,))
