"""Telling a wedged server from a slow one: each target's answer times bound how long its next call may take, and
a fresh request sent once that bound has passed, unanswered while the process runs, says the server is stuck.

A server whose one thread is busy with a call answers no liveness request either, so silence alone proves
nothing until the call has had a fair wait. Waiting out --call-timeout is fair but may outlast the run's budget
(the call is then not judged); a target that has answered before gives a shorter fair wait: many times its
slowest answer, never less than a few times --timeout.
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass

import psutil

from mcpfuzz.jsonrpc.frame import Case
from mcpfuzz.jsonrpc.parts.tool_call import ToolCallCheck

ANSWER_FACTOR = 100  # times a target's slowest answer: past this, its call is no longer slow but stuck
TIMEOUT_FACTOR = 3  # times --timeout: the shortest such bound (a target that answers at once is not bounded
# by a few milliseconds)
MAX_TARGETS = 4096  # targets remembered (a long soak with many targets forgets the oldest)


def times_its_target(case: Case) -> bool:
    """Whether the answer to `case` says how long its target's work takes: a valid call (a call refused for its
    arguments is answered before any work, so it would make the bound too short)."""
    check = case.expect.part(ToolCallCheck)
    return case.slow_ok and (check.valid if check is not None else case.expect.well_formed)


class AnswerTimes:
    """Per target label: the slowest answer to one of its valid calls (a result or an error), in seconds."""

    def __init__(self) -> None:
        self._slowest: OrderedDict[str, float] = OrderedDict()

    def note(self, target: str, seconds: float) -> None:
        """A call of `target` was answered after `seconds`."""
        self._slowest[target] = max(seconds, self._slowest.get(target, 0.0))
        self._slowest.move_to_end(target)
        if len(self._slowest) > MAX_TARGETS:
            self._slowest.popitem(last=False)

    def bound(self, target: str, timeout: float) -> float | None:
        """How long a call of `target` may run before a silent server counts as stuck; None when it never
        answered (nothing says how long it takes: only --call-timeout bounds it)."""
        slowest = self._slowest.get(target)
        if slowest is None:
            return None
        return max(TIMEOUT_FACTOR * timeout, ANSWER_FACTOR * slowest)


@dataclass(frozen=True)
class CpuSample:
    """CPU time of a process and its children at one moment, to tell a busy process from an idle one."""

    pid: int
    seconds: float

    @staticmethod
    def take(pid: int | None) -> CpuSample | None:
        """The process' CPU seconds so far (its children included), or None when it cannot be read."""
        if pid is None:
            return None
        try:
            process = psutil.Process(pid)
            total = sum(process.cpu_times()[:2])
            for child in process.children(recursive=True):
                try:
                    total += sum(child.cpu_times()[:2])
                except psutil.Error:
                    continue
        except psutil.Error:
            return None
        return CpuSample(pid, total)

    def share_since(self, earlier: CpuSample | None, elapsed: float) -> float | None:
        """The share of one core the process used between `earlier` and this sample (1.0: a core fully busy)."""
        if earlier is None or earlier.pid != self.pid or elapsed <= 0:
            return None
        return max(0.0, (self.seconds - earlier.seconds) / elapsed)
