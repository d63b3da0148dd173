"""The coverage search: each target's deterministic calls (its first call, then bounds, enum values and
single-rule breaks), round by round, once per run."""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import AsyncGenerator, AsyncIterator, Sequence
from contextlib import aclosing
from dataclasses import dataclass
from itertools import zip_longest
from typing import TypeVar

import anyio

from mcpfuzz.engine.events import PhaseName
from mcpfuzz.engine.searches.caller import Caller
from mcpfuzz.engine.session.modes import patient_until
from mcpfuzz.engine.session.windows import WINDOW, Unsettled
from mcpfuzz.engine.surface.targets import CallTarget
from mcpfuzz.jsonrpc.frame import Case
from mcpfuzz.strategies.arguments.call import POSITIVE, ArgumentCall

SIMPLEST = "the simplest valid arguments"  # as coverage_calls describes its first call
# Calls of the first window of read-only targets, doubled after each window answered in full (up to WINDOW).
FIRST_WINDOW = 8
# Windows sent back before the coverage search makes its calls one by one. A window sent back costs a restart and its
# calls again alone, and a server that needed one (it answers out of sending order, as one serving requests
# concurrently over stdio does, or logs, or sheds load) needs the next as well: one is enough to know.
MAX_SENT_BACK = 1

Item = TypeVar("Item")


@dataclass(frozen=True)
class CoverageLeft:
    """What the coverage phase left out for lack of time: calls not made (of the targets whose calls were
    computed), targets called once whose other calls were never computed, targets not called at all."""

    calls: int = 0
    after_first: int = 0
    uncalled: int = 0

    def __bool__(self) -> bool:
        return bool(self.calls or self.after_first or self.uncalled)

    def words(self) -> str:
        """`12 calls, the calls after the first of 3 targets` (what a notice says was left out)."""
        parts = [f"{self.calls} calls"] if self.calls else []
        if self.after_first:
            parts.append(f"the calls after the first of {self.after_first} targets")
        if self.uncalled:
            parts.append(f"every call of {self.uncalled} targets")
        return ", ".join(parts)


