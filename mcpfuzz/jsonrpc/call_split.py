"""Where a judged call's time goes: seconds per part of a call, summed only while a benchmark turns it on.

Every hook reads `SPLIT.on` first and does nothing else when it is off (a normal run), so the parts cost an
attribute read each. The parts are consecutive on one call's path (the Hypothesis worker thread and the event
loop take turns), so what they leave of a call's wall time is the rest: asyncio's turns, the hops between the
thread and the loop, the session's and collector's own logic.
"""

from __future__ import annotations

from time import perf_counter

# In the order a call goes through them.
PARTS = ("hypothesis", "draw", "encode", "write", "wait", "parse", "judge", "bookkeeping")


class CallSplit:
    """perf_counter totals per part; `on` is False outside a benchmark."""

    def __init__(self) -> None:
        self.on = False
        self.seconds: dict[str, float] = dict.fromkeys(PARTS, 0.0)
        self.written_at = 0.0  # the end of the last write not yet followed by a read (0: none)
        self.example_ended = 0.0  # when the worker thread last handed an example back to Hypothesis (0: none)
        self._draw_at_example_end = 0.0

    def start(self) -> None:
        """Zero every total and start summing."""
        self.seconds = dict.fromkeys(PARTS, 0.0)
        self.written_at = self.example_ended = self._draw_at_example_end = 0.0
        self.on = True

    def stop(self) -> dict[str, float]:
        """Stop summing; the totals."""
        self.on = False
        return dict(self.seconds)

    def add(self, part: str, since: float) -> None:
        """`perf_counter() - since` more seconds for `part`."""
        self.seconds[part] += perf_counter() - since

    def written(self) -> None:
        """A write just ended: the time until the next read is waiting for the server."""
        self.written_at = perf_counter()

    def read(self) -> None:
        """A read just returned: the wait since the last write ends."""
        if self.written_at:
            self.add("wait", self.written_at)
            self.written_at = 0.0

    def example_starts(self) -> None:
        """Hypothesis hands the body an example: its time since the last one, less the draws in it, is its own."""
        now = perf_counter()
        if self.example_ended:
            drawn = self.seconds["draw"] - self._draw_at_example_end
            self.seconds["hypothesis"] += max(0.0, now - self.example_ended - drawn)

    def example_ends(self) -> None:
        """The body returned to Hypothesis."""
        self.example_ended = perf_counter()
        self._draw_at_example_end = self.seconds["draw"]


SPLIT = CallSplit()
