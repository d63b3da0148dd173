"""What a server declares, it serves: list methods that answer and end, listed resources that read, and the
not-found error of the negotiated era for a URI that does not exist."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from mcpfuzz.jsonrpc.client_check import MISSING_CAPABILITY
from mcpfuzz.jsonrpc.exchange import Exchange
from mcpfuzz.jsonrpc.expectation import INVALID_PARAMS, LEGACY_NOT_FOUND, METHOD_NOT_FOUND
from mcpfuzz.jsonrpc.oracle_ids import OracleId
from mcpfuzz.jsonrpc.parts.listing import ListingCheck
from mcpfuzz.jsonrpc.parts.resource import ResourceCheck
from mcpfuzz.jsonrpc.versions import Era
from mcpfuzz.oracles.answers import case_answers
from mcpfuzz.oracles.base import Failure, Severity, failure_class, register

DeclaredServedFailure = failure_class(OracleId.DECLARED_SERVED, "A declared capability or listed item is not served")
ResourceNotFoundFailure = failure_class(OracleId.RESOURCE_NOT_FOUND,
                                        "Unknown resource not answered with the era's not-found error")


def _error_text(message: Any) -> str:
    error = message.get("error") if isinstance(message, dict) else None
    text = error.get("message") if isinstance(error, dict) else None
    return repr(text)[:120] if text is not None else "(no message)"


@register(DeclaredServedFailure, Severity.HIGH, quiet_on_plain=True)
def declared_served(exchange: Exchange) -> Iterator[Failure]:
    """A declared list method answers, its cursors never repeat; a listed resource reads, its URI in contents."""
    expect = exchange.case.expect
    for arrival in case_answers(exchange)[:1]:
        incoming = arrival.incoming
        listing, resource = expect.part(ListingCheck), expect.part(ResourceCheck)
        if listing is not None and expect.method is not None:
            if incoming.is_error and listing.page == 1 and incoming.error_code == METHOD_NOT_FOUND:
                # Only the first page: a later one replays a cursor of an earlier process, which may be stale.
                yield DeclaredServedFailure(
                    _unserved_severity(expect.method), f"the server declares the `{listing.capability}` capability, "
                    f"but {expect.method} answered error {incoming.error_code}: {_error_text(incoming.message)}",
                    f"refused:{expect.method}")
                continue
            if incoming.is_error:
                continue  # served, and failed for a reason of its own (a backend away): not a capability unserved
            result = incoming.message.get("result") if incoming.is_result else None
            cursor = result.get("nextCursor") if isinstance(result, dict) else None
            if isinstance(cursor, str) and cursor and cursor in listing.cursors:
                yield DeclaredServedFailure(
                    Severity.HIGH, f"{expect.method} page {listing.page} returned the cursor {cursor!r} again: a "
                    "client that follows nextCursor pages for ever", f"cursor-loop:{expect.method}")
        if resource is not None and resource.listed:
            yield from _listed_read(incoming, resource.uri)


# The list method a declared capability is for: a client that finds it missing cannot use the capability at all.
# `resources/templates/list` rides on `resources` too, but a client without it still lists and reads resources.
SECONDARY_LISTS = frozenset({"resources/templates/list"})


def _unserved_severity(method: str) -> Severity:
    """How bad a declared capability's list method missing is: high for the capability's own list, medium for a
    list a client can do without."""
    return Severity.MEDIUM if method in SECONDARY_LISTS else Severity.HIGH


def _listed_read(incoming: Any, uri: str) -> Iterator[Failure]:
    if incoming.error_code == MISSING_CAPABILITY:
        return  # 2026-07-28 basic/patterns/mrtr: a read that needs input the request's client cannot give
    if incoming.is_error:
        yield DeclaredServedFailure(Severity.MEDIUM, f"resources/list names {uri!r}, but reading it answered error "
                                    f"{incoming.error_code}: {_error_text(incoming.message)}", "unreadable")
        return
    result = incoming.message.get("result") if incoming.is_result else None
    contents = result.get("contents") if isinstance(result, dict) else None
    if not isinstance(contents, list) or not contents:
        return  # the shape is response-schema's; empty contents are allowed for a resource that exists
    uris = [item.get("uri") for item in contents if isinstance(item, dict)]
    if uri not in uris:
        yield DeclaredServedFailure(Severity.MEDIUM, f"reading {uri!r} returned contents for "
                                    f"{', '.join(repr(u) for u in uris[:3])}, not for the URI that was read",
                                    "contents-uri")


@register(ResourceNotFoundFailure, Severity.MEDIUM, quiet_on_plain=True)
def resource_not_found(exchange: Exchange) -> Iterator[Failure]:
    """An unknown URI gets -32002 before 2026-07-28 (SHOULD), -32602 from it (MUST, and never empty contents)."""
    resource = exchange.case.expect.part(ResourceCheck)
    if resource is None or not resource.missing:
        return
    modern = exchange.era is Era.MODERN
    for arrival in case_answers(exchange)[:1]:
        incoming = arrival.incoming
        code = incoming.error_code
        if incoming.is_error:
            if modern and code == LEGACY_NOT_FOUND:
                # 2026-07-28 server/resources: clients SHOULD still accept the earlier code.
                yield ResourceNotFoundFailure(Severity.LOW, "answered -32002, the not-found code of earlier "
                                              "revisions; 2026-07-28 requires -32602", "code:-32002")
            elif code not in ({INVALID_PARAMS} if modern else {LEGACY_NOT_FOUND}):
                wanted = INVALID_PARAMS if modern else LEGACY_NOT_FOUND
                yield ResourceNotFoundFailure(Severity.MEDIUM if modern else Severity.LOW,
                                              f"answered error {code} instead of {wanted} (resource not found): "
                                              f"{_error_text(incoming.message)}", f"code:{code}")
            continue
        result = incoming.message.get("result") if incoming.is_result else None
        if modern and isinstance(result, dict) and result.get("contents") == []:
            yield ResourceNotFoundFailure(Severity.MEDIUM, "answered empty contents for a resource that does not "
                                          "exist; 2026-07-28 requires error -32602", "empty-contents")
