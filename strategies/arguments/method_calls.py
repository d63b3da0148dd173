"""A plain JSON-RPC 2.0 request for one drawn call of an OpenRPC method, with what a correct server answers."""

from __future__ import annotations

from typing import Any

from mcpfuzz.strategies.arguments.call import NEGATIVE, POSITIVE, ArgumentCall
from mcpfuzz.strategies.messages import FrameBuilder

from mcpfuzz.jsonrpc import expectation as ex
from mcpfuzz.jsonrpc.encode import dumps
from mcpfuzz.jsonrpc.expectation import Expectation
from mcpfuzz.jsonrpc.frame import Case
from mcpfuzz.jsonrpc.oracle_ids import OracleId
from mcpfuzz.jsonrpc.parts.leniency import Lenient
from mcpfuzz.jsonrpc.parts.tool_call import ToolCallCheck

METHOD_FAMILY = "method"


def positional(method: dict, arguments: dict[str, Any]) -> list[Any]:
    """By-position params (OpenRPC `paramStructure`): values in declaration order up to the first one left out,
    then any name the method does not declare (a negative call's extra param stays an extra param)."""
    values = []
    for name in method.get("paramOrder", []):
        if name not in arguments:
            break
        values.append(arguments[name])
    declared = set(method.get("paramOrder", []))
    return values + [value for name, value in arguments.items() if name not in declared]


def method_params(method: dict, call: ArgumentCall) -> Any:
    """The params member: an object by name (also for `either`), an array by position."""
    arguments = call.arguments if isinstance(call.arguments, dict) else {}
    if method.get("paramStructure") == "by-position":
        return positional(method, arguments)
    return arguments


def method_expectation(rid: int, call: ArgumentCall, method: dict) -> Expectation:
    """Valid params: a result, or any error but -32602 (a domain error the document may declare). Invalid ones:
    -32602 (JSON-RPC 2.0 section 5.1, invalid method parameters)."""
    result = method.get("result")
    errors = method.get("errors")
    check = ToolCallCheck(tool=None, valid=call.kind == POSITIVE, rule=call.rule, unicode_unsafe=call.unicode_unsafe,
                          result_schema=result if isinstance(result, dict) else None,
                          declared_errors=tuple(errors) if isinstance(errors, list) else None)
    if call.unicode_unsafe:
        return Expectation(judge=OracleId.PARSE_ERROR, id=rid, codes=frozenset({ex.PARSE_ERROR, ex.INVALID_PARAMS}),
                           result_ok=True, error_ok=True, null_id_ok=True, parts=(Lenient(), check))
    if call.kind == NEGATIVE:
        return Expectation(judge=OracleId.INVALID_PARAMS, id=rid, codes=frozenset({ex.INVALID_PARAMS}),
                           well_formed=True, parts=(check,))
    return Expectation(judge=OracleId.VALID_INPUT_ACCEPTED, id=rid, result_ok=True, error_ok=True, well_formed=True,
                       parts=(check,))


def method_call_case(builder: FrameBuilder, method: dict, call: ArgumentCall, *, family: str = METHOD_FAMILY,
                     history: tuple[bytes, ...] = ()) -> Case:
    """The request for one call; its target is `method/<name>` in reports."""
    rid = builder.fresh_id()
    name = method["name"]
    frame = dumps({"jsonrpc": "2.0", "id": rid, "method": name, "params": method_params(method, call)})
    return Case(name, family, f"{name}: {call.description}", frame, method_expectation(rid, call, method),
                history=history, patient=not call.unicode_unsafe)
