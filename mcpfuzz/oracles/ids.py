"""Ids come back exactly as sent, and each request is answered once."""

from __future__ import annotations

from collections.abc import Iterator

from mcpfuzz.jsonrpc.exchange import ID_NULL, ID_UNKNOWN, Exchange
from mcpfuzz.jsonrpc.expectation import ReaderLimit
from mcpfuzz.jsonrpc.ids import ABSENT, json_type, show_id
from mcpfuzz.jsonrpc.oracle_ids import OracleId
from mcpfuzz.jsonrpc.parts.http_rule import HttpRule
from mcpfuzz.jsonrpc.parts.past_limit import PastLimit
from mcpfuzz.oracles.answers import CODE_OWNERS
from mcpfuzz.oracles.base import Failure, Severity, failure_class, register

IdPreservedFailure = failure_class(OracleId.ID_PRESERVED, "Response id differs from the request id")
SingleResponseFailure = failure_class(OracleId.SINGLE_RESPONSE, "Request answered more than once")


@register(IdPreservedFailure, Severity.HIGH, quiet_on_plain=True)
def id_preserved(exchange: Exchange) -> Iterator[Failure]:
    """A response id equals the request id in value and JSON type (null included), and never names an unsent id."""
    expect = exchange.case.expect
    yield from _http_refusal_ids(exchange)
    if not expect.reply:
        return  # any reply to a notification is notification-silent's finding
    refused = exchange.http is not None and exchange.http.refused  # its null ids are judged just above
    if _batch_refused_whole(exchange):
        return  # one error for the whole batch names none of its requests; the code's own oracle judges the refusal
    for arrival in exchange.responses():
        changed = arrival.id_tag == ID_UNKNOWN or (
            arrival.id_tag == ID_NULL and expect.id_recoverable and not expect.null_id_ok and not refused)
        if not changed:
            continue
        got = arrival.incoming.id
        if expect.id_recoverable:
            message = (f"request id {show_id(expect.id)} ({json_type(expect.id)}) came back as "
                       f"{show_id(got)} ({json_type(got)})")
            key = f"{json_type(expect.id)}->{json_type(got)}"
        else:
            message = f"answered id {show_id(got)}, which was never sent"
            key = f"unsent:{json_type(got)}"
        severity = Severity.HIGH if expect.well_formed else Severity.MEDIUM
        if PastLimit(ReaderLimit.BIG_INTEGER) in expect.parts or _beyond_exact_integers(expect.id):
            # RFC 8259 section 6: a reader may hold such an integer inexactly; unhelpful, not wrong. Whatever
            # frame carried the id (a catalogue case or a mutated one), it is the one cause.
            severity, key = Severity.LOW, "limit:big-integer"
            message += f"; the frame was {ReaderLimit.BIG_INTEGER.describe()}"
        elif not expect.well_formed:
            # The same id handling as on a valid request (one root cause, one key), seen on a malformed one.
            message += " (on an invalid request; the error must still carry its id)"
        yield IdPreservedFailure(severity, message, key, server_wide=True)


def _batch_refused_whole(exchange: Exchange) -> bool:
    """A batch of several requests answered by one lone error with id null, in a code a JSON-RPC oracle owns."""
    if len(exchange.case.expect.batch_ids) < 2 or not exchange.case.data.lstrip().startswith(b"["):
        return False
    answers = list(exchange.responses())
    return len(answers) == 1 and answers[0].id_tag == ID_NULL and answers[0].incoming.is_error \
        and answers[0].incoming.error_code in CODE_OWNERS


def _beyond_exact_integers(request_id: object) -> bool:
    """An integer id beyond +-(2**53-1): RFC 8259 calls it not interoperable (a double holds it inexactly)."""
    return isinstance(request_id, int) and not isinstance(request_id, bool) and abs(request_id) > 2**53 - 1


def _http_refusal_ids(exchange: Exchange) -> Iterator[Failure]:
    """An HTTP-level refusal of a request with a readable id must not answer it with id null.

    The Origin check is exempt (the spec lets its 403 body carry an error without an id), and so is any refusal whose
    body is free (401, 403, 404, 413, 429): its status says it all.
    """
    expect, http = exchange.case.expect, exchange.http
    if http is None or not http.refused or expect.part(HttpRule) is None or expect.judge == OracleId.ORIGIN_CHECK \
            or http.body_free:
        return
    if expect.id is ABSENT or expect.id is None:
        return
    if any(a.incoming.is_error and a.id_tag == ID_NULL for a in exchange.responses()):
        yield IdPreservedFailure(Severity.MEDIUM, f"the HTTP {http.status} error body carries id null although the "
                                 f"request id {show_id(expect.id)} was readable", "http-null", server_wide=True)


@register(SingleResponseFailure, Severity.HIGH, quiet_on_plain=True)
def single_response(exchange: Exchange) -> Iterator[Failure]:
    """JSON-RPC 2.0: one response per request; a second one confuses every client."""
    for arrival in exchange.responses():
        # An id never sent (e.g. a constant "server-error") is id-preserved's finding, not a repeat.
        if arrival.answer_count > 1 and arrival.id_tag != ID_UNKNOWN:
            yield SingleResponseFailure(
                Severity.HIGH, f"id {show_id(arrival.incoming.id)} was answered {arrival.answer_count} times",
                "repeat", server_wide=True)
            return
