"""What a server did with one case, reduced to a small signature: new signatures are new behaviour."""

from __future__ import annotations

from mcpfuzz.jsonrpc.exchange import Exchange

MAX_KEYS = 8  # result keys kept per answer: enough to tell shapes apart, small enough to stay cheap


def behaviour(target: str, exchange: Exchange) -> tuple:
    """The target and how it was answered: error codes, result shapes, id relations, crash, silence, HTTP status."""
    parts: list[tuple] = []
    for arrival in exchange.arrivals:
        incoming = arrival.incoming
        if incoming.is_error:
            parts.append(("error", repr(incoming.error_code)[:40], arrival.id_tag))  # any JSON: keep it hashable
        elif incoming.is_result:
            result = incoming.message.get("result")
            keys = tuple(sorted(result)[:MAX_KEYS]) if isinstance(result, dict) else (type(result).__name__,)
            flagged = isinstance(result, dict) and result.get("isError") is True
            parts.append(("result", keys, flagged, arrival.id_tag))
        else:
            parts.append((incoming.kind, arrival.id_tag))
    status = exchange.http.status if exchange.http is not None else None
    crashed = exchange.crash is not None
    return target, tuple(sorted(set(parts), key=repr)), crashed, exchange.timed_out, exchange.barrier_answered, status
