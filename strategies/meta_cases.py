"""Requests carrying `_meta`: keys a server must accept in both eras, and 2026-07-28's required keys mistyped."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from mcpfuzz.strategies.messages import FrameBuilder

from mcpfuzz.jsonrpc import expectation as ex
from mcpfuzz.jsonrpc.expectation import Expectation
from mcpfuzz.jsonrpc.frame import Case
from mcpfuzz.jsonrpc.oracle_ids import OracleId
from mcpfuzz.jsonrpc.versions import META_CAPABILITIES_KEY, META_VERSION_KEY, Era

META_FAMILY = "meta"
# The `_meta` object is open (MCP basic/index, "_meta"): a progress token, a W3C trace context and a
# vendor-prefixed key are all keys a client may send and a server must not refuse.
ACCEPTED: tuple[tuple[str, str, dict[str, Any]], ...] = (
    ("progress-token", "a progressToken", {"progressToken": "mcpfuzz-progress-1"}),
    ("traceparent", "a W3C traceparent", {"traceparent": "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"}),
    ("vendor-key", "a vendor-prefixed key", {"com.example.mcpfuzz/trace": {"depth": 1, "tags": ["a"]}}),
)
# 2026-07-28: every request's _meta carries these two with these types; other types are a malformed request.
MISTYPED: tuple[tuple[str, str, str, Any], ...] = (
    ("capabilities-string", "clientCapabilities a string", META_CAPABILITIES_KEY, "all"),
    ("capabilities-list", "clientCapabilities a list", META_CAPABILITIES_KEY, []),
    ("capabilities-null", "clientCapabilities null", META_CAPABILITIES_KEY, None),
    ("version-number", "protocolVersion a number", META_VERSION_KEY, 20260728),
)


def meta_family(b: FrameBuilder, ctx: Any) -> Iterator[Case]:
    """`_meta` keys that must be accepted; in the modern era, its required keys with the wrong type."""
    method = b.barrier_method
    for case_id, title, extra in ACCEPTED:
        rid = b.fresh_id()
        yield Case(case_id, META_FAMILY, f"{method} with {title} in _meta",
                   b.frame(method, {"_meta": {**(b.meta or {}), **extra}}, rid), ex.result(rid, method))
    if ctx.era is not Era.MODERN:
        return
    for case_id, title, key, value in MISTYPED:
        rid = b.fresh_id()
        # Any error is right (the spec names no code); silence is high (the id is readable), a result low.
        expect = Expectation(judge=OracleId.INVALID_PARAMS, id=rid, note=f"{title} is a malformed request",
                             wrong_answer="low")
        yield Case(case_id, META_FAMILY, f"{method} with {title}",
                   b.frame(method, {"_meta": {**(b.meta or {}), key: value}}, rid), expect)
