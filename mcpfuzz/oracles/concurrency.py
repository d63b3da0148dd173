"""Requests in flight at once: each answered, with its own answer (not another request's)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from mcpfuzz.jsonrpc.exchange import ID_CURRENT, Exchange
from mcpfuzz.jsonrpc.oracle_ids import OracleId
from mcpfuzz.oracles.base import Failure, Severity, failure_class, register
from mcpfuzz.oracles.result_shapes import result_problems

ConcurrencyFailure = failure_class(OracleId.CONCURRENCY, "Concurrent requests lost or answered with another's answer")


@register(ConcurrencyFailure, Severity.HIGH)
def concurrency(exchange: Exchange) -> Iterator[Failure]:
    """Read-only requests sent at once are each answered, each with the answer of its own method and URI."""
    check = exchange.case.expect.concurrent
    if check is None or exchange.timed_out and not exchange.barrier_answered:
        return  # a stuck server is no-hang's
    answers: dict[Any, Any] = {}
    for arrival in exchange.responses():
        if arrival.id_tag == ID_CURRENT and arrival.incoming.is_result:
            answers.setdefault(arrival.incoming.id, arrival.incoming.message.get("result"))
    answered = {a.incoming.id for a in exchange.responses() if a.id_tag == ID_CURRENT}
    lost = [rid for rid, _, _ in check.requests if rid not in answered]
    if lost and len(lost) < len(check.requests):
        yield ConcurrencyFailure(Severity.HIGH, f"of {len(check.requests)} requests sent at once, "
                                 f"{', '.join(map(str, lost))} got no answer", "lost")
    for rid, method, uri in check.requests:
        result = answers.get(rid)
        if result is None:
            continue
        other = _belongs_elsewhere(exchange, check.requests, rid, method, uri, result)
        if other is not None:
            yield ConcurrencyFailure(Severity.HIGH, f"request {rid} ({method} {uri}".rstrip() + f") got the answer "
                                     f"of {other}: answers were swapped between requests in flight", "swapped")
            return


def _belongs_elsewhere(exchange: Exchange, requests: tuple[tuple[int, str, str], ...], rid: int, method: str,
                       uri: str, result: Any) -> str | None:
    """Which other request this answer fits, when it does not fit its own."""
    if uri:
        contents = result.get("contents") if isinstance(result, dict) else None
        uris = {item.get("uri") for item in contents or [] if isinstance(item, dict)} if isinstance(contents, list) \
            else set()
        if uris and uri not in uris:
            for other_id, _, other_uri in requests:
                if other_id != rid and other_uri in uris:
                    return f"request {other_id} (resources/read {other_uri})"
        return None
    if not result_problems(method, result, exchange.era, exchange.protocol_version):
        return None
    for other_id, other_method, _ in requests:
        if other_method != method and not result_problems(other_method, result, exchange.era,
                                                          exchange.protocol_version):
            return f"request {other_id} ({other_method})"
    return None
