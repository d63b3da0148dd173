"""Notifications (and responses sent to the server) get no reply."""

from __future__ import annotations

from collections.abc import Iterator

from mcpfuzz.jsonrpc.exchange import Exchange
from mcpfuzz.jsonrpc.ids import ABSENT
from mcpfuzz.jsonrpc.oracle_ids import OracleId
from mcpfuzz.oracles.answers import describe_reply
from mcpfuzz.oracles.base import Failure, Severity, failure_class, register

NotificationSilentFailure = failure_class(OracleId.NOTIFICATION_SILENT, "Notification answered with a response")


@register(NotificationSilentFailure, Severity.MEDIUM, quiet_on_plain=True)
def notification_silent(exchange: Exchange) -> Iterator[Failure]:
    """JSON-RPC 2.0 section 4.1: the server MUST NOT reply to a notification, even with an error."""
    expect = exchange.case.expect
    if expect.reply or expect.judge != OracleId.NOTIFICATION_SILENT:
        return
    replies = [a for a in exchange.responses() if a.id_tag != "earlier"]
    if exchange.http is not None and exchange.http.refused:
        # Streamable HTTP: a refused notification or response MAY carry a JSON-RPC error without an id.
        replies = [a for a in replies if not (a.incoming.is_error and a.incoming.id in (None, ABSENT))]
    if replies:
        what = exchange.case.expect.note or "a notification"
        yield NotificationSilentFailure(Severity.MEDIUM, f"{what} got a reply: {describe_reply(replies[0])}",
                                        "replied")
