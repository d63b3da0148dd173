"""The fuzz search: one Hypothesis search per fuzzed target, its calls drawn from the target's schema (steered
toward slow answers and, with --coverage, toward new lines), a read-only target's calls in pipelined windows."""

from __future__ import annotations

import time
from contextlib import aclosing

import anyio.from_thread
from hypothesis import strategies as st
from hypothesis import target as hypothesis_target

from mcpfuzz.engine.events import PhaseName
from mcpfuzz.engine.judge import FindingKey
from mcpfuzz.engine.searches.caller import Caller
from mcpfuzz.engine.searches.hypothesis_bridge import on_loop
from mcpfuzz.engine.searches.search import search, slice_end, steers_by_time, to_raise
from mcpfuzz.engine.searches.slow_calls import latency_score
from mcpfuzz.engine.session.modes import patient_until
from mcpfuzz.engine.session.windows import MAX_UNSETTLED, Unsettled
from mcpfuzz.engine.surface.targets import CallTarget
from mcpfuzz.oracles.base import Failure
from mcpfuzz.strategies.arguments.call import ArgumentCall
from mcpfuzz.strategies.arguments.covering import CoveringPool, covering_calls
from mcpfuzz.strategies.arguments.fuzz_calls import fuzz_calls
from mcpfuzz.strategies.arguments.growing import GrowingPool, growing_calls
from mcpfuzz.strategies.arguments.seeded import seeded_calls

# Calls per Hypothesis example in the fuzz phase, at most. Hypothesis spends about 1 ms on each example
# besides the draw (its engine, mutator and data tree); a list of calls pays it once for several, and
# failures still shrink to one call (Hypothesis deletes the list's other elements first). A list of 1 to
# n draws (n + 1) / 2 elements on average, capped at 6 from n = 11: 12 gives that cap (8 gave 4.5). With
# 16 (the same average), mcpfuzz spent 7-12 % less CPU per call than with 8 on the clean test servers
# (small and 30-property schemas, alternated twice); a 60 s run still peaked at 75 MB.
BATCH = 12


class FuzzSearch:
    """Each fuzzed target's calls drawn by Hypothesis, made through the shared caller."""

    def __init__(self, caller: Caller) -> None:
        self.caller = caller
        self._unsettled: dict[str, Unsettled] = {}  # target label -> its windows sent back to be run alone

    @property
    def fuzzed(self) -> list[CallTarget]:
        """The targets the fuzz phase searches (a listed resource reads the same each time: coverage reads it)."""
        return [target for target in self.caller.targets if target.type.fuzzed]

    async def fuzz(self, deadline: float) -> None:
        """One Hypothesis search per fuzzed target; the remaining time is shared equally among the targets left.

        Targets never called yet go first and those that left a call unanswered last: a call that hangs takes
        --timeout whatever its share, and would otherwise leave the targets after it uncalled."""
        caller = self.caller
        targets = sorted(self.fuzzed, key=lambda target: (target.label in caller.called,
                                                          target.label in caller.unanswered))
        for index, target in enumerate(targets):
            now = time.monotonic()
            if now >= deadline:
                return
            await self.fuzz_target(target, slice_end(caller.options, deadline, len(targets) - index))

    def _strategy(self, target: CallTarget) -> st.SearchStrategy[ArgumentCall]:
        if target.type.fuzz_calls is not None:
            return target.type.fuzz_calls(target.declaration)
        caller, arguments = self.caller, self.caller.arguments
        # The schema's own boundaries (bounds exactly, each enum value) as draws of their own: otherwise
        # hitting them depends on the constants Hypothesis happens to collect from loaded modules.
        fuzz = fuzz_calls(target.schema, arguments.coverage_of(target), strict_types=arguments.strict_types)
        # Seeds (the user's arguments, the schema's examples) and the server's own words at raised odds.
        seeded = seeded_calls(target.schema, fuzz, arguments.seeds(target), arguments.words())
        # The slowest calls so far, made bigger: toward inputs whose cost rises with their size.
        grown = growing_calls(target.schema, seeded, caller.growing_pools.setdefault(target.label, GrowingPool()))
        if caller.traced is None:
            return grown
        # --coverage: the calls that reached new code, changed a little, at raised odds.
        return covering_calls(target.schema, grown, caller.covering_pools.setdefault(target.label, CoveringPool()))

    async def fuzz_target(self, target: CallTarget, deadline: float, *, epoch: int = 0) -> None:
        """One target's search until the deadline (`epoch`: a soak's slice number, so slices differ)."""
        caller = self.caller

        def body(calls: list[ArgumentCall], pursued: set[FindingKey]) -> Failure | None:
            caller.slowest = 0.0
            caller.reached = 0
            failure = on_loop(self._call_batch, target, calls, pursued, deadline)
            score = latency_score(caller.slowest) if steers_by_time(caller.options) else None
            if score is not None:  # steer the search toward slow answers (an algorithmic blow-up)
                hypothesis_target(score, label="latency")
            if caller.reached:  # --coverage: toward examples that reached code no call had reached
                hypothesis_target(float(caller.reached), label="coverage")
            return failure

        strategy = await anyio.to_thread.run_sync(self._strategy, target)  # its coverage calls made, off the loop
        options = caller.options
        with patient_until(caller.session, deadline):  # a slow call is waited for until the target's share ends
            await search(st.lists(strategy, min_size=1, max_size=BATCH), body, options=options,
                         name=target.seed_name, deadline=deadline, epoch=epoch,
                         database=target.database(options.database_root, options.server_label),
                         label=target.label)

    async def _call_batch(self, target: CallTarget, calls: list[ArgumentCall], pursued: set[FindingKey],
                          deadline: float) -> Failure | None:
        """One example's calls in order, in one hop to the event loop; the first failure ends it."""
        calls = [call for call in calls if not self.caller.wedging.known(target.label, call.arguments)]
        if len(calls) > 1 and self._may_pipeline(target) and time.monotonic() < deadline:
            return await self._call_window(target, calls, pursued, deadline)
        for call in calls:
            if time.monotonic() >= deadline:
                return None
            _, judged = await self.caller.call(PhaseName.FUZZ, target, call)
            failure = to_raise(judged, pursued)
            if failure is not None:
                return failure
        return None

    def _may_pipeline(self, target: CallTarget) -> bool:
        """A read-only target's calls may go out as one window (`Caller.may_window`), unless its windows keep being
        sent back."""
        return self.caller.may_window(target) \
            and self._unsettled.setdefault(target.label, Unsettled()).count < MAX_UNSETTLED

    async def _call_window(self, target: CallTarget, calls: list[ArgumentCall], pursued: set[FindingKey],
                           deadline: float) -> Failure | None:
        """An example's calls of a read-only target in pipelined windows (`Caller.call_window`), judged in order as
        if each ran alone: the first new failure ends the example (the calls after it are not judged, as they
        would not have been sent), and a window that cannot attribute everything runs its calls one by one, while
        the target's time lasts."""
        unsettled = self._unsettled.setdefault(target.label, Unsettled())
        before = unsettled.count
        planned = [(target, call) for call in calls]
        async with aclosing(self.caller.call_window(PhaseName.FUZZ, planned, unsettled=unsettled)) as judged_calls:
            async for _, judged in judged_calls:
                failure = to_raise(judged, pursued)
                if failure is not None:
                    return failure
                if unsettled.count > before and time.monotonic() >= deadline:
                    break
        return None
