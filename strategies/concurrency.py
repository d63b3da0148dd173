"""Read-only requests in flight at once: list methods, reads of listed resources and calls of tools annotated
`readOnlyHint: true`, sent together (one write on stdio, POSTs in flight at once over streamable HTTP)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from mcpfuzz.strategies.messages import FrameBuilder

from mcpfuzz.jsonrpc.expectation import ConcurrencyCheck, Expectation
from mcpfuzz.jsonrpc.frame import Case, Posting
from mcpfuzz.jsonrpc.oracle_ids import OracleId

CONCURRENCY_FAMILY = "concurrency"
MAX_READS = 4
MAX_TOOL_CALLS = 4


def concurrent_case(builder: FrameBuilder, list_methods: list[str], uris: list[str],
                    tool_calls: Sequence[tuple[str, dict[str, Any]]] = ()) -> Case | None:
    """One line per request, all in one write (over streamable HTTP, one POST each, all in flight at once); None
    when fewer than two requests can be made.

    `tool_calls` are (tool, valid arguments) of tools annotated readOnlyHint: true only: calling one twice at
    once must be harmless, and any other tool may change what the others answer.
    """
    requests: list[tuple[int, str, str, dict[str, Any] | None]] = [
        (builder.fresh_id(), method, "", None) for method in list_methods]
    requests += [(builder.fresh_id(), "resources/read", uri, {"uri": uri}) for uri in uris[:MAX_READS]]
    requests += [(builder.fresh_id(), "tools/call", name, {"name": name, "arguments": arguments})
                 for name, arguments in tool_calls[:MAX_TOOL_CALLS]]
    if len(requests) < 2:
        return None
    lines = [builder.frame(method, params or {}, rid) for rid, method, _, params in requests]
    ids = tuple(rid for rid, _, _, _ in requests)
    described = tuple((rid, method, subject) for rid, method, subject, _ in requests)
    expect = Expectation(judge=OracleId.CONCURRENCY, id=ids[0], batch_ids=ids, result_ok=True, error_ok=True,
                         well_formed=True, note="each request answered once, with its own answer",
                         concurrent=ConcurrencyCheck(described))
    return Case("read-only-at-once", CONCURRENCY_FAMILY, f"{len(requests)} read-only requests at once",
                b"\n".join(lines), expect, patient=True, posts=Posting.AT_ONCE)


def same_target_case(builder: FrameBuilder, tool: str, argument_sets: Sequence[dict[str, Any]]) -> Case | None:
    """One read-only tool called at once with distinct arguments (a handler keeping its argument in shared state
    answers each with another's result); None with fewer than two distinct argument sets."""
    case = concurrent_case(builder, [], [], [(tool, arguments) for arguments in argument_sets])
    if case is None:
        return None
    count = min(len(argument_sets), MAX_TOOL_CALLS)
    return replace(case, id=f"{tool}-at-once", title=f"{tool} called {count} times at once with distinct arguments")
