"""A request cancelled at once: the request, `notifications/cancelled` for it and a probe request (one write on stdio,
three POSTs in order over streamable HTTP)."""

from __future__ import annotations

from mcpfuzz.strategies.messages import FrameBuilder

from mcpfuzz.jsonrpc.expectation import CancelCheck, Expectation
from mcpfuzz.jsonrpc.frame import Case, Posting
from mcpfuzz.jsonrpc.oracle_ids import OracleId

CANCEL_FAMILY = "cancel"
# The list method of each capability, in the order tried: a harmless request any such server serves.
LIST_METHODS = (("tools", "tools/list"), ("resources", "resources/list"), ("prompts", "prompts/list"))


def cancel_case(builder: FrameBuilder, capabilities: dict) -> Case | None:
    """Three lines: a list request carrying a progressToken (work a server may do in the background), its
    cancellation, then the era's cheapest request as the probe. On stdio one write; over streamable HTTP three
    POSTs, each sent once the previous one's response headers are in."""
    method = next((m for capability, m in LIST_METHODS if capability in capabilities), None)
    if method is None:
        return None
    rid, probe = builder.fresh_id(), builder.fresh_id()
    meta = {**(builder.meta or {}), "progressToken": f"mcpfuzz-cancel-{rid}"}
    lines = (builder.frame(method, {"_meta": meta}, rid),
             builder.frame("notifications/cancelled", {"requestId": rid, "reason": "mcpfuzz: cancelled at once"}),
             builder.frame(builder.barrier_method, id=probe))
    # Any answer or none to the request (no method: the probe's result is no list); the probe's own answer
    # is due, and its id belongs to this case.
    expect = Expectation(judge=OracleId.CANCEL_RESPECTED, id=rid, result_ok=True, error_ok=True,
                         batch_ids=(probe,), note="after its cancellation, no answer to the request",
                         cancel=CancelCheck(rid, probe))
    return Case(f"{method.replace('/', '-')}-cancelled", CANCEL_FAMILY, f"{method}, cancelled at once",
                b"\n".join(lines), expect, posts=Posting.IN_ORDER)
