"""JSON-RPC envelopes and MCP result shapes, per method and era."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from mcpfuzz.jsonrpc.exchange import ID_CURRENT, Arrival, Exchange
from mcpfuzz.jsonrpc.oracle_ids import OracleId
from mcpfuzz.jsonrpc.parts.tool_call import ToolCallCheck
from mcpfuzz.jsonrpc.versions import Era
from mcpfuzz.oracles.base import Failure, Severity, failure_class, register
from mcpfuzz.oracles.spec_schema import spec_result_problems
from mcpfuzz.oracles.templates import value_template
from mcpfuzz.oracles.tool_results import schema_problem

ResponseSchemaFailure = failure_class(OracleId.RESPONSE_SCHEMA, "Response breaks the JSON-RPC envelope or MCP shape")

RESULT_TYPES = ("complete", "input_required")
CONTENT_TYPES = ("text", "image", "audio", "resource_link", "resource")


def envelope_problems(message: Any) -> list[str]:
    """JSON-RPC 2.0 section 5: jsonrpc "2.0", an id member, exactly one of result and error."""
    if not isinstance(message, dict):
        return ["a response must be a JSON object"]
    problems = []
    if message.get("jsonrpc") != "2.0":
        problems.append(f"`jsonrpc` is {message.get('jsonrpc', '<missing>')!r}, not \"2.0\"")
    if "id" not in message:
        problems.append("the `id` member is missing")
    has_result, has_error = "result" in message, "error" in message
    if has_result == has_error:
        problems.append("a response must carry exactly one of `result` and `error`")
    if has_error:
        error = message["error"]
        if not isinstance(error, dict):
            problems.append("`error` is not an object")
        else:
            code = error.get("code")
            if not isinstance(code, int) or isinstance(code, bool):
                problems.append(f"`error.code` is {code!r}, not an integer")
            if not isinstance(error.get("message"), str):
                problems.append("`error.message` is not a string")
    return problems


def _is_object(value: Any) -> bool:
    return isinstance(value, dict)


def _initialize(result: dict, era: Era) -> list[str]:
    problems = []
    if not isinstance(result.get("protocolVersion"), str):
        problems.append("`protocolVersion` is not a string")
    if not _is_object(result.get("capabilities")):
        problems.append("`capabilities` is not an object")
    info = result.get("serverInfo")
    if not isinstance(info, dict):
        problems.append("`serverInfo` is missing or not an object")
    elif not isinstance(info.get("name"), str) or not isinstance(info.get("version"), str):
        problems.append("`serverInfo` needs string `name` and `version`")
    return problems


def _tools_list(result: dict, era: Era) -> list[str]:
    tools = result.get("tools")
    if not isinstance(tools, list):
        return ["`tools` is not an array"]
    problems = []
    for index, tool in enumerate(tools):
        where = f"tools[{index}]"
        if not _is_object(tool):
            problems.append(f"{where} is not an object")
            continue
        if not isinstance(tool.get("name"), str):
            problems.append(f"{where} has no string `name`")
        schema = tool.get("inputSchema")
        if not _is_object(schema):
            problems.append(f"{where} ({tool.get('name')!r}) has no object `inputSchema`")
        elif schema.get("type") != "object":
            problems.append(f"{where} ({tool.get('name')!r}) `inputSchema.type` is {schema.get('type')!r}, "
                            "not \"object\"")
    if "nextCursor" in result and not isinstance(result["nextCursor"], str):
        problems.append("`nextCursor` is not a string")
    if era is Era.MODERN:
        problems += _cache_hints(result)
    return problems


def _discover(result: dict, era: Era) -> list[str]:
    # supportedVersions is version-negotiation's to judge.
    problems = []
    if not _is_object(result.get("capabilities")):
        problems.append("`capabilities` is not an object")
    return problems + _cache_hints(result)


def _cache_hints(result: dict) -> list[str]:
    """2026-07-28 server/utilities/caching: cacheable results MUST carry ttlMs and cacheScope."""
    if result.get("resultType", "complete") != "complete":
        return []
    problems = []
    ttl = result.get("ttlMs")
    if not isinstance(ttl, int) or isinstance(ttl, bool) or ttl < 0:
        problems.append(f"`ttlMs` is {ttl!r}, not a non-negative integer")
    if result.get("cacheScope") not in ("public", "private"):
        problems.append(f"`cacheScope` is {result.get('cacheScope')!r}, not \"public\" or \"private\"")
    return problems


def _tools_call(result: dict, era: Era) -> list[str]:
    problems = []
    content = result.get("content")
    if not isinstance(content, list):
        problems.append("`content` is not an array")
    else:
        for index, item in enumerate(content):
            if not _is_object(item) or item.get("type") not in CONTENT_TYPES:
                problems.append(f"content[{index}] has no known `type`")
            elif item["type"] == "text" and not isinstance(item.get("text"), str):
                problems.append(f"content[{index}] is text without a string `text`")
    if "isError" in result and not isinstance(result["isError"], bool):
        problems.append("`isError` is not a boolean")
    # Up to 2025-11-25 structuredContent is an object; 2026-07-28 (SEP-2106) lets it be any JSON value.
    if era is not Era.MODERN and "structuredContent" in result and not _is_object(result["structuredContent"]):
        problems.append("`structuredContent` is not an object")
    return problems


def _ping(result: Any, era: Era) -> list[str]:
    return []


SHAPES: dict[str, Callable[[dict, Era], list[str]]] = {
    "initialize": _initialize,
    "ping": _ping,
    "tools/list": _tools_list,
    "tools/call": _tools_call,
    "server/discover": _discover,
}


def result_problems(method: str | None, result: Any, era: Era, version: str = "") -> list[str]:
    """Problems with a result of `method` in `era` (empty when fine or the method is not known); the methods of
    resources, prompts and completions are checked against the specification's schema for `version`."""
    if method is None:
        return []
    if not isinstance(result, dict):
        return ["`result` is not an object (MCP results are objects)"]
    problems = []
    if era is Era.MODERN and result.get("resultType") not in RESULT_TYPES:
        problems.append(f"`resultType` is {result.get('resultType', '<missing>')!r}, not \"complete\" or "
                        "\"input_required\" (required on every 2026-07-28 result)")
    shape = SHAPES.get(method)
    if shape is not None and result.get("resultType", "complete") == "complete":
        problems += shape(result, era)
    elif result.get("resultType", "complete") == "complete":
        problems += spec_result_problems(method, version, result)
    return problems


