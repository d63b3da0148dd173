"""A `tools/call` frame for one set of arguments, with what a correct server answers."""

from __future__ import annotations

from dataclasses import replace
from time import perf_counter

from mcpfuzz.strategies.arguments.call import NEGATIVE, POSITIVE, ArgumentCall
from mcpfuzz.strategies.messages import FrameBuilder

from mcpfuzz.jsonrpc import expectation as ex
from mcpfuzz.jsonrpc.call_split import SPLIT
from mcpfuzz.jsonrpc.expectation import Expectation
from mcpfuzz.jsonrpc.frame import Case
from mcpfuzz.jsonrpc.oracle_ids import OracleId
from mcpfuzz.jsonrpc.parts.leniency import IsErrorResultOk, Lenient
from mcpfuzz.jsonrpc.parts.tool_call import ToolCallCheck

TOOL_FAMILY = "tool"


def call_expectation(rid: int, call: ArgumentCall, tool: dict, *, unicode_unsafe: bool | None = None) -> Expectation:
    """What a correct server answers to these arguments.

    Valid arguments: any result (a domain error `isError: true` included) or an error other than
    -32602 (valid-input-accepted judges that one). Invalid ones: -32602, or an `isError` result,
    the answer SEP-1303 prefers since 2025-11-25 and many earlier servers already gave.
    `unicode_unsafe`: `call.unicode_unsafe` when the caller has it already (it walks the whole value).
    """
    schema = tool.get("outputSchema")
    check = ToolCallCheck(tool=tool.get("name"), valid=call.kind == POSITIVE, rule=call.rule,
                          output_schema=schema if isinstance(schema, dict) else None)
    if call.unicode_unsafe if unicode_unsafe is None else unicode_unsafe:
        # RFC 8259 section 8.2: a lone surrogate is valid grammar with unpredictable handling. A
        # parser may refuse the frame (-32700, id null) or answer it; silence is parse-error's (low).
        return Expectation(judge=OracleId.PARSE_ERROR, id=rid, codes=frozenset({ex.PARSE_ERROR, ex.INVALID_PARAMS}),
                           result_ok=True, null_id_ok=True, method="tools/call",
                           parts=(Lenient(), replace(check, unicode_unsafe=True)))
    if call.kind == NEGATIVE:
        return Expectation(judge=OracleId.INVALID_PARAMS, id=rid, codes=frozenset({ex.INVALID_PARAMS}),
                           result_ok=True, well_formed=True, method="tools/call", note="or an isError result",
                           parts=(IsErrorResultOk(), check))
    return Expectation(judge=OracleId.VALID_INPUT_ACCEPTED, id=rid, result_ok=True, error_ok=True, well_formed=True,
                       method="tools/call", parts=(check,))


def tool_call_case(builder: FrameBuilder, tool: dict, call: ArgumentCall, *, family: str = TOOL_FAMILY,
                   history: tuple[bytes, ...] = ()) -> Case:
    """The frame for one call; the target is `tool/<name>` in reports, whichever phase made the call.

    Stateful sequences share the target: a bug one call reproduces is one finding, and a bug that
    needs the sequence carries it in `history`.
    """
    started = perf_counter() if SPLIT.on else 0.0
    rid = builder.fresh_id()
    name = tool["name"]
    unsafe = call.unicode_unsafe
    params: dict = {"name": name, "arguments": call.arguments}
    if call.kind == POSITIVE and not unsafe:
        # As clients do for calls that may take long: a server that reports progress shows it is working,
        # so a long call is told from a dropped one (its own id is a token no other request uses).
        params["_meta"] = {**(builder.meta or {}), "progressToken": rid}
    frame = builder.frame("tools/call", params, rid)
    title = f"{name}: {call.description}"
    # Patient: a tool may take a while, and an async server answers the barrier before it is done.
    # Not for a lone surrogate: parsers that refuse it stay silent, and the barrier's answer says so.
    case = Case(name, family, title, frame, call_expectation(rid, call, tool, unicode_unsafe=unsafe), history=history,
                patient=not unsafe)
    if started:
        SPLIT.add("encode", started)
    return case
