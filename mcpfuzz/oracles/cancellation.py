"""A request cancelled with `notifications/cancelled` gets no answer once the server has read the cancel."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from mcpfuzz.jsonrpc.exchange import ID_CURRENT, Arrival, Exchange
from mcpfuzz.jsonrpc.http_reply import HttpReply
from mcpfuzz.jsonrpc.oracle_ids import OracleId
from mcpfuzz.jsonrpc.parts.cancel import CancelCheck
from mcpfuzz.oracles.base import Failure, Severity, failure_class, register

# How far into the target's shortest measured latency the cancel must have been read for a verdict: well before
# the work could have ended by itself, so an answer after it is not a race.
EARLY = 0.5
CLEAR_GAP = 1.0  # seconds after the probe's answer: an answer this late was written long after the cancel was read
# An answer this large spends its time being encoded, written and read: when it arrived (and the latency measured
# from answers like it) tells its delivery, not whether its work was still running when the cancel was read.
LARGE_ANSWER = 256 * 1024

CancelRespectedFailure = failure_class(OracleId.CANCEL_RESPECTED, "Cancelled request answered after the cancel")


@register(CancelRespectedFailure, Severity.LOW, quiet_on_plain=True)
def cancel_respected(exchange: Exchange) -> Iterator[Failure]:
    """MCP cancellation: a request answered after a probe sent behind its cancel was answered (SHOULD NOT: low)."""
    cancel = exchange.case.expect.part(CancelCheck)
    if cancel is None:
        return
    # Over streamable HTTP the three are POSTs in order, each sent once the previous one's response headers are
    # in: the probe went out after the server had taken the cancel (its 202), so an answer arriving after the
    # probe's was written while the server had the cancel for the whole of the probe's round trip.
    if exchange.posts and (len(exchange.posts) < 3 or not _accepted(exchange.posts[1])):
        return  # over HTTP: the cancel's POST was refused (or never sent), so the server may not have it
    if cancel.running is not None:
        yield from _in_flight(exchange, cancel)
        return
    order = [a.incoming.id for a in exchange.responses() if a.id_tag == ID_CURRENT]
    # The race: an answer before the probe's may have been written before the cancel was read.
    if cancel.probe in order and cancel.request in order[order.index(cancel.probe):]:
        yield CancelRespectedFailure(
            Severity.LOW, f"request {cancel.request} was answered after the request sent behind its "
            "notifications/cancelled: the server had read the cancel and answered anyway", "answered")


def _in_flight(exchange: Exchange, cancel: CancelCheck) -> Iterator[Failure]:
    """A request cancelled while provably still running, and answered anyway.

    Still running: unanswered when the liveness request written just before its cancel was answered (a
    LARGE_ANSWER may have been done and on its way then, so it is never judged). Answered
    anyway, beyond any race: when the cancel was read (the probe behind it answered) before EARLY of the target's
    shortest measured latency, an answer after the probe's, or an error before it (a result that early may be the
    work done after all); whatever the latency, an answer CLEAR_GAP after the probe's (a race writes the two
    together, and a stalled client reads them together).
    """
    first: dict[Any, Arrival] = {}
    for arrival in exchange.responses():
        if arrival.id_tag == ID_CURRENT:
            first.setdefault(arrival.incoming.id, arrival)
    running, probe, answer = first.get(cancel.running), first.get(cancel.probe), first.get(cancel.request)
    if running is None or probe is None or answer is None or answer.at <= running.at:
        return  # no proof, or answered before the cancel was written: done (or on its way) already
    if answer.incoming.size >= LARGE_ANSWER:
        return  # its delivery alone may outlast the probe's round trip: no proof the work was still running
    if cancel.latency > 0 and probe.at < EARLY * cancel.latency:
        if answer.at < probe.at and not answer.incoming.is_error:
            return
    elif answer.at - probe.at < CLEAR_GAP:
        return  # the latency cannot rule a race out
    error = answer.incoming.message.get("error")
    code = error.get("code") if isinstance(error, dict) else None
    how = f"with error code {code!r}" if error is not None else "with its result"
    hint = " (code 0 is no JSON-RPC error code; the Python SDK 1.x answers cancelled requests so)" \
        if code == 0 else ""
    when = f"{cancel.pause:.2f}s after it was sent" if cancel.pause else "at once"
    known = f" (its target takes at least {cancel.latency:.2f}s)" if cancel.latency else ""
    yield CancelRespectedFailure(
        Severity.LOW, f"request {cancel.request} was cancelled {when}, while still running{known}, and answered "
        f"anyway {how}, {answer.at - probe.at:+.2f}s from the answer to the probe sent behind the cancel{hint}",
        "answered-code-0" if code == 0 else "answered")


def _accepted(reply: HttpReply) -> bool:
    """The notification's POST was taken (202, or any 2xx)."""
    return reply.status is not None and 200 <= reply.status < 300