# JSON-RPC 2.0 section 5.1: the codes any method may answer (pre-defined errors).
JSONRPC_CODES = frozenset({-32700, -32600, -32601, -32602, -32603})


def _undeclared_error(exchange: Exchange, arrival: Arrival) -> str | None:
    """A plain method's valid call answered with an error code neither JSON-RPC 2.0 nor its document declares."""
    call = exchange.case.expect.part(ToolCallCheck)
    if call is None or call.declared_errors is None or not call.valid or arrival.id_tag != ID_CURRENT:
        return None
    code = arrival.incoming.error_code
    if not isinstance(code, int) or code in JSONRPC_CODES or code in call.declared_errors:
        return None
    declared = ", ".join(map(str, call.declared_errors)) or "none"
    return f"valid params were answered with error {code}, which the method's document does not declare " \
           f"(declared: {declared}; -32000 to -32099 are server errors a document declares too)"


@register(ResponseSchemaFailure, Severity.MEDIUM)
def response_schema(exchange: Exchange) -> Iterator[Failure]:
    """Every response is a JSON-RPC envelope; results have their method's MCP shape in the era."""
    method = exchange.case.expect.method
    if exchange.http is not None and exchange.http.body_free:
        return  # a refusal's body is free: JSON of any shape, or none, is judged by its status alone
    for arrival in exchange.responses():
        if arrival.incoming.non_json_number:
            yield ResponseSchemaFailure(Severity.MEDIUM, f"the response holds {arrival.incoming.non_json_number}, "
                                        "which is not JSON (RFC 8259 section 6): strict readers such as JavaScript's "
                                        "JSON.parse reject the whole line", "non-json-number", server_wide=True)
            return
        message = arrival.incoming.message
        problems = envelope_problems(message)
        if not problems and arrival.id_tag == ID_CURRENT and "result" in message:
            problems = result_problems(method, message["result"], exchange.era, exchange.protocol_version)
            where = f"the {method} result"
            call = exchange.case.expect.part(ToolCallCheck)
            if not problems and call is not None and call.result_schema is not None:
                broken = schema_problem(call.result_schema, message["result"])
                if broken is not None:
                    where, problems = "the result", [f"breaks the declared result schema at {broken[0]}: {broken[1]}"]
        else:
            where = "the response envelope"
        if problems:
            yield ResponseSchemaFailure(Severity.MEDIUM, f"{where}: " + "; ".join(problems[:4]),
                                        f"{where}:{value_template(problems[0])}", server_wide=True)
            return
        undeclared = _undeclared_error(exchange, arrival)
        if undeclared is not None:
            yield ResponseSchemaFailure(Severity.MEDIUM, undeclared, "undeclared-error")
            return

