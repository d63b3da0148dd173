"""Requests cancelled with `notifications/cancelled`: a list request cancelled at once (a request most servers have
finished by then: cancelling it must be ignored), and a request cancelled while in flight, a moment inside its
measured latency (work in flight)."""

from __future__ import annotations

from typing import Any

from mcpfuzz.strategies.messages import FrameBuilder

from mcpfuzz.jsonrpc.expectation import Expectation
from mcpfuzz.jsonrpc.frame import Case, Posting
from mcpfuzz.jsonrpc.oracle_ids import OracleId
from mcpfuzz.jsonrpc.parts.cancel import CancelCheck

CANCEL_FAMILY = "cancel"
IN_FLIGHT_FAMILY = "in-flight"
# The list method of each capability, in the order tried: a harmless request any such server serves.
LIST_METHODS = (("tools", "tools/list"), ("resources", "resources/list"), ("prompts", "prompts/list"))


def cancel_case(builder: FrameBuilder, capabilities: dict) -> Case | None:
    """A list request carrying a progressToken (work a server may do in the background), a liveness request, its
    cancellation, then the era's cheapest request as the probe. On stdio one write; over streamable HTTP four
    POSTs, each sent once the previous one's response headers are in.

    Its latency is unknown here, and a list is done in a moment: an answer right behind the probe's may be a race,
    so cancel-respected judges only one that comes clearly later (the other oracles judge the rest: cancelling a
    finished request must be ignored, never crash or silence the probe).
    """
    method = next((m for capability, m in LIST_METHODS if capability in capabilities), None)
    if method is None:
        return None
    case = in_flight_cancel_case(builder, method, {}, pause=0.0, latency=0.0, why="cancelled at once")
    return Case(f"{method.replace('/', '-')}-cancelled", CANCEL_FAMILY, f"{method}, cancelled at once", case.data,
                case.expect, posts=Posting.IN_ORDER)


def in_flight_cancel_case(builder: FrameBuilder, method: str, params: dict[str, Any], *, pause: float,
                          latency: float, subject: str = "", why: str = "") -> Case:
    """Four lines: the request (with a progressToken), then, `pause` seconds later on stdio, in one write: a
    liveness request (answered while the request is unanswered: it was still running), the request's cancellation
    and the probe. `latency` is the shortest answer the request's target was measured to take (0: unknown)."""
    rid, running, probe = builder.fresh_id(), builder.fresh_id(), builder.fresh_id()
    meta = {**(builder.meta or {}), **(params.get("_meta") or {}), "progressToken": f"mcpfuzz-cancel-{rid}"}
    reason = f"mcpfuzz: {why or 'cancelled while it runs'}"  # no timing: the same seed sends the same frames
    lines = (builder.frame(method, {**params, "_meta": meta}, rid),
             builder.frame(builder.barrier_method, id=running),
             builder.frame("notifications/cancelled", {"requestId": rid, "reason": reason}),
             builder.frame(builder.barrier_method, id=probe))
    # Any answer or none to the request; the two liveness requests' answers are due, and their ids belong to
    # this case.
    expect = Expectation(judge=OracleId.CANCEL_RESPECTED, id=rid, result_ok=True, error_ok=True,
                         batch_ids=(running, probe), note="after its cancellation, no answer to the request",
                         parts=(CancelCheck(rid, probe, running, round(pause, 3), round(latency, 3)),))
    title = f"{method} {subject}".rstrip() + f", cancelled after {pause:.2f}s"
    return Case(subject or method.replace("/", "-"), IN_FLIGHT_FAMILY, title, b"\n".join(lines), expect,
                posts=Posting.IN_ORDER)
