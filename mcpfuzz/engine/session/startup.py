"""How long the server takes to start: seconds from spawning a process to its first answer, per cold start."""

from __future__ import annotations

import statistics
from collections import deque
from typing import Any

KEPT = 101  # the latest starts the median is taken over (a soak may start thousands of processes)


class StartupTimes:
    """The measured starts of a session's server (a standby's start is not seen: nobody asked it anything then), and
    how long starts kept the run waiting for a first answer (a standby's, only what was left of its start)."""

    def __init__(self) -> None:
        self._latest: deque[float] = deque(maxlen=KEPT)
        self.first: float | None = None
        self.count = 0
        self.waited = 0.0  # seconds, over every start: from asking for a process to its first answer
        self.median: float | None = None  # of the latest starts (read after every case: kept, not recomputed)

    def add(self, seconds: float) -> None:
        """One more process answered `seconds` after it was spawned."""
        self.first = seconds if self.first is None else self.first
        self._latest.append(seconds)
        self.count += 1
        self.median = statistics.median(self._latest)

    def add_wait(self, seconds: float) -> None:
        """A start kept the run waiting `seconds` for the process' first answer."""
        self.waited += seconds

    @property
    def last(self) -> float | None:
        """The latest start measured."""
        return self._latest[-1] if self._latest else None

    def as_dict(self) -> dict[str, Any] | None:
        """JSON-ready figures (None when no start was measured: a URL mcpfuzz did not launch, an in-process server)."""
        if self.first is None or self.last is None or self.median is None:
            return None
        return {"first_s": round(self.first, 3), "last_s": round(self.last, 3), "median_s": round(self.median, 3),
                "count": self.count, "waited_s": round(self.waited, 3)}
