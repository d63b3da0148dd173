"""`resources/subscribe` and `resources/unsubscribe` (legacy era, when the server declares `resources.subscribe`)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from mcpfuzz.strategies.messages import FrameBuilder

from mcpfuzz.jsonrpc import expectation as ex
from mcpfuzz.jsonrpc.frame import Case
from mcpfuzz.jsonrpc.versions import Era


def subscription_family(b: FrameBuilder, ctx: Any) -> Iterator[Case]:
    """Subscribe to a listed resource, then unsubscribe: each an (empty) result.

    2026-07-28 replaced both with `subscriptions/listen`, a request answered only when the server ends the
    subscription (silence is right there), so the modern era sends nothing here.
    """
    resources = ctx.capabilities.get("resources")
    uri = getattr(ctx, "resource", None)
    if ctx.era is not Era.LEGACY or not isinstance(resources, dict) or resources.get("subscribe") is not True \
            or uri is None:
        return
    for method in ("resources/subscribe", "resources/unsubscribe"):
        rid = b.fresh_id()
        yield Case(method.removeprefix("resources/"), "subscription", f"{method} {uri}",
                   b.frame(method, {"uri": uri}, rid), ex.result(rid, method))
