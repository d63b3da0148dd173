"""Cases of mcpfuzz as a client: a tool call whose server asks for input, answered as an `AnswerMode` says, and the
2026-07-28 retries of a call answered `input_required`. No I/O."""

from __future__ import annotations

from typing import Any

from mcpfuzz.strategies.arguments.tool_calls import TOOL_FAMILY
from mcpfuzz.strategies.client_answers import retry_params
from mcpfuzz.strategies.messages import FrameBuilder

from mcpfuzz.jsonrpc.client_check import AnswerMode, ClientCheck, RetryKind
from mcpfuzz.jsonrpc.expectation import Expectation, ToolCallCheck
from mcpfuzz.jsonrpc.frame import Case
from mcpfuzz.jsonrpc.oracle_ids import OracleId
from mcpfuzz.jsonrpc.versions import META_CAPABILITIES_KEY, Era


def call_params(builder: FrameBuilder, tool: str, arguments: dict, declared: dict) -> dict:
    """A tools/call's params; in 2026-07-28 its `_meta` declares `declared` as the client's capabilities."""
    params: dict[str, Any] = {"name": tool, "arguments": arguments}
    if builder.era is Era.MODERN:
        params["_meta"] = {**(builder.meta or {}), META_CAPABILITIES_KEY: declared}
    return params


def client_call_case(builder: FrameBuilder, tool: str, params: dict, check: ClientCheck, *,
                     judge: OracleId = OracleId.CLIENT_REQUESTS) -> Case:
    """A call of `tool` whose server's requests are answered as `check.mode` says.

    Not `well_formed`: whether the call is answered once the server got a bad answer (or none) is the judge's
    verdict, not no-hang's. A valid answer's call is waited for patiently, as any tool call; after a bad answer or
    none the barrier's answer is enough to tell a server still serving from a stuck one.
    """
    rid = builder.fresh_id()
    frame = builder.frame("tools/call", params, rid)
    valid = check.mode.valid and check.retry in (None, RetryKind.VALID)
    expect = Expectation(judge=judge, id=rid, result_ok=True, error_ok=True, method="tools/call",
                         tool_call=ToolCallCheck(tool, valid=True) if valid else None, client=check)
    if check.retry is not None:
        what = f"retry, {check.retry.value}"
    elif not check.declared:
        what = "declaring no client capability"
    else:
        what = f"server's requests answered: {check.mode.value}"
    return Case(tool, TOOL_FAMILY, f"{tool}: {what}", frame, expect, patient=valid, slow_ok=valid)


def retry_case(builder: FrameBuilder, tool: str, original: dict, asked: dict, kind: RetryKind,
               declared: tuple[str, ...], roots: tuple[str, ...], baseline: Any = None) -> Case:
    """The retry of the call `original` (its params) after the `input_required` result `asked`, as `kind` says."""
    params = retry_params(original, asked, kind, roots)
    check = ClientCheck(AnswerMode.ACCEPT, declared, kind, baseline)
    return client_call_case(builder, tool, params, check, judge=OracleId.INPUT_REQUIRED)