class CoverageSearch:
    """Each kind's own cases, then every target's deterministic calls, made through the shared caller."""

    def __init__(self, caller: Caller) -> None:
        self.caller = caller
        self._kind_planned: list[Case] | None = None
        self._unsettled = Unsettled()  # windows sent back to be run alone (from MAX_SENT_BACK on, none)
        self._window = FIRST_WINDOW  # calls the next window may hold

    async def coverage(self, deadline: float, *, first_calls_until: float | None = None) -> CoverageLeft:
        """Each kind's own cases, then each target's first call (the user's arguments or the simplest valid ones)
        until `first_calls_until` (later than `deadline`: every target called before any is called twice), then
        every target's other deterministic calls, round by round until `deadline` (a slow call waited for until
        `deadline` at most); returns what was left out for lack of time."""
        with patient_until(self.caller.session, deadline):
            return await self._coverage(deadline, max(deadline, first_calls_until or deadline))

    async def _coverage(self, deadline: float, first_calls_until: float) -> CoverageLeft:
        caller = self.caller
        for case in self._kind_cases():
            if time.monotonic() >= deadline:
                break
            caller.judge(PhaseName.COVERAGE, await caller.run_case(case))
        # The first calls are cheap to make (no coverage calls computed): they start at once.
        firsts = await anyio.to_thread.run_sync(self._first_calls)
        made: Counter[str] = Counter()
        async with aclosing(_listed(firsts)) as planned:
            if not await self._make(planned, first_calls_until, made):
                return CoverageLeft(uncalled=len(firsts) - made.total())
        # A target's other calls are computed when its second call is due (seconds for a large schema).
        rest: dict[str, list[ArgumentCall]] = {}
        made.clear()
        async with aclosing(self._rounds([target for target, _ in firsts], rest)) as planned:
            if not await self._make(planned, deadline, made):
                return CoverageLeft(sum(len(calls) - made[label] for label, calls in rest.items()),
                                    len(firsts) - len(rest))
        return CoverageLeft()

    async def _rounds(self, targets: list[CallTarget], rest: dict[str, list[ArgumentCall]]
                      ) -> AsyncGenerator[tuple[CallTarget, ArgumentCall], None]:
        """Every target's calls after its first, round by round (each target's second, then each one's third, ...),
        a target's calls computed into `rest` when its second is due."""
        taken: Counter[str] = Counter()
        waiting = targets
        while waiting:
            going_on = []
            for target in waiting:
                calls = rest.get(target.label)
                if calls is None:
                    calls = rest[target.label] = await anyio.to_thread.run_sync(self._after_first, target)
                if taken[target.label] < len(calls):
                    yield target, calls[taken[target.label]]
                    taken[target.label] += 1
                    going_on.append(target)
            waiting = going_on

    async def _make(self, planned: AsyncIterator[tuple[CallTarget, ArgumentCall]], until: float,
                    made: Counter[str]) -> bool:
        """The planned calls in order until `until` (each counted in `made` once judged), consecutive calls of
        read-only targets in pipelined windows (`Caller.call_window`), the rest one by one; True when every call
        was made."""
        caller = self.caller
        pending = await anext(planned, None)
        while pending is not None:
            if time.monotonic() >= until:
                return False
            group, pending = [pending], None
            if self._windows(group[0][0]):
                size = min(self._window, caller.window_size(group[0][0], WINDOW))
                while len(group) < size and (pending := await anext(planned, None)) is not None \
                        and self._joins(group, pending[0]):
                    group.append(pending)
                    size = min(size, caller.window_size(pending[0], WINDOW))
                    pending = None
            if len(group) == 1:
                await caller.call(PhaseName.COVERAGE, *group[0])
                made[group[0][0].label] += 1
            else:
                await self._window_of(group, until, made)
            if pending is None:
                pending = await anext(planned, None)
        return True

    async def _window_of(self, group: list[tuple[CallTarget, ArgumentCall]], until: float, made: Counter[str]) -> None:
        """One window's calls judged in order (a window sent back: its calls run one by one, until `until`); one
        answered in full doubles the next, up to WINDOW."""
        unsettled = self._unsettled
        before = unsettled.count
        async with aclosing(self.caller.call_window(PhaseName.COVERAGE, group, unsettled=unsettled)) as judged_calls:
            targets = iter(target for target, _ in group)
            async for _ in judged_calls:
                made[next(targets).label] += 1
                if unsettled.count > before and time.monotonic() >= until:
                    break
        if unsettled.count == before:
            self._window = min(WINDOW, self._window * 2)

    def _windows(self, target: CallTarget) -> bool:
        """Whether the target's calls may share windows now (`Caller.may_window`, and windows not sent back too
        often on this server)."""
        return self._unsettled.count < MAX_SENT_BACK and self.caller.may_window(target)

    def _joins(self, group: list[tuple[CallTarget, ArgumentCall]], target: CallTarget) -> bool:
        """Whether a call of `target` may join the window of `group` (with --coverage, one target a window: the lines
        a window reaches are told per target)."""
        return self._windows(target) and (self.caller.traced is None or target.label == group[0][0].label)

    def _first_calls(self) -> list[tuple[CallTarget, ArgumentCall]]:
        """Each target's first coverage call (CPU work: off the event loop)."""
        return [(target, call) for target in self.caller.targets if (call := self._first_call(target)) is not None]

    def _first_call(self, target: CallTarget) -> ArgumentCall | None:
        """The user's first arguments, else the simplest valid ones (a target kind with calls of its own: its first;
        None when it has none), made without computing the target's other coverage calls."""
        arguments = self.caller.arguments
        if target.type.coverage_calls is not None:
            own = arguments.coverage_of(target)
            return own[0] if own else None
        given = arguments.given(target)
        return given[0] if given else ArgumentCall(POSITIVE, target.prepare().plain[0], SIMPLEST)

    def _after_first(self, target: CallTarget) -> list[ArgumentCall]:
        """A target's coverage calls but its first (CPU work: off the event loop)."""
        first = self._first_call(target)
        return [call for call in self.caller.arguments.coverage_of(target)
                if first is None or call.kind != first.kind or call.arguments != first.arguments]

    async def checked_arguments(self) -> list[str]:
        """Why some --args objects are left out (their target's schema refuses them), every target's checked
        (off the event loop)."""
        arguments = self.caller.arguments
        await anyio.to_thread.run_sync(lambda: [arguments.given(target) for target in self.caller.targets])
        return arguments.refused_arguments

    def coverage_size(self) -> int:
        """How many coverage calls there are (CPU work the first time: every target's calls are computed)."""
        return len(self._coverage_plan()) + len(self._kind_cases())

    async def planned_coverage_size(self) -> int:
        """`coverage_size`, its calls made in a worker thread (milliseconds per target, not on the event loop)."""
        return await anyio.to_thread.run_sync(self.coverage_size)

    def _kind_cases(self) -> list[Case]:
        """Cases about a kind as a whole (a prompt or a URI that does not exist), once per kind with targets."""
        if self._kind_planned is None:
            self._kind_planned = []
            targets = self.caller.targets
            for target_type in dict.fromkeys(t.type for t in targets):
                if target_type.kind_cases is not None:
                    self._kind_planned += target_type.kind_cases(self.caller.builder, targets)
        return self._kind_planned

    def _coverage_plan(self) -> list[tuple[CallTarget, ArgumentCall]]:
        """Every target's coverage calls, round by round: each target's first call, then each one's second, ...,
        so that coverage cut short by its share still called every target (CPU work: off the event loop)."""
        coverage_of = self.caller.arguments.coverage_of
        rounds = zip_longest(*([(target, call) for call in coverage_of(target)] for target in self.caller.targets))
        return [planned for calls in rounds for planned in calls if planned is not None]


async def _listed(items: Sequence[Item]) -> AsyncGenerator[Item, None]:
    """A list's items, as an asynchronous iterator."""
    for item in items:
        yield item

