"""Lists that must not depend on the connection: 2026-07-28 servers are stateless (list-identity)."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

from mcpfuzz.jsonrpc.exchange import Exchange
from mcpfuzz.jsonrpc.oracle_ids import OracleId
from mcpfuzz.jsonrpc.parts.identity import IdentityCheck
from mcpfuzz.oracles.answers import case_answers
from mcpfuzz.oracles.base import Failure, Severity, failure_class, register

ListIdentityFailure = failure_class(OracleId.LIST_IDENTITY, "A list varies between connections")
SHOWN = 3  # names quoted per side in a message


def _names(items: Sequence[Any], name_key: str) -> list[str]:
    """Each item's name (or URI); an item without one counts by its whole JSON text, `_meta` left out."""
    names = []
    for item in items:
        name = item.get(name_key) if isinstance(item, dict) else None
        if not isinstance(name, str):
            name = repr({k: v for k, v in item.items() if k != "_meta"} if isinstance(item, dict) else item)
        names.append(name)
    return names


def _quoted(names: set[str]) -> str:
    shown = ", ".join(repr(name[:80]) for name in sorted(names)[:SHOWN])
    return shown + (f" and {len(names) - SHOWN} more" if len(names) > SHOWN else "")


@register(ListIdentityFailure, Severity.HIGH)
def list_identity(exchange: Exchange) -> Iterator[Failure]:
    """2026-07-28: a fresh connection lists the tools, prompts and resources the one in use does (tools in order)."""
    expect = exchange.case.expect
    check = expect.part(IdentityCheck)
    if check is None or check.baseline is None:
        return
    for arrival in case_answers(exchange)[:1]:
        result = arrival.incoming.message.get("result") if arrival.incoming.is_result else None
        items = result.get(check.list_key) if isinstance(result, dict) else None
        if not isinstance(items, list):
            return  # a refusal or a malformed page is for declared-served and response-schema
        cursor = result.get("nextCursor") if isinstance(result, dict) else None
        yield from _compare(check, _names(items, check.name_key), complete=not (isinstance(cursor, str) and cursor),
                            method=expect.method or check.list_key)


def _compare(check: IdentityCheck, fresh: list[str], *, complete: bool, method: str) -> Iterator[Failure]:
    assert check.baseline is not None
    before = _names(check.baseline, check.name_key)
    extra = set(fresh) - set(before)
    missing = set(before) - set(fresh) if complete else set()  # a first page of several names only some
    if extra or missing:
        parts = [f"{len(extra)} not listed on the connection in use ({_quoted(extra)})" if extra else "",
                 f"{len(missing)} missing ({_quoted(missing)})" if missing else ""]
        yield ListIdentityFailure(
            Severity.HIGH, f"{method} on a fresh connection differs from the same list on the connection in use, "
            f"asked just before: {'; '.join(p for p in parts if p)}. A 2026-07-28 server's list MUST NOT vary "
            "per connection", f"set:{method}", server_wide=True)
    elif check.ordered and complete and fresh != before:
        yield ListIdentityFailure(
            Severity.LOW, f"{method} on a fresh connection lists the same {len(fresh)} items in another order "
            f"(first {fresh[:SHOWN]!r}, before {before[:SHOWN]!r}); servers SHOULD return them in a deterministic "
            "order", f"order:{method}", server_wide=True)
