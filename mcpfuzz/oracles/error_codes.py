"""The four standard error codes: -32700, -32600, -32601, -32602."""

from __future__ import annotations

import json
from collections.abc import Iterator

from mcpfuzz.jsonrpc.exchange import ID_CURRENT, ID_MISSING, Exchange
from mcpfuzz.jsonrpc.expectation import INVALID_REQUEST, PARSE_ERROR, Expectation
from mcpfuzz.jsonrpc.oracle_ids import OracleId
from mcpfuzz.jsonrpc.parts.leniency import IsErrorResultOk, Lenient, QuietOk
from mcpfuzz.oracles.answers import case_answers, idless_errors, judge_answers, misused_code
from mcpfuzz.oracles.base import Failure, Severity, failure_class, register
from mcpfuzz.strategies.catalogue import UNKNOWN_TOOL

ParseErrorFailure = failure_class(OracleId.PARSE_ERROR, "Unparseable input not answered with -32700 and id null")
InvalidRequestFailure = failure_class(OracleId.INVALID_REQUEST, "Invalid request not answered with -32600")
MethodNotFoundFailure = failure_class(OracleId.METHOD_NOT_FOUND, "Unknown method not answered with -32601")
InvalidParamsFailure = failure_class(OracleId.INVALID_PARAMS, "Bad params not answered with -32602")


PARSE_CODE_KEY = f"code:{PARSE_ERROR}"
RESULT_KEY = "result"  # a result where an error is due (judge_answers' key)


def _unknown_tool_is_error(exchange: Exchange) -> bool:
    """Whether this is the call of the tool no server has, answered with a result that says it failed."""
    try:
        sent = json.loads(exchange.case.data)
    except (ValueError, UnicodeDecodeError):
        return False
    params = sent.get("params") if isinstance(sent, dict) else None
    if not isinstance(params, dict) or sent.get("method") != "tools/call" or params.get("name") != UNKNOWN_TOOL:
        return False
    for arrival in case_answers(exchange):
        result = arrival.incoming.message.get("result") if arrival.incoming.is_result else None
        if isinstance(result, dict) and result.get("isError") is True:
            return True
    return False


def _invalid_envelope_too(expect: Expectation) -> bool:
    """Params that are not an object also break the JSON-RPC envelope (section 4: params is a structured value;
    MCP: an object), so -32600 is due as well as -32602.

    A -32700 for such a frame is the invalid-request oracle's: a server whose validator calls every parseable
    but invalid message unparseable (the TypeScript SDK over HTTP) has one root cause, so one finding, not one
    per oracle.
    """
    return expect.judge == OracleId.INVALID_PARAMS and INVALID_REQUEST in expect.codes


@register(ParseErrorFailure, Severity.MEDIUM)
def parse_error(exchange: Exchange) -> Iterator[Failure]:
    """JSON-RPC 2.0 section 5.1: -32700 with id null. Silence is what the official SDKs do (low)."""
    expect = exchange.case.expect
    if expect.judge == OracleId.PARSE_ERROR:
        if expect.has(Lenient):
            # Frames a parser may accept (BOM, invalid UTF-8 inside a string): an answer carrying
            # the id is fine; a null-id answer must be -32700.
            # An error without an id member refused the frame too: its missing id is response-schema's to report.
            answers = [*case_answers(exchange), *idless_errors(exchange)]
            for arrival in answers:
                code = arrival.incoming.error_code
                if arrival.id_tag != ID_CURRENT and arrival.incoming.is_error and code != -32700:
                    carried = "no id" if arrival.id_tag == ID_MISSING else "id null"
                    yield ParseErrorFailure(Severity.MEDIUM, f"answered error {code} with {carried}; "
                                            "unparseable input gets -32700", f"code:{code}",
                                            server_wide=True)
            if not answers and exchange.barrier_answered and not exchange.cut_short:
                # A call waited as long as a valid call is (--call-timeout) before its silence counts; a wait the
                # phase cut short gives no verdict.
                waited = f" within {exchange.waited:.1f}s" if exchange.extended else ""
                yield ParseErrorFailure(Severity.LOW, f"no reply{waited} (neither -32700 nor an answer), although "
                                        "a request sent after it was answered", "silent-low", server_wide=True)
            return
        yield from judge_answers(exchange, ParseErrorFailure, (
            Severity.LOW, "no reply to unparseable input (the official SDKs stay silent on stdio by design; "
            "JSON-RPC 2.0 asks for -32700 with id null)"))
        return
    yield from misused_code(exchange, OracleId.PARSE_ERROR, ParseErrorFailure)


@register(InvalidRequestFailure, Severity.MEDIUM)
def invalid_request(exchange: Exchange) -> Iterator[Failure]:
    """JSON-RPC 2.0 section 5: -32600 with the id when readable, null otherwise."""
    expect = exchange.case.expect
    if expect.judge == OracleId.INVALID_REQUEST:
        if expect.id_recoverable and not expect.has(QuietOk):
            silence = None  # the default: high, the id was readable
        else:
            silence = (Severity.LOW, "no reply to an invalid request (its id is unreadable, so no client "
                       "can wait for it; JSON-RPC 2.0 asks for -32600 with id null)")
        yield from judge_answers(exchange, InvalidRequestFailure, silence)
        return
    if _invalid_envelope_too(expect):
        yield from (failure for failure in judge_answers(exchange, InvalidRequestFailure, None)
                    if failure.key == PARSE_CODE_KEY)
    yield from misused_code(exchange, OracleId.INVALID_REQUEST, InvalidRequestFailure)


@register(MethodNotFoundFailure, Severity.MEDIUM)
def method_not_found(exchange: Exchange) -> Iterator[Failure]:
    """JSON-RPC 2.0 section 5.1: an unknown method gets -32601 (silence is `no-hang`'s)."""
    if exchange.case.expect.judge == OracleId.METHOD_NOT_FOUND:
        yield from judge_answers(exchange, MethodNotFoundFailure, None)
        return
    yield from misused_code(exchange, OracleId.METHOD_NOT_FOUND, MethodNotFoundFailure)


@register(InvalidParamsFailure, Severity.MEDIUM)
def invalid_params(exchange: Exchange) -> Iterator[Failure]:
    """Bad params for a known method get -32602 (or an isError result for tool arguments)."""
    expect = exchange.case.expect
    if expect.judge == OracleId.INVALID_PARAMS:
        for failure in judge_answers(exchange, InvalidParamsFailure, None):
            if failure.key == RESULT_KEY and _unknown_tool_is_error(exchange):
                # MCP server/tools: an unknown tool is a protocol error; an isError result tells the model so too,
                # and the open SEP-2145 would make it the rule: at most low until it is accepted.
                yield InvalidParamsFailure(Severity.LOW, "an unknown tool was answered with an isError result; MCP "
                                           "asks for a protocol error (-32602 in its example)", RESULT_KEY,
                                           server_wide=failure.server_wide)
            elif not (failure.key == PARSE_CODE_KEY and _invalid_envelope_too(expect)):
                yield failure
        if expect.has(IsErrorResultOk):
            # SEP-1303 (2025-11-25): bad tool arguments may come back as a result, but only one
            # that says it failed.
            for arrival in case_answers(exchange):
                result = arrival.incoming.message.get("result") if arrival.incoming.is_result else None
                if isinstance(result, dict) and result.get("isError") is not True:
                    yield InvalidParamsFailure(Severity.MEDIUM, "invalid arguments were accepted: the result "
                                               "is not marked isError", "accepted")
        return
    yield from misused_code(exchange, OracleId.INVALID_PARAMS, InvalidParamsFailure)
