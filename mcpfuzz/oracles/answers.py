"""Shared reading of an exchange: which replies answer the case, and how to show them."""

from __future__ import annotations

from typing import Any

from mcpfuzz.jsonrpc.exchange import ID_CURRENT, ID_MISSING, ID_NULL, ID_UNKNOWN, Arrival, Exchange
from mcpfuzz.jsonrpc.expectation import INVALID_PARAMS, INVALID_REQUEST, METHOD_NOT_FOUND, PARSE_ERROR
from mcpfuzz.jsonrpc.ids import show_id
from mcpfuzz.jsonrpc.oracle_ids import OracleId
from mcpfuzz.jsonrpc.parts.past_limit import PastLimit
from mcpfuzz.jsonrpc.parts.tool_call import ToolCallCheck
from mcpfuzz.oracles.base import Failure, Severity

HEADER_MISMATCH = -32020

# Which oracle owns the misuse of each standard code on a request that deserved a result.
CODE_OWNERS = {
    PARSE_ERROR: OracleId.PARSE_ERROR,
    INVALID_REQUEST: OracleId.INVALID_REQUEST,
    METHOD_NOT_FOUND: OracleId.METHOD_NOT_FOUND,
    INVALID_PARAMS: OracleId.INVALID_PARAMS,
}


def case_answers(exchange: Exchange) -> list[Arrival]:
    """Responses that answer this case: its own id, or (where its id is unreadable) any response."""
    expect = exchange.case.expect
    responses = exchange.responses()
    if expect.id_recoverable:
        # An answer with a mangled id (another value, or null) is still an answer: id-preserved judges the id.
        return [a for a in responses if a.id_tag in (ID_CURRENT, ID_UNKNOWN, ID_NULL)]
    return [a for a in responses if a.id_tag != "earlier"]


def idless_errors(exchange: Exchange) -> list[Arrival]:
    """Error responses with no id member in the case's window: no client can match one to its request (so they are
    no answer where the id was readable), but a frame a parser refused was refused, not met with silence."""
    return [a for a in exchange.responses() if a.id_tag == ID_MISSING and a.incoming.is_error]


def describe_reply(arrival: Arrival) -> str:
    """`error -32601 (id 5)` or `result (id "7")` for messages."""
    incoming = arrival.incoming
    rid = show_id(incoming.id)
    if incoming.is_error:
        return f"error {incoming.error_code} (id {rid})"
    if incoming.is_result:
        return f"a result (id {rid})"
    return f"a malformed response (id {rid})"


def judge_answers(exchange: Exchange, failure: type[Failure], silence: Any) -> list[Failure]:
    """Judge the answers of a case the `failure` class's oracle owns: wrong code, wrong kind, an id where null is due.

    `silence` is (severity, message) for no reply; by default silence is medium when the id was
    readable (a client waits forever, but only on malformed input) and nothing otherwise. Valid requests
    and frames past a reader limit are `no-hang`'s.
    """
    expect = exchange.case.expect
    found = []
    answers = case_answers(exchange)
    if expect.has(PastLimit) and expect.id_recoverable:
        silence = None  # silence past a reader limit is no-hang's (one low finding, whatever the judge)
    elif silence is None and expect.id_recoverable and not expect.well_formed:
        # A MUST broken on malformed input only: medium (the severity model in docs/severity.md).
        silence = (Severity.MEDIUM, f"no reply although the request id {show_id(expect.id)} was readable: a "
                   "client waits for it forever")
    http = exchange.http
    if http is not None and http.body_free:
        # 401, 403, 404, 413, 429: the status is the whole answer, whatever the body holds (an id, no id, no JSON).
        silence = None
    elif silence is not None and http is not None and http.refused:
        # Over HTTP a refusal is an answer: the response ended, so no client waits for anything. Streamable HTTP
        # lets its body be an error without an id (or none); only the JSON-RPC error for the readable id is lost,
        # which is unhelpful, never a wait (low at most).
        kinds = {a.id_tag for a in exchange.responses() if a.incoming.is_error}
        got = ("an error with id null" if ID_NULL in kinds else "an error without an id" if ID_MISSING in kinds
               else "no JSON-RPC error")
        silence = (min(silence[0], Severity.LOW), f"refused at once with HTTP {http.status} and {got}: the client "
                   f"has its answer, but not the JSON-RPC error its request id {show_id(expect.id)} was owed")
    codes = expect.codes
    negative_call = (call := expect.part(ToolCallCheck)) is not None and not call.valid
    if ((http is not None and not expect.well_formed) or negative_call) and codes and _modern_http(exchange):
        # 2026-07-28 streamable HTTP: a server may check the mirrored headers first (-32020 HeaderMismatch); a
        # negative call's argument may be one no Mcp-Param header carries as the server renders it (a lone
        # surrogate, a number where a string is due); a pipelined window's exchange may carry no HttpReply.
        codes = codes | {HEADER_MISMATCH}
    if not answers:
        if silence is not None and exchange.barrier_answered:
            found.append(failure(silence[0], silence[1], f"silent-{silence[0]}", server_wide=True))
        return found
    wanted = "/".join(str(c) for c in sorted(expect.codes, reverse=True)) or "an error"
    for arrival in answers:
        incoming = arrival.incoming
        code = incoming.error_code
        if incoming.is_error and isinstance(code, int) and not isinstance(code, bool):
            if not expect.error_ok:
                continue  # a rejected valid request: judged by the owner of that code
            if codes and code not in codes:
                found.append(failure(Severity.parse(expect.wrong_answer), f"answered error {code} instead of {wanted}",
                                     f"code:{code}", server_wide=True))
            elif not expect.id_recoverable and arrival.id_tag not in (ID_CURRENT, ID_NULL, ID_MISSING):
                # No id member at all is the envelope's fault, which response-schema reports.
                found.append(failure(Severity.MEDIUM,
                                     f"answered {wanted} with id {show_id(incoming.id)}; the id could not be "
                                     "read from this frame, so it must be null (JSON-RPC 2.0 section 5)",
                                     "id-not-null", server_wide=True))
        elif incoming.is_result and not expect.result_ok:
            found.append(failure(Severity.parse(expect.wrong_answer), f"answered with a result; expected "
                                 f"{expect.describe()}",
                                 "result", server_wide=True))
    return found


def _modern_http(exchange: Exchange) -> bool:
    return exchange.era.value == "modern"


def misused_code(exchange: Exchange, oracle_id: OracleId, failure: type[Failure]) -> list[Failure]:
    """A request that deserved a result was rejected with the code this oracle owns."""
    expect = exchange.case.expect
    if expect.error_ok or not expect.result_ok:
        return []
    found = []
    for arrival in case_answers(exchange):
        code = arrival.incoming.error_code
        if arrival.incoming.is_error and CODE_OWNERS.get(code) == oracle_id:
            found.append(failure(Severity.MEDIUM,
                                 f"a valid request was rejected with error {code}: "
                                 f"{_error_message(arrival)}", f"rejected:{code}", server_wide=True))
    return found


def _error_message(arrival: Arrival) -> str:
    error = arrival.incoming.message.get("error") if isinstance(arrival.incoming.message, dict) else None
    message = error.get("message") if isinstance(error, dict) else None
    return repr(message)[:120] if message is not None else "(no message)"
