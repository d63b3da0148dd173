"""Requests in flight at once: each answered, with its own answer (not another request's)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from mcpfuzz.jsonrpc.exchange import ID_CURRENT, Exchange
from mcpfuzz.jsonrpc.oracle_ids import OracleId
from mcpfuzz.jsonrpc.parts.concurrency import ConcurrencyCheck
from mcpfuzz.oracles.base import Failure, Severity, failure_class, register
from mcpfuzz.oracles.result_shapes import result_problems

ConcurrencyFailure = failure_class(OracleId.CONCURRENCY, "Concurrent requests lost or answered with another's answer")


@register(ConcurrencyFailure, Severity.HIGH, quiet_on_plain=True)
def concurrency(exchange: Exchange) -> Iterator[Failure]:
    """Requests sent at once each get their own answer (not another's; if read-only, not what another gets alone)."""
    check = exchange.case.expect.part(ConcurrencyCheck)
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
    for rid, method, subject in check.requests:
        result = answers.get(rid)
        if result is None:
            continue
        other = _belongs_elsewhere(exchange, check.requests, rid, method, subject, result)
        if other is None and not check.changes_state:  # a state change may explain any answer that differs
            other = _answer_of_another(check, rid, result)
        if other is not None:
            yield ConcurrencyFailure(Severity.HIGH, f"request {rid} ({method} {subject}".rstrip() + f") got the "
                                     f"answer of {other}: answers were swapped between requests in flight", "swapped")
            return


def _belongs_elsewhere(exchange: Exchange, requests: tuple[tuple[int, str, str], ...], rid: int, method: str,
                       subject: str, result: Any) -> str | None:
    """Which other request this answer fits by its structure, when it does not fit its own."""
    if method == "resources/read":
        contents = result.get("contents") if isinstance(result, dict) else None
        uris = {item.get("uri") for item in contents or [] if isinstance(item, dict)} if isinstance(contents, list) \
            else set()
        if uris and subject not in uris:
            for other_id, other_method, other_uri in requests:
                if other_id != rid and other_method == method and other_uri in uris:
                    return f"request {other_id} (resources/read {other_uri})"
        return None
    if not result_problems(method, result, exchange.era, exchange.protocol_version):
        return None
    for other_id, other_method, _ in requests:
        if other_method != method and not result_problems(other_method, result, exchange.era,
                                                          exchange.protocol_version):
            return f"request {other_id} ({other_method})"
    return None


def _answer_of_another(check: ConcurrencyCheck, rid: int, result: Any) -> str | None:
    """The other request whose answer alone this one got instead of its own (None when it cannot be told).

    Only stable answers count: a request whose answers alone before and after the burst differ is not
    deterministic, and an answer that matches no other request's may be a legitimate change of state (a
    resource counting requests in flight), so neither is judged.
    """
    stable = {alone.request: _canonical(alone.before) for alone in check.alone
              if alone.before is not None and _canonical(alone.before) == _canonical(alone.after)}
    own = stable.get(rid)
    got = _canonical(result)
    if own is None or got == own:
        return None
    for other_id, method, subject in check.requests:
        if other_id != rid and stable.get(other_id) == got:
            return f"request {other_id} ({method} {subject}".rstrip() + ", as it answers it alone)"
    return None


def _canonical(value: Any) -> str:
    """A result as compared: `_meta` dropped at every depth (MCP lets it carry anything, per response), object
    keys and array items in a fixed order (a server may list from an unordered map)."""
    return json.dumps(_strip(value), sort_keys=True, ensure_ascii=True)


def _strip(value: Any) -> Any:
    if isinstance(value, dict):
        return {key: _strip(item) for key, item in value.items() if key != "_meta"}
    if isinstance(value, list):
        return sorted((_strip(item) for item in value), key=lambda item: json.dumps(item, sort_keys=True))
    return value
