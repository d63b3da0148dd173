"""Read-only requests in flight at once: list methods and reads of listed resources, written in one go."""

from __future__ import annotations

from mcpfuzz.strategies.messages import FrameBuilder

from mcpfuzz.jsonrpc.expectation import ConcurrencyCheck, Expectation
from mcpfuzz.jsonrpc.frame import Case
from mcpfuzz.jsonrpc.oracle_ids import OracleId

CONCURRENCY_FAMILY = "concurrency"
MAX_READS = 4


def concurrent_case(builder: FrameBuilder, list_methods: list[str], uris: list[str]) -> Case | None:
    """One line per request, all in one write (stdio only); None when fewer than two requests can be made."""
    requests = [(builder.fresh_id(), method, "") for method in list_methods]
    requests += [(builder.fresh_id(), "resources/read", uri) for uri in uris[:MAX_READS]]
    if len(requests) < 2:
        return None
    lines = [builder.frame(method, {"uri": uri} if uri else {}, rid) for rid, method, uri in requests]
    ids = tuple(rid for rid, _, _ in requests)
    expect = Expectation(judge=OracleId.CONCURRENCY, id=ids[0], batch_ids=ids, result_ok=True, error_ok=True,
                         well_formed=True, note="each request answered once, with its own answer",
                         concurrent=ConcurrencyCheck(tuple(requests)))
    return Case("read-only-at-once", CONCURRENCY_FAMILY, f"{len(requests)} read-only requests in one write",
                b"\n".join(lines), expect, patient=True)
