"""Whether the server has been seen answering in the order it was sent frames: then a barrier's answer is a fence.

On an ordered stream (stdio, legacy SSE) a barrier request follows each case. A server that handles its input one
message at a time writes whatever it says about a frame before it answers the barrier sent after it, so once the
barrier is answered a silent frame is silent for good, and waiting the grace on top of it buys nothing. A server
that handles requests concurrently (an async SDK's handlers) may answer a frame after the barrier sent behind it:
there the grace is what catches such an answer.

So the fence replaces the grace only for a malformed frame (refused by the server's reader or dispatcher, before
any handler runs; a valid request keeps its grace, its silence being a critical finding), only once order has been
shown (ORDER_EVIDENCE cases answered before their barrier), and never after one answer came behind its fence (in a
case's grace, or as an answer to an earlier case that arrived later): from then on every case gets its grace again,
for the rest of the session.
"""

from __future__ import annotations

# Cases answered before their barrier, none after it, before the barrier's answer alone settles a silent frame.
ORDER_EVIDENCE = 8


class AnswerOrder:
    """What the session has seen of the server's answer order (see the module's docstring)."""

    def __init__(self) -> None:
        self.in_order = 0  # cases due an answer whose answer came before their barrier's
        self.broken = ""  # what showed an answer behind its fence (empty: nothing yet)

    @property
    def shown(self) -> bool:
        """True when the barrier's answer may settle a silent frame at once: order seen, never broken."""
        return not self.broken and self.in_order >= ORDER_EVIDENCE

    def answered(self, *, before_fence: bool) -> None:
        """A case due an answer got it, before its barrier's answer or after it."""
        if before_fence:
            self.in_order += 1
        else:
            self.overtaken("a case answered after its barrier")

    def overtaken(self, why: str) -> None:
        """An answer came behind a fence: the grace again, for good (the first reason is kept)."""
        self.broken = self.broken or why
