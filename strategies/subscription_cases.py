"""Subscriptions: `resources/subscribe` and `resources/unsubscribe` (legacy era), `subscriptions/listen`
(2026-07-28), when the server declares `resources.subscribe`."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from mcpfuzz.strategies.messages import FrameBuilder
from mcpfuzz.strategies.surfaces.resources import MISSING_SUFFIX

from mcpfuzz.jsonrpc import expectation as ex
from mcpfuzz.jsonrpc.expectation import Expectation
from mcpfuzz.jsonrpc.frame import Case
from mcpfuzz.jsonrpc.oracle_ids import OracleId
from mcpfuzz.jsonrpc.versions import Era

SUBSCRIPTION_FAMILY = "subscription"
LEGACY_METHODS = ("resources/subscribe", "resources/unsubscribe")


def subscription_family(b: FrameBuilder, ctx: Any) -> Iterator[Case]:
    """Subscribe to a listed resource, then unsubscribe: each an (empty) result in the legacy era; the same for a
    URI that no listing names: any answer.

    2026-07-28 removed both (a subscription is a `subscriptions/listen` request, see `listen_case`): there any
    answer is right, -32601 above all; only silence or a crash counts.
    """
    uri = getattr(ctx, "resource", None)
    if not _subscribable(ctx.capabilities) or uri is None:
        return
    for method in LEGACY_METHODS:
        rid = b.fresh_id()
        expect = ex.result(rid, method) if ctx.era is Era.LEGACY else ex.any_answer(
            rid, note="removed in 2026-07-28: -32601 is right, and so is any other answer")
        yield Case(method.removeprefix("resources/"), SUBSCRIPTION_FAMILY, f"{method} {uri}",
                   b.frame(method, {"uri": uri}, rid), expect)
    yield from unknown_uri_cases(b, uri + MISSING_SUFFIX)


def unknown_uri_cases(b: FrameBuilder, uri: str) -> Iterator[Case]:
    """Subscribe to and unsubscribe from a URI no listing names: no revision says which answer (an error, or an
    empty result for a resource that may appear later), but a request is answered, never left waiting."""
    for method in LEGACY_METHODS:
        rid = b.fresh_id()
        yield Case(method.removeprefix("resources/") + "-unknown", SUBSCRIPTION_FAMILY,
                   f"{method} {uri}, which no listing names", b.frame(method, {"uri": uri}, rid),
                   ex.any_answer(rid, note="a URI no listing names: any answer, never silence"))


def listen_case(b: FrameBuilder, capabilities: dict, uri: str | None) -> Case | None:
    """2026-07-28 `subscriptions/listen` for a listed resource, ended by the client: three lines in one write
    (stdio only): the listen, `notifications/cancelled` for it, and the era's cheapest request.

    The listen is answered only when the server ends the subscription, so silence is right (never a hang); the
    server may first send `notifications/subscriptions/acknowledged`. An immediate error (the server refused
    the subscription) is a JSON-RPC answer any request may get, except -32601: `resources.subscribe` says
    resource subscriptions exist, and listen is how a client makes one (a method-not-found finding). After the
    cancel the server must go on answering: a crash is no-crash's, silence from then on no-hang's.
    """
    if b.era is not Era.MODERN or not _subscribable(capabilities) or uri is None:
        return None
    rid, probe = b.fresh_id(), b.fresh_id()
    lines = (b.frame("subscriptions/listen", {"notifications": {"resourceSubscriptions": [uri]}}, rid),
             b.frame("notifications/cancelled", {"requestId": rid, "reason": "mcpfuzz: subscription ended"}),
             b.frame(b.barrier_method, id=probe))
    # error_ok=False lets the standard codes' owners say a valid request was refused with their code (-32601:
    # method-not-found); no oracle requires an answer to the listen (not well_formed: silence is due).
    expect = Expectation(judge=OracleId.NO_HANG, id=rid, result_ok=True, error_ok=False, batch_ids=(probe,),
                         note="no answer until the subscription ends; after the cancel, the next request answered")
    return Case("listen-cancelled", SUBSCRIPTION_FAMILY, f"subscriptions/listen {uri}, then cancelled",
                b"\n".join(lines), expect)


def _subscribable(capabilities: dict) -> bool:
    resources = capabilities.get("resources")
    return isinstance(resources, dict) and resources.get("subscribe") is True
