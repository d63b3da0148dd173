"""A request cancelled with `notifications/cancelled` gets no answer once the server has read the cancel."""

from __future__ import annotations

from collections.abc import Iterator

from mcpfuzz.jsonrpc.exchange import ID_CURRENT, Exchange
from mcpfuzz.jsonrpc.http_reply import HttpReply
from mcpfuzz.jsonrpc.oracle_ids import OracleId
from mcpfuzz.oracles.base import Failure, Severity, failure_class, register

CancelRespectedFailure = failure_class(OracleId.CANCEL_RESPECTED, "Cancelled request answered after the cancel")


@register(CancelRespectedFailure, Severity.LOW, quiet_on_plain=True)
def cancel_respected(exchange: Exchange) -> Iterator[Failure]:
    """MCP cancellation: a request answered after a probe sent behind its cancel was answered (SHOULD NOT: low)."""
    cancel = exchange.case.expect.cancel
    if cancel is None:
        return
    # Over streamable HTTP the three are POSTs in order, each sent once the previous one's response headers are
    # in: the probe went out after the server had taken the cancel (its 202), so an answer arriving after the
    # probe's was written while the server had the cancel for the whole of the probe's round trip.
    if exchange.posts and (len(exchange.posts) < 3 or not _accepted(exchange.posts[1])):
        return  # over HTTP: the cancel's POST was refused (or never sent), so the server may not have it
    order = [a.incoming.id for a in exchange.responses() if a.id_tag == ID_CURRENT]
    # The race: an answer before the probe's may have been written before the cancel was read.
    if cancel.probe in order and cancel.request in order[order.index(cancel.probe):]:
        yield CancelRespectedFailure(
            Severity.LOW, f"request {cancel.request} was answered after the request sent behind its "
            "notifications/cancelled: the server had read the cancel and answered anyway", "answered")


def _accepted(reply: HttpReply) -> bool:
    """The notification's POST was taken (202, or any 2xx)."""
    return reply.status is not None and 200 <= reply.status < 300
