"""Requests in flight at once: list methods, reads of listed resources and tool calls, sent together (one write on
stdio, POSTs in flight at once over streamable HTTP). A tool not annotated `readOnlyHint: true` may change state:
its case says so, and its answers are then judged on their own, never compared with answers alone."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from mcpfuzz.strategies.messages import FrameBuilder

from mcpfuzz.jsonrpc.expectation import Expectation
from mcpfuzz.jsonrpc.frame import Case, Posting
from mcpfuzz.jsonrpc.oracle_ids import OracleId
from mcpfuzz.jsonrpc.parts.concurrency import ConcurrencyCheck

CONCURRENCY_FAMILY = "concurrency"
MAX_READS = 4
MAX_TOOL_CALLS = 4


def concurrent_case(builder: FrameBuilder, list_methods: list[str], uris: list[str],
                    tool_calls: Sequence[tuple[str, dict[str, Any]]] = (), *, changes_state: bool = False
                    ) -> Case | None:
    """One line per request, all in one write (over streamable HTTP, one POST each, all in flight at once); None
    when fewer than two requests can be made.

    `tool_calls` are (tool, valid arguments) of tools the run calls anyway; `changes_state`: one of them is not
    annotated readOnlyHint: true, so it may change what the others answer (each is then only checked to be
    answered once, with its own id and an answer of its own method's shape).
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
                         parts=(ConcurrencyCheck(described, changes_state=changes_state),))
    calls = any(method == "tools/call" for _, method, _, _ in requests)  # a tool may take long: --call-timeout
    if changes_state:
        return Case("requests-at-once", CONCURRENCY_FAMILY, f"{len(requests)} requests at once",
                    b"\n".join(lines), expect, patient=True, slow_ok=calls, posts=Posting.AT_ONCE)
    return Case("read-only-at-once", CONCURRENCY_FAMILY, f"{len(requests)} read-only requests at once",
                b"\n".join(lines), expect, patient=True, slow_ok=calls, posts=Posting.AT_ONCE)


def same_target_case(builder: FrameBuilder, tool: str, argument_sets: Sequence[dict[str, Any]], *,
                     changes_state: bool = False) -> Case | None:
    """One tool called at once with distinct arguments; None with fewer than two distinct argument sets. A
    read-only one's answers are compared with each call's answer alone (a handler keeping its argument in shared
    state answers each with another's result); one that may change state (`changes_state`) is only checked to
    answer each call once, with its own id."""
    case = concurrent_case(builder, [], [], [(tool, arguments) for arguments in argument_sets],
                           changes_state=changes_state)
    if case is None:
        return None
    count = min(len(argument_sets), MAX_TOOL_CALLS)
    return replace(case, id=f"{tool}-at-once", title=f"{tool} called {count} times at once with distinct arguments")
