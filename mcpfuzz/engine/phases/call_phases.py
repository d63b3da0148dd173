"""Phases 3-5: coverage, fuzz and stateful calls of every selected call target, each call judged."""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable, Collection, Coroutine, Mapping, Sequence
from contextlib import aclosing
from dataclasses import dataclass, replace
from functools import partial
from itertools import zip_longest
from typing import Any

import anyio.from_thread
from hypothesis import strategies as st
from hypothesis import target as hypothesis_target

from mcpfuzz.engine.coverage.book import CoverageBook
from mcpfuzz.engine.events import PhaseName
from mcpfuzz.engine.judge import FindingKey
from mcpfuzz.engine.phases.hypothesis_bridge import check_deadline
from mcpfuzz.engine.phases.search import (
    Judge,
    PhaseStopped,
    SearchOptions,
    Verdict,
    search,
    slice_end,
    steers_by_time,
    to_raise,
)
from mcpfuzz.engine.phases.slow_calls import (
    SLOW_CONFIRMATIONS,
    SlowWatch,
    answer_seconds,
    latency_score,
    slow_beside,
)
from mcpfuzz.engine.phases.state_checks import read_only, state_check
from mcpfuzz.engine.phases.targets import CallTarget, PreparedTarget, Safety
from mcpfuzz.engine.phases.wedging_calls import WedgingCalls
from mcpfuzz.engine.session.modes import patient_until
from mcpfuzz.engine.session.observed_state import run_observed
from mcpfuzz.engine.session.session import HarnessError, Session
from mcpfuzz.engine.session.windows import MAX_UNSETTLED, Unsettled, run_in_order
from mcpfuzz.jsonrpc.exchange import Exchange
from mcpfuzz.jsonrpc.frame import Case
from mcpfuzz.jsonrpc.oracle_ids import OracleId
from mcpfuzz.jsonrpc.parts.slow_after import SlowAfter
from mcpfuzz.jsonrpc.parts.state import StateCheck
from mcpfuzz.jsonrpc.versions import Era
from mcpfuzz.oracles.base import Failure
from mcpfuzz.strategies.arguments.call import POSITIVE, ArgumentCall
from mcpfuzz.strategies.arguments.coverage import coverage_calls
from mcpfuzz.strategies.arguments.covering import CoveringPool, covering_calls
from mcpfuzz.strategies.arguments.dictionary import Dictionary
from mcpfuzz.strategies.arguments.fuzz_calls import fuzz_calls
from mcpfuzz.strategies.arguments.growing import GrowingPool, growing_calls
from mcpfuzz.strategies.arguments.harvest import harvest, linked_uris, substitute, takes_ids
from mcpfuzz.strategies.arguments.schema_prep import SchemaProblem
from mcpfuzz.strategies.arguments.seeded import seeded_calls
from mcpfuzz.strategies.arguments.seeds import SCHEMA_SEED, seed_strings
from mcpfuzz.strategies.messages import FrameBuilder
from mcpfuzz.strategies.payloads.calls import payload_calls
from mcpfuzz.strategies.payloads.canaries import CanaryLayout
from mcpfuzz.strategies.surfaces.resources import linked_read_case
from mcpfuzz.transport.errors import ServerStartError

# Call ids live far above the catalogue's (100+) and the harness's (10000+).
CALL_FIRST_ID = 2**32
# Calls sent aside to time a slow answer again (`Session.aside`): ids of their own, so the run's calls keep theirs.
ASIDE_CALL_FIRST_ID = 2**35
MAX_SEQUENCE = 6
# Calls per Hypothesis example in the fuzz phase, at most. Hypothesis spends about 1 ms on each example
# besides the draw (its engine, mutator and data tree); a list of calls pays it once for several, and
# failures still shrink to one call (Hypothesis deletes the list's other elements first). A list of 1 to
# n draws (n + 1) / 2 elements on average, capped at 6 from n = 11: 12 gives that cap (8 gave 4.5). With
# 16 (the same average), mcpfuzz spent 7-12 % less CPU per call than with 8 on the clean test servers
# (small and 30-property schemas, alternated twice); a 60 s run still peaked at 75 MB.
BATCH = 12
STATEFUL = "stateful"  # the name of the call-sequence search (its seeds, a soak's target list)
GIVEN = "given in --args"  # the description of a call whose arguments the user gave
SIMPLEST = "the simplest valid arguments"  # as coverage_calls describes its first call


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


