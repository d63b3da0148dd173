"""A `tools/call` frame for one set of arguments, with what a correct server answers."""

from __future__ import annotations

from mcpfuzz.strategies.arguments.call import NEGATIVE, ArgumentCall
from mcpfuzz.strategies.messages import FrameBuilder

from mcpfuzz.jsonrpc import expectation as ex
from mcpfuzz.jsonrpc.expectation import Expectation
from mcpfuzz.jsonrpc.frame import Case

TOOL_FAMILY = "tool"


def call_expectation(rid: int, call: ArgumentCall, tool: dict) -> Expectation:
    """What a correct server answers to these arguments.

    Valid arguments: any result (a domain error `isError: true` included) or an error other than
    -32602 (valid-input-accepted judges that one). Invalid ones: -32602, or an `isError` result,
    the answer SEP-1303 prefers since 2025-11-25 and many earlier servers already gave.
    """
    extra = {"tool": tool.get("name"), "arguments": call.kind, "rule": call.rule,
             "output_schema": tool.get("outputSchema") if isinstance(tool.get("outputSchema"), dict) else None}
    if call.unicode_unsafe:
        # RFC 8259 section 8.2: a lone surrogate is valid grammar with unpredictable handling. A
        # parser may refuse the frame (-32700, id null) or answer it; silence is parse-error's (low).
        return Expectation(judge="parse-error", id=rid, codes=frozenset({ex.PARSE_ERROR, ex.INVALID_PARAMS}),
                           result_ok=True, null_id_ok=True, method="tools/call",
                           extra={**extra, "lenient": True, "unicode_unsafe": True})
    if call.kind == NEGATIVE:
        return Expectation(judge="invalid-params", id=rid, codes=frozenset({ex.INVALID_PARAMS}), result_ok=True,
                           well_formed=True, method="tools/call", note="or an isError result",
                           extra={**extra, "is_error_result_ok": True})
    return Expectation(judge="valid-input-accepted", id=rid, result_ok=True, error_ok=True, well_formed=True,
                       method="tools/call", extra=extra)


def tool_call_case(builder: FrameBuilder, tool: dict, call: ArgumentCall, *, family: str = TOOL_FAMILY,
                   history: tuple[bytes, ...] = ()) -> Case:
    """The frame for one call; the target is `tool/<name>` in reports, whichever phase made the call.

    Stateful sequences share the target: a bug one call reproduces is one finding, and a bug that
    needs the sequence carries it in `history`.
    """
    rid = builder.fresh_id()
    name = tool["name"]
    frame = builder.frame("tools/call", {"name": name, "arguments": call.arguments}, rid)
    title = f"{name}: {call.description}"
    # Patient: a tool may take a while, and an async server answers the barrier before it is done.
    # Not for a lone surrogate: parsers that refuse it stay silent, and the barrier's answer says so.
    return Case(name, family, title, frame, call_expectation(rid, call, tool), history=history,
                patient=not call.unicode_unsafe)
