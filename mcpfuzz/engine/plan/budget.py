"""The run's one budget: every time formula of a run, and how the time was spent, phase by phase.

The policy, in one place:

- The run ends at `--budget`. A margin at the very end is kept for writing the reports (growing with the number of
  findings to write), and before it a reserve for re-running findings on a fresh server (verification).
- After the probe, when there are targets to call, the phases that call them (coverage, fuzz, stateful) are
  guaranteed `CALL_SHARE` of the time left. The phases about the protocol (lint, the corpus replay, the
  catalogue, lifecycle, verification of what they found) share the rest, in that order; what does not fit is
  left out and said. A case that needs a fresh process is charged the server's measured start-up time before it
  starts, so a server that takes seconds to start does not spend the run restarting.
- Within the call phases, each phase declares its own share (`share` on its class): coverage up to 30% of their
  time, then the fuzz phase 60% of the rest (random frames first, a quarter of it), then call sequences the
  remainder, less what they keep for the phases of the plan after them: each such phase declares what it needs
  (`KeepsTime.kept_share`) and `kept` sums them. The flight phase (requests cancelled inside their measured
  latency, one target called at once) keeps about twice the answer times the calls so far measured for what it
  will send, up to 25%; the client phase 20% when a tool asked for input (a server request, `input_required`,
  -32021); the tasks phase 15% when the server declares tasks. Without call sequences (`--phases`), the fuzz phase
  leaves the same parts of its remainder to those phases.
- Without a target to call, the protocol phases and the random frames have the whole run.
- A run that counts its examples (`--max-examples`, `counted`) is not sliced: each phase and each search runs
  until its count is done, and only `--budget` ends it. A share of time would make a slower machine draw fewer
  examples, and the same seed would no longer send the same frames.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

VERIFY_RESERVE = 5.0  # seconds at most kept at the end to re-run findings on a fresh server
REPORT_MARGIN = 2.0  # seconds at most kept at the very end for the reports
# What each finding adds to the end of a run (its transcript rewritten, its part of every report file and of the
# console), generously: a run that found a thousand things still ends on time.
REPORT_SECONDS_PER_FINDING = 0.003
CALL_SHARE = 0.7  # of the time left after the probe, at least, for the phases that call targets


@dataclass
class Budget:
    """When a run must end and when each phase must stop; what each phase took."""

    total: float
    started: float = field(default_factory=time.monotonic)
    # The end of the protocol phases' share, set once the probe knows whether there are targets to call.
    protocol_until: float | None = None
    spent: dict[str, float] = field(default_factory=dict)  # phase name -> wall-clock seconds
    began: dict[str, float] = field(default_factory=dict)  # phase name -> seconds after `started` it first began
    restart_cost: float = 0.0  # seconds a new server process takes to answer, as measured
    counted: bool = False  # --max-examples: searches end at their count, so no phase gets a share of the time

    @property
    def hard_end(self) -> float:
        """Where `--budget` ends: nothing of the run's own work goes past it."""
        return self.started + self.total

    @property
    def verify_until(self) -> float:
        """The end of verification: the margin for the reports is kept after it."""
        return self.hard_end - min(REPORT_MARGIN, self.total * 0.05)

    def verify_until_for(self, findings: int) -> float:
        """The end of verification for a run that has `findings` to report: their reports' time is kept after it
        too (up to another 5% of the run)."""
        return self.verify_until - min(findings * REPORT_SECONDS_PER_FINDING, self.total * 0.05)

    @property
    def deadline(self) -> float:
        """What the phases plan against: the verification reserve and the report margin are kept."""
        return self.verify_until - min(VERIFY_RESERVE, self.total * 0.1)

    def left(self) -> float:
        """Seconds until the phases' deadline."""
        return max(0.0, self.deadline - time.monotonic())

    def share(self, fraction: float) -> float:
        """A deadline `fraction` of the way from now to the phases' deadline (the deadline itself when counted)."""
        return self.part(self.deadline, fraction)

    def part(self, end: float, fraction: float) -> float:
        """A deadline `fraction` of the way from now to `end` (`end` itself when counted)."""
        if self.counted:
            return end
        now = time.monotonic()
        return now + max(0.0, end - now) * fraction

    @staticmethod
    def kept(shares: Iterable[float]) -> float:
        """The part of what the fuzz phase leaves that the call sequences keep for the phases after them: the sum of
        the shares those phases declare."""
        return sum(shares, 0.0)

    def reserve_calls(self, has_targets: bool) -> None:
        """Fix the protocol phases' share now that the probe has said whether there is anything to call."""
        self.protocol_until = self.share(1.0 - CALL_SHARE) if has_targets else self.deadline

    @property
    def protocol_deadline(self) -> float:
        """When the phases about the protocol must stop, so that the calls keep their share."""
        return self.deadline if self.protocol_until is None else self.protocol_until

    def note_start(self, seconds: float) -> None:
        """What starting the server and reading its declarations took: the cost charged to a fresh process."""
        self.restart_cost = max(self.restart_cost, seconds)

    def fits(self, cost: float, until: float) -> bool:
        """Whether something expected to take `cost` seconds can start now and end before `until`."""
        return time.monotonic() + cost < until

    @contextmanager
    def timing(self, name: str) -> Iterator[None]:
        """Add the wall-clock time of the block to the phase `name`."""
        start = time.monotonic()
        self.began.setdefault(name, start - self.started)
        try:
            yield
        finally:
            self.spent[name] = self.spent.get(name, 0.0) + time.monotonic() - start

    def split(self, elapsed: float) -> dict[str, float]:
        """Each phase's share of `elapsed` seconds, in the order the phases ran (rounded to a tenth of a percent)."""
        if elapsed <= 0:
            return {}
        return {name: round(seconds / elapsed, 3) for name, seconds in self.spent.items() if seconds > 0}
