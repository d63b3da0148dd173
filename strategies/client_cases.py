"""Cases of mcpfuzz as a client: a request whose server asks for input (a tool call, a prompt get, a resource
read), answered as an `AnswerMode` says, and the 2026-07-28 retries of one answered `input_required`. No I/O."""

from __future__ import annotations

from typing import Any

from mcpfuzz.strategies.client_answers import retry_params
from mcpfuzz.strategies.messages import FrameBuilder

from mcpfuzz.jsonrpc.client_check import AnswerMode, AskingRequest, RetryKind
from mcpfuzz.jsonrpc.expectation import Expectation
from mcpfuzz.jsonrpc.frame import Case
from mcpfuzz.jsonrpc.oracle_ids import OracleId
from mcpfuzz.jsonrpc.parts.client import ClientCheck
from mcpfuzz.jsonrpc.parts.tool_call import ToolCallCheck
from mcpfuzz.jsonrpc.versions import META_CAPABILITIES_KEY, Era

TOOLS_CALL = "tools/call"


def request_params(builder: FrameBuilder, asking: AskingRequest, declared: dict) -> dict:
    """The asking request's params; in 2026-07-28 its `_meta` declares `declared` as the client's capabilities."""
    params: dict[str, Any] = dict(asking.params)
    if builder.era is Era.MODERN:
        params["_meta"] = {**(builder.meta or {}), META_CAPABILITIES_KEY: declared}
    return params


def client_request_case(builder: FrameBuilder, asking: AskingRequest, params: dict, check: ClientCheck, *,
                        judge: OracleId = OracleId.CLIENT_REQUESTS) -> Case:
    """The asking request sent with `params`, its server's requests answered as `check.mode` says.

    Not `well_formed`: whether the request is answered once the server got a bad answer (or none) is the judge's
    verdict, not no-hang's. A valid answer's request is waited for patiently, as any call; after a bad answer or
    none the barrier's answer is enough to tell a server still serving from a stuck one.
    """
    rid = builder.fresh_id()
    frame = builder.frame(asking.method, params, rid)
    valid = check.mode.valid and check.retry in (None, RetryKind.VALID)
    tool_call = ToolCallCheck(asking.name, valid=True) if valid and asking.method == TOOLS_CALL else None
    expect = Expectation(judge=judge, id=rid, result_ok=True, error_ok=True, method=asking.method,
                         parts=(check,) if tool_call is None else (tool_call, check))
    if check.retry is not None:
        what = f"retry, {check.retry.value}"
    elif not check.declared:
        what = "declaring no client capability"
    else:
        what = f"server's requests answered: {check.mode.value}"
    return Case(asking.name, asking.family, f"{asking.name}: {what}", frame, expect, patient=valid, slow_ok=valid)


def retry_case(builder: FrameBuilder, asking: AskingRequest, original: dict, asked: dict, kind: RetryKind,
               declared: tuple[str, ...], roots: tuple[str, ...], baseline: Any = None) -> Case:
    """The retry of the request sent with `original` (its params) after the `input_required` result `asked`."""
    params = retry_params(original, asked, kind, roots)
    check = ClientCheck(AnswerMode.ACCEPT, declared, kind, baseline)
    return client_request_case(builder, asking, params, check, judge=OracleId.INPUT_REQUIRED)