class CallPhases:
    """Calls targets on the session and hands every exchange to the run's judge."""

    def __init__(self, session: Session, targets: list[CallTarget], judge: Judge, options: SearchOptions, *,
                 strict_types: bool = False, timeouts: Mapping[str, float] | None = None,
                 canaries: CanaryLayout | None = None,
                 known_arguments: Mapping[str, Sequence[dict]] | None = None,
                 oracles: Collection[str] | None = None, coverage: CoverageBook | None = None) -> None:
        self.session = session
        # The run's oracles (None: all): a semantic oracle left out costs no observations of the state.
        self.oracles = None if oracles is None else frozenset(oracles)
        self.traced = coverage  # --coverage: the lines the traced server reports; None when it is off
        self._covering_pools: dict[str, CoveringPool] = {}  # target label -> its calls that reached new code
        self._reached = 0  # lines the fuzz example being run reached first (its coverage target)
        self.timeouts = dict(timeouts or {})  # target label -> its own per-call timeout
        self.known_arguments = dict(known_arguments or {})  # target label -> argument objects the user knows work
        self.refused_arguments: list[str] = []  # why some of those were left out (the schema refuses them)
        self._accepted_arguments: dict[str, list[ArgumentCall]] = {}  # label -> the ones its schema accepts
        # Strings the server declared, and returned to coverage calls: fed into the fuzz phase's string draws. Only
        # coverage results are added: the fuzz phase's own calls depend on time, and a later target's draws must not.
        self.dictionary = Dictionary()
        self._declared_words = False
        self.slow = SlowWatch()  # each target's answer times: the slow-input limit
        self.wedging = WedgingCalls()  # calls that wedged the server: never sent again
        self._slowest = 0.0  # the slowest answer of the fuzz example being run (its latency target)
        self._growing_pools: dict[str, GrowingPool] = {}  # target label -> its slowest calls, grown by fuzz draws
        self.targets = targets
        self.judge = judge
        self.options = options
        self.strict_types = strict_types
        self.canaries = canaries  # --security: where path payloads aim and shell payloads leave their files
        self.builder = FrameBuilder(session.era or Era.LEGACY, session.version, next_id=CALL_FIRST_ID)
        self._aside_builder = FrameBuilder(session.era or Era.LEGACY, session.version, next_id=ASIDE_CALL_FIRST_ID)
        self.calls = 0
        self._consumers: list[CallTarget] | None = None  # the targets that take ids, found before the sequences
        self._covering: dict[str, list[ArgumentCall]] = {}  # target label -> its coverage calls, made on first use
        # Targets of an equal schema share one preparation, and so one list of schema coverage calls.
        self._schema_covering: dict[int, tuple[PreparedTarget, list[ArgumentCall]]] = {}
        self._kind_planned: list[Case] | None = None
        self._unsettled: dict[str, Unsettled] = {}  # target label -> its windows sent back to be run alone
        self._called: set[str] = set()  # the labels of the targets called so far
        self._unanswered: set[str] = set()  # ... and of those among them a call of which got no answer

    async def call(self, phase: PhaseName, target: CallTarget, call: ArgumentCall, *, history: tuple[bytes, ...] = (),
                   state: StateCheck | None = None, aside: bool = False) -> tuple[Exchange, list[Verdict]]:
        """One call of a target on a ready server, judged; a small call far slower than the target's usual is sent
        again between calls of the target's simplest arguments (`_slow_again`, all aside), and slow-input judges it
        only when it was far slower than its neighbours each time (a loaded machine or a busy server is not a
        finding). `state`: the call is sent between observations of the server's
        state, for the semantic oracles; `aside`: the call itself times an answer again (`Session.aside`)."""
        exchange = await self._run_call(target, call, history, state, aside=aside)
        self._called.add(target.label)
        if exchange.wedged:
            self.wedging.note(target.label, call.arguments)
        seconds = answer_seconds(exchange)
        judged: list[Verdict] = []
        limit = self.slow.limit(target.label)
        if limit is not None and self.slow.suspect(target.label, exchange) \
                and await self._slow_again(phase, target, call, limit, history, judged):
            exchange = replace(exchange,
                               case=replace(exchange.case, expect=exchange.case.expect.with_part(SlowAfter(limit))))
        if seconds is None:
            self._unanswered.add(target.label)
        else:
            self.slow.note(target.label, seconds)
            self._slowest = max(self._slowest, seconds)
            if latency_score(seconds) is not None and steers_by_time(self.options):
                self._growing_pools.setdefault(target.label, GrowingPool()).add(call, seconds)
        if phase is PhaseName.COVERAGE:
            self.dictionary.add_result(exchange)
        return exchange, self.judge(phase, exchange) + judged

    async def _slow_again(self, phase: PhaseName, target: CallTarget, call: ArgumentCall, limit: float,
                          history: tuple[bytes, ...], judged: list[Verdict]) -> bool:
        """Whether the call stays slow when it is sent again SLOW_CONFIRMATIONS times, each repeat between two
        calls of the target's simplest arguments timed right beside it: slow past `limit` and BESIDE_FACTOR times
        the slower of its two neighbours each time. A loaded machine slows a repeat and its neighbours alike, and
        a stall of it spans one call, not a repeat each time with quick calls around it."""
        before = await self._control_seconds(phase, target, history, judged)
        for _ in range(SLOW_CONFIRMATIONS):
            if before is None:
                return False
            again = await self._run_call(target, call, history, aside=True)
            judged += self.judge(phase, again)
            after = await self._control_seconds(phase, target, history, judged)
            if not slow_beside(answer_seconds(again), limit, before, after):
                return False
            before = after
        return True

    async def _control_seconds(self, phase: PhaseName, target: CallTarget, history: tuple[bytes, ...],
                               judged: list[Verdict]) -> float | None:
        """How long the target's simplest valid call, made now, took to be answered (its verdicts added to
        `judged`); None when it has none or got no answer."""
        try:
            simplest = target.plain[0]
        except (SchemaProblem, IndexError):
            return None
        control = await self._run_call(target, ArgumentCall(POSITIVE, simplest, "the simplest valid arguments"),
                                       history, aside=True)
        judged += self.judge(phase, control)
        return answer_seconds(control)

    async def _run_call(self, target: CallTarget, call: ArgumentCall, history: tuple[bytes, ...],
                        state: StateCheck | None = None, *, aside: bool = False) -> Exchange:
        """One call on a ready server; `aside`: a timing re-check, sent as `Session.aside` says."""
        case = target.case(self._aside_builder if aside else self.builder, call, history=history)
        timeout = self.timeouts.get(target.label)
        if self.traced is not None:
            self.traced.settle()
        try:
            if aside:
                with self.session.aside():
                    exchange = await self.session.run_case(case, timeout=timeout)
            elif state is None:
                exchange = await self.session.run_case(case, timeout=timeout)
            else:
                case = replace(case, expect=case.expect.with_part(state))
                exchange = await run_observed(self.session, case, timeout=timeout)
        except (HarnessError, ServerStartError) as error:
            raise PhaseStopped(str(error)) from None
        self.calls += 1
        self._took_coverage(target, [call])
        return exchange

    def _took_coverage(self, target: CallTarget, calls: list[ArgumentCall]) -> None:
        """The lines `calls` (one call, or a window's) reached first: counted for the target and the example, and
        the calls kept as covering calls when there were some."""
        if self.traced is None:
            return
        new = self.traced.after_call(target.label)
        if new:
            self._reached += new
            pool = self._covering_pools.setdefault(target.label, CoveringPool())
            for call in calls:
                pool.add(call)

    # -- coverage ------------------------------------------------------------------------------

    async def coverage(self, deadline: float, *, first_calls_until: float | None = None) -> CoverageLeft:
        """Each kind's own cases, then each target's first call (the user's arguments or the simplest valid ones)
        until `first_calls_until` (later than `deadline`: every target called before any is called twice), then
        every target's other deterministic calls, round by round until `deadline` (a slow call waited for until
        `deadline` at most); returns what was left out for lack of time."""
        with patient_until(self.session, deadline):
            return await self._coverage(deadline, max(deadline, first_calls_until or deadline))

    async def _coverage(self, deadline: float, first_calls_until: float) -> CoverageLeft:
        for case in self._kind_cases():
            if time.monotonic() >= deadline:
                break
            try:
                exchange = await self.session.run_case(case)
            except (HarnessError, ServerStartError) as error:
                raise PhaseStopped(str(error)) from None
            self.judge(PhaseName.COVERAGE, exchange)
        # The first calls are cheap to make (no coverage calls computed): they start at once.
        firsts = await anyio.to_thread.run_sync(self._first_calls)
        for index, (target, call) in enumerate(firsts):
            if time.monotonic() >= first_calls_until:
                return CoverageLeft(uncalled=len(firsts) - index)
            await self.call(PhaseName.COVERAGE, target, call)
        # A target's other calls are computed when its second call is due (seconds for a large schema).
        rest: dict[str, list[ArgumentCall]] = {}
        made: Counter[str] = Counter()
        waiting = [target for target, _ in firsts]
        while waiting:
            going_on = []
            for target in waiting:
                if time.monotonic() >= deadline:
                    return CoverageLeft(sum(len(calls) - made[label] for label, calls in rest.items()),
                                        len(firsts) - len(rest))
                calls = rest.get(target.label)
                if calls is None:
                    calls = rest[target.label] = await anyio.to_thread.run_sync(self._after_first, target)
                if made[target.label] < len(calls):
                    await self.call(PhaseName.COVERAGE, target, calls[made[target.label]])
                    made[target.label] += 1
                    going_on.append(target)
            waiting = going_on
        return CoverageLeft()

    def _first_calls(self) -> list[tuple[CallTarget, ArgumentCall]]:
        """Each target's first coverage call (CPU work: off the event loop)."""
        return [(target, call) for target in self.targets if (call := self._first_call(target)) is not None]

    def _first_call(self, target: CallTarget) -> ArgumentCall | None:
        """The user's first arguments, else the simplest valid ones (a target kind with calls of its own: its first;
        None when it has none), made without computing the target's other coverage calls."""
        if target.type.coverage_calls is not None:
            own = self._coverage_of(target)
            return own[0] if own else None
        given = self._given(target)
        return given[0] if given else ArgumentCall(POSITIVE, target.prepare().plain[0], SIMPLEST)

    def _after_first(self, target: CallTarget) -> list[ArgumentCall]:
        """A target's coverage calls but its first (CPU work: off the event loop)."""
        first = self._first_call(target)
        return [call for call in self._coverage_of(target)
                if first is None or call.kind != first.kind or call.arguments != first.arguments]

    async def checked_arguments(self) -> list[str]:
        """Why some --args objects are left out (their target's schema refuses them), every target's checked
        (off the event loop)."""
        await anyio.to_thread.run_sync(lambda: [self._given(target) for target in self.targets])
        return self.refused_arguments

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
            for target_type in dict.fromkeys(t.type for t in self.targets):
                if target_type.kind_cases is not None:
                    self._kind_planned += target_type.kind_cases(self.builder, self.targets)
        return self._kind_planned

    def _coverage_plan(self) -> list[tuple[CallTarget, ArgumentCall]]:
        """Every target's coverage calls, round by round: each target's first call, then each one's second, ...,
        so that coverage cut short by its share still called every target (CPU work: off the event loop)."""
        rounds = zip_longest(*([(target, call) for call in self._coverage_of(target)] for target in self.targets))
        return [planned for calls in rounds for planned in calls if planned is not None]

    def _coverage_of(self, target: CallTarget) -> list[ArgumentCall]:
        """A target's coverage calls, made once: its kind's own, or the boundaries and single-rule breaks of its
        schema (each validated against it; CPU work, off the event loop)."""
        calls = self._covering.get(target.label)
        if calls is None:
            calls = self._covering[target.label] = self._with_payloads(target, self._make_coverage(target))
        return calls

    def _with_payloads(self, target: CallTarget, calls: list[ArgumentCall]) -> list[ArgumentCall]:
        """The coverage calls with the payloads that fit the target's properties by meaning (paths, expressions,
        ...): first under --security, whose oracles judge them, else last. The fuzz phase draws them again."""
        if target.type.coverage_calls is not None:
            return calls
        prepared = target.prepare()
        payloads = payload_calls(prepared.schema, [*prepared.populated, *prepared.plain], self.canaries, target.label)
        return [*payloads, *calls] if self.canaries is not None else [*calls, *payloads]

    def _make_coverage(self, target: CallTarget) -> list[ArgumentCall]:
        """The user's arguments for the target first (--args), then its kind's own calls or its schema's."""
        if target.type.coverage_calls is not None:
            return [*self._given(target), *target.type.coverage_calls(target.declaration)]
        prepared = target.prepare()
        shared = self._schema_covering.get(id(prepared))
        if shared is None or shared[0] is not prepared:
            shared = self._schema_covering[id(prepared)] = (prepared, coverage_calls(
                prepared.schema, prepared.plain, prepared.populated, seed=target.seed, strict_types=self.strict_types))
        return [*self._given(target), *shared[1]]

    def _given(self, target: CallTarget) -> list[ArgumentCall]:
        """The argument objects --args gave for the target that its schema accepts (the others said once)."""
        accepted = self._accepted_arguments.get(target.label)
        if accepted is None:
            accepted = self._accepted_arguments[target.label] = self._accepted(target)
        return accepted

    def _accepted(self, target: CallTarget) -> list[ArgumentCall]:
        given = self.known_arguments.get(target.label) or ()
        calls = []
        for number, arguments in enumerate(given, 1):
            if target.schema.is_valid(arguments):
                calls.append(ArgumentCall(POSITIVE, arguments, f"{GIVEN} (#{number})"))
            else:
                errors = target.schema.errors(arguments)
                why = errors[0].message if errors else "not an object"
                self.refused_arguments.append(f"--args: {target.label} #{number} left out, its schema refuses it: "
                                              f"{why[:200]}")
        return calls

    def _seeds(self, target: CallTarget) -> list[ArgumentCall]:
        """The calls a fuzz draw may start from: the user's arguments and the schema's seeds."""
        return [call for call in self._coverage_of(target)
                if call.description.startswith((GIVEN, SCHEMA_SEED))]

    def _words(self) -> tuple[str, ...]:
        """The dictionary's words now, the targets' names, URIs and schema values added on first use."""
        if not self._declared_words:
            self._declared_words = True
            for target in self.targets:
                uri = target.declaration.get("uri") if isinstance(target.declaration, dict) else None
                self.dictionary.add([target.name, *([uri] if isinstance(uri, str) else [])])
                try:
                    self.dictionary.add(seed_strings(target.schema))
                except SchemaProblem:
                    continue
        return self.dictionary.words

    # -- fuzz ----------------------------------------------------------------------------------

    @property
    def fuzzed(self) -> list[CallTarget]:
        """The targets the fuzz phase searches (a listed resource reads the same each time: coverage reads it)."""
        return [target for target in self.targets if target.type.fuzzed]

    async def fuzz(self, deadline: float) -> None:
        """One Hypothesis search per fuzzed target; the remaining time is shared equally among the targets left.

        Targets never called yet go first and those that left a call unanswered last: a call that hangs takes
        --timeout whatever its share, and would otherwise leave the targets after it uncalled."""
        targets = sorted(self.fuzzed, key=lambda target: (target.label in self._called,
                                                          target.label in self._unanswered))
        for index, target in enumerate(targets):
            now = time.monotonic()
            if now >= deadline:
                return
            await self.fuzz_target(target, slice_end(self.options, deadline, len(targets) - index))

    def _strategy(self, target: CallTarget) -> st.SearchStrategy[ArgumentCall]:
        if target.type.fuzz_calls is not None:
            return target.type.fuzz_calls(target.declaration)
        # The schema's own boundaries (bounds exactly, each enum value) as draws of their own: otherwise
        # hitting them depends on the constants Hypothesis happens to collect from loaded modules.
        fuzz = fuzz_calls(target.schema, self._coverage_of(target), strict_types=self.strict_types)
        # Seeds (the user's arguments, the schema's examples) and the server's own words at raised odds.
        seeded = seeded_calls(target.schema, fuzz, self._seeds(target), self._words())
        # The slowest calls so far, made bigger: toward inputs whose cost rises with their size.
        grown = growing_calls(target.schema, seeded, self._growing_pools.setdefault(target.label, GrowingPool()))
        if self.traced is None:
            return grown
        # --coverage: the calls that reached new code, changed a little, at raised odds.
        return covering_calls(target.schema, grown, self._covering_pools.setdefault(target.label, CoveringPool()))

    async def fuzz_target(self, target: CallTarget, deadline: float, *, epoch: int = 0) -> None:
        """One target's search until the deadline (`epoch`: a soak's slice number, so slices differ)."""

        def body(calls: list[ArgumentCall], pursued: set[FindingKey]) -> Failure | None:
            self._slowest = 0.0
            self._reached = 0
            failure = anyio.from_thread.run(self._call_batch, target, calls, pursued, deadline)
            score = latency_score(self._slowest) if steers_by_time(self.options) else None
            if score is not None:  # steer the search toward slow answers (an algorithmic blow-up)
                hypothesis_target(score, label="latency")
            if self._reached:  # --coverage: toward examples that reached code no call had reached
                hypothesis_target(float(self._reached), label="coverage")
            return failure

        strategy = await anyio.to_thread.run_sync(self._strategy, target)  # its coverage calls made, off the loop
        with patient_until(self.session, deadline):  # a slow call is waited for until the target's share ends
            await search(st.lists(strategy, min_size=1, max_size=BATCH), body, options=self.options,
                         name=target.seed_name, deadline=deadline, epoch=epoch,
                         database=target.database(self.options.database_root, self.options.server_label),
                         label=target.label)

    async def _call_batch(self, target: CallTarget, calls: list[ArgumentCall], pursued: set[FindingKey],
                          deadline: float) -> Failure | None:
        """One example's calls in order, in one hop to the event loop; the first failure ends it."""
        calls = [call for call in calls if not self.wedging.known(target.label, call.arguments)]
        if len(calls) > 1 and self._may_pipeline(target) and time.monotonic() < deadline:
            return await self._call_window(target, calls, pursued, deadline)
        for call in calls:
            if time.monotonic() >= deadline:
                return None
            _, judged = await self.call(PhaseName.FUZZ, target, call)
            failure = to_raise(judged, pursued)
            if failure is not None:
                return failure
        return None

    def _may_pipeline(self, target: CallTarget) -> bool:
        """A read-only target's calls may go out as one window (unless its windows keep being sent back, or it
        has a timeout of its own, which a window's one timeout would not honour)."""
        return self.session.pipelines and target.safety is Safety.READ_ONLY and target.label not in self.timeouts \
            and self._unsettled.setdefault(target.label, Unsettled()).count < MAX_UNSETTLED

    async def _call_window(self, target: CallTarget, calls: list[ArgumentCall], pursued: set[FindingKey],
                           deadline: float) -> Failure | None:
        """An example's calls of a read-only target in pipelined windows (`run_in_order`), judged in order as if
        each ran alone: the first new failure ends the example (the calls after it are not judged, as they would
        not have been sent), and a window that cannot attribute everything runs its calls one by one, while the
        target's time lasts."""
        unsettled = self._unsettled.setdefault(target.label, Unsettled())
        before = unsettled.count
        cases = [target.case(self.builder, call) for call in calls]
        if self.traced is not None:
            self.traced.settle()
        async with aclosing(run_in_order(self.session, cases, unsettled=unsettled)) as exchanges:
            for call in calls:
                if unsettled.count > before and time.monotonic() >= deadline:
                    break
                try:
                    exchange = await anext(exchanges)
                except StopAsyncIteration:
                    return None
                except (HarnessError, ServerStartError) as error:
                    raise PhaseStopped(str(error)) from None
                self.calls += 1
                # A window's lines all come before its first answer is handed over: each of its calls is kept.
                self._took_coverage(target, calls)
                judged = self.judge(PhaseName.FUZZ, exchange)
                seconds = answer_seconds(exchange)
                if self.slow.suspect(target.label, exchange):
                    # A window's answers queue behind each other: a slow one is timed again alone.
                    judged += (await self.call(PhaseName.FUZZ, target, call, aside=True))[1]
                elif seconds is not None:
                    self.slow.note(target.label, seconds)
                    self._slowest = max(self._slowest, seconds)
                failure = to_raise(judged, pursued)
                if failure is not None:
                    return failure
        return None

    # -- stateful ------------------------------------------------------------------------------

    async def stateful(self, deadline: float, *, epoch: int = 0) -> None:
        """Sequences of calls across targets that reuse strings earlier results returned (ids above all)."""

        def body(data: Any, pursued: set[FindingKey]) -> Failure | None:
            return self._sequence(data, deadline, pursued)

        if self._consumers is None:
            self._consumers = await anyio.to_thread.run_sync(self._taking_ids)
        with patient_until(self.session, deadline):
            await search(st.data(), body, options=self.options, name=STATEFUL, deadline=deadline, epoch=epoch)

    def _taking_ids(self) -> list[CallTarget]:
        """The targets with a parameter an id harvested from an earlier result may fill."""
        return [target for target in self.targets if takes_ids(target.schema)]

    def _sequence(self, data: Any, deadline: float, pursued: set[FindingKey]) -> Failure | None:
        """One sequence (runs in the Hypothesis thread; calls go through the event loop)."""
        pool: list[Any] = []
        created: list[Any] = []  # what this sequence's calls of tools that are not read-only returned (its creates)
        links: list[str] = []  # URIs earlier results linked to: a sequence may read them (across surfaces)
        history: list[bytes] = []
        process = self.session.process
        for step in range(data.draw(st.integers(2, MAX_SEQUENCE), label="steps")):
            check_deadline(deadline)
            if links and data.draw(st.integers(0, 2), label="follow a link") == 0:
                uri = data.draw(st.sampled_from(links), label="linked uri")
                case = linked_read_case(self.builder, uri, history=tuple(history))
                went_on, failure = self._step(partial(self._run_linked, case), process, history, pursued)
                if went_on is None:
                    return failure
                continue
            # Once results have given ids back, favour the targets that take ids (3 times in 4).
            consumers = self._consumers or []
            feed = pool and consumers and data.draw(st.integers(0, 3), label="feed") > 0
            target = data.draw(st.sampled_from(consumers if feed else self.targets), label="tool")
            given = self._given(target) if target.label in self.known_arguments else []
            # The user's arguments (--args) start a third of the steps of targets they were given for.
            if given and data.draw(st.integers(0, 2), label="given") == 0:
                arguments = data.draw(st.sampled_from(given), label="given arguments").arguments
            else:
                arguments = data.draw(target.schema.positive, label="arguments")
            arguments = substitute(target.schema, arguments, pool, data)
            if self.wedging.known(target.label, arguments):
                continue
            call = ArgumentCall(POSITIVE, arguments, f"step {step + 1} of a sequence")
            state = state_check(self.targets, target, arguments, created)
            if state is not None and self.oracles is not None and state.judge.value not in self.oracles:
                state = None
            if state is not None and state.judge is OracleId.IDEMPOTENT_RETRY:
                # The first call as any step's; the same call again (a client's retry) is judged on the state.
                first, failure = self._step(partial(self.call, PhaseName.STATEFUL, target, call,
                                                    history=tuple(history)), process, history, pursued)
                if first is None:
                    return failure
                call = replace(call, description=f"{call.description}, sent again as a client retries")
            exchange, failure = self._step(partial(self.call, PhaseName.STATEFUL, target, call,
                                                   history=tuple(history), state=state), process, history, pursued)
            if exchange is None:
                return failure
            pool = harvest(exchange, pool)
            if not read_only(target):
                created = harvest(exchange, created)
            links = linked_uris(exchange, links)
        return None

    def _step(self, run: Callable[[], Coroutine[Any, Any, tuple[Exchange, list[Verdict]]]], process: object,
              history: list[bytes], pursued: set[FindingKey]) -> tuple[Exchange | None, Failure | None]:
        """One step of a sequence run on the event loop: (its exchange, None) to go on, with its frame added to
        `history`; (None, the failure to raise); or (None, None) when the step crashed the server or it restarted,
        since the sequence's state is gone with its process."""
        exchange, judged = anyio.from_thread.run(run)
        failure = to_raise(judged, pursued)
        if failure is not None:
            return None, failure
        if self.session.process != process or exchange.crash is not None:
            return None, None
        history.append(exchange.case.data)
        return exchange, None

    async def _run_linked(self, case: Case) -> tuple[Exchange, list[Verdict]]:
        """A read of a URI an earlier call linked to, judged like any call of the sequence."""
        try:
            exchange = await self.session.run_case(case)
        except (HarnessError, ServerStartError) as error:
            raise PhaseStopped(str(error)) from None
        self.calls += 1
        return exchange, self.judge(PhaseName.STATEFUL, exchange)
