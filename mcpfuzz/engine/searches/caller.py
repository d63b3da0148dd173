"""The caller the coverage, fuzz and stateful searches share: one call of a target on the session, judged, with what
the calls so far taught (answer times, wedging calls, lines reached, targets called)."""

from __future__ import annotations

from collections.abc import AsyncGenerator, Collection, Mapping, Sequence
from contextlib import aclosing
from dataclasses import replace

from mcpfuzz.engine.coverage.book import CoverageBook
from mcpfuzz.engine.events import PhaseName
from mcpfuzz.engine.judge import FindingKey, FindingSet
from mcpfuzz.engine.searches.search import Judge, PhaseStopped, SearchOptions, Verdict, steers_by_time
from mcpfuzz.engine.searches.slow_calls import (
    SLOW_CONFIRMATIONS,
    SlowWatch,
    answer_seconds,
    latency_score,
    own_seconds,
    slow_beside,
)
from mcpfuzz.engine.searches.target_arguments import TargetArguments
from mcpfuzz.engine.searches.wedging_calls import WedgingCalls
from mcpfuzz.engine.session.observed_state import run_observed
from mcpfuzz.engine.session.session import HarnessError, Session
from mcpfuzz.engine.session.starvation import RunQueueWaits
from mcpfuzz.engine.session.windows import Unsettled, run_in_order
from mcpfuzz.engine.surface.targets import CallTarget, Safety
from mcpfuzz.jsonrpc.exchange import Exchange
from mcpfuzz.jsonrpc.frame import Case
from mcpfuzz.jsonrpc.json_value import long_integers
from mcpfuzz.jsonrpc.parts.slow_after import SlowAfter
from mcpfuzz.jsonrpc.parts.state import StateCheck
from mcpfuzz.jsonrpc.versions import Era
from mcpfuzz.oracles.base import all_oracles, run_checks
from mcpfuzz.strategies.arguments.call import POSITIVE, ArgumentCall
from mcpfuzz.strategies.arguments.covering import CoveringPool
from mcpfuzz.strategies.arguments.growing import GrowingPool
from mcpfuzz.strategies.arguments.schema_prep import SchemaProblem
from mcpfuzz.strategies.messages import FrameBuilder
from mcpfuzz.strategies.payloads.canaries import CanaryLayout
from mcpfuzz.transport.errors import ServerStartError

# Call ids live far above the catalogue's (100+) and the harness's (10000+).
CALL_FIRST_ID = 2**32
# Calls sent aside to time a slow answer again (`Session.aside`): ids of their own, so the run's calls keep theirs.
ASIDE_CALL_FIRST_ID = 2**35


class Caller:
    """Calls targets on the session and hands every exchange to the run's judge."""

    def __init__(self, session: Session, targets: list[CallTarget], judge: Judge, options: SearchOptions, *,
                 strict_types: bool = False, timeouts: Mapping[str, float] | None = None,
                 canaries: CanaryLayout | None = None,
                 known_arguments: Mapping[str, Sequence[dict]] | None = None,
                 oracles: Collection[str] | None = None, coverage: CoverageBook | None = None) -> None:
        self.session = session
        self.targets = targets
        self.judge = judge
        self.options = options
        # The run's oracles (None: all): a semantic oracle left out costs no observations of the state.
        self.oracles = None if oracles is None else frozenset(oracles)
        self.traced = coverage  # --coverage: the lines the traced server reports; None when it is off
        self.timeouts = dict(timeouts or {})  # target label -> its own per-call timeout
        self.arguments = TargetArguments(targets, known_arguments, canaries, strict_types=strict_types)
        self.covering_pools: dict[str, CoveringPool] = {}  # target label -> its calls that reached new code
        self.growing_pools: dict[str, GrowingPool] = {}  # target label -> its slowest calls, grown by fuzz draws
        self.reached = 0  # lines the fuzz example being run reached first (its coverage target)
        self.slowest = 0.0  # the slowest answer of the fuzz example being run (its latency target)
        self.slow = SlowWatch()  # each target's answer times: the slow-input limit
        self.wedging = WedgingCalls()  # calls that wedged the server: never sent again
        self.builder = FrameBuilder(session.era or Era.LEGACY, session.version, next_id=CALL_FIRST_ID)
        self._aside_builder = FrameBuilder(session.era or Era.LEGACY, session.version, next_id=ASIDE_CALL_FIRST_ID)
        self._oracle_names = tuple(all_oracles()) if oracles is None else tuple(oracles)
        self._alone_failed: set[FindingKey] = set()  # what calls alone have failed for (a window's failures are
        # judged from a window only once a call alone has failed for the same reason)
        self.calls = 0
        self.called: set[str] = set()  # the labels of the targets called so far
        self.unanswered: set[str] = set()  # ... and of those among them a call of which got no answer

    async def call(self, phase: PhaseName, target: CallTarget, call: ArgumentCall, *, history: tuple[bytes, ...] = (),
                   state: StateCheck | None = None, aside: bool = False) -> tuple[Exchange, list[Verdict]]:
        """One call of a target on a ready server, judged; a small call far slower than the target's usual is sent
        again between calls of the target's simplest arguments (`_slow_again`, all aside), and slow-input judges it
        only when it was far slower than its neighbours each time (a loaded machine or a busy server is not a
        finding). `state`: the call is sent between observations of the server's
        state, for the semantic oracles; `aside`: the call itself times an answer again (`Session.aside`)."""
        exchange = await self._run_call(target, call, history, state, aside=aside)
        self.called.add(target.label)
        if exchange.wedged:
            self.wedging.note(target.label, call.arguments)
        seconds = answer_seconds(exchange)
        judged: list[Verdict] = []
        limit = self.slow.limit(target.label)
        if limit is not None and self.slow.suspect(target.label, exchange) \
                and await self._slow_again(phase, target, call, limit, history, judged):
            exchange = replace(exchange,
                               case=replace(exchange.case, expect=exchange.case.expect.with_part(SlowAfter(limit))))
        self._learn(phase, target, call, exchange, seconds)
        verdicts = self.judge(phase, exchange)
        self._alone_failed.update(key for _, key, _ in verdicts)
        return exchange, verdicts + judged

    def _learn(self, phase: PhaseName, target: CallTarget, call: ArgumentCall, exchange: Exchange,
               seconds: float | None) -> None:
        """What one judged call teaches: its answer time (or that it got none), and a coverage call's result."""
        if seconds is None:
            self.unanswered.add(target.label)
        else:
            self.slow.note(target.label, seconds)
            self.slowest = max(self.slowest, seconds)
            if latency_score(seconds) is not None and steers_by_time(self.options):
                self.growing_pools.setdefault(target.label, GrowingPool()).add(call, seconds)
        if phase is PhaseName.COVERAGE:
            self.arguments.dictionary.add_result(exchange)

    def _fails_anew(self, exchange: Exchange) -> bool:
        """Whether an oracle fails on a window's exchange for a reason no call alone has failed for yet (each such
        reason is confirmed once by a call alone; the oracles are run again when the exchange is judged)."""
        try:
            with long_integers():  # as the judge runs the oracles
                keys = {FindingSet.key_of(failure, exchange) for failure in run_checks(exchange, self._oracle_names)}
        except Exception:  # an error of mcpfuzz's own: the judge meets it too, and reports it
            return False
        return not keys <= self._alone_failed

    def may_window(self, target: CallTarget) -> bool:
        """Whether the target's calls may go out in a pipelined window: the session pipelines, the target is read-only
        (its calls change nothing another call sees, so each is judged as if it ran alone) and has no timeout of its
        own (a window has one timeout)."""
        return self.session.pipelines and target.safety is Safety.READ_ONLY and target.label not in self.timeouts

    def window_size(self, target: CallTarget, largest: int) -> int:
        """How many of the target's calls one window may hold, at most `largest`: a window has one timeout, and on
        a server that answers one call at a time its last answer waits for every other, so a slow target's window
        holds what fits in a quarter of --timeout at its usual answer time. A --max-examples run, which sends the
        same frames whatever the answer times, keeps `largest`."""
        usual = self.slow.usual(target.label)
        if usual is None or usual <= 0 or self.options.max_examples is not None:
            return largest
        return max(1, min(largest, int(self.session.options.timeout / 4 / usual)))

    async def call_window(self, phase: PhaseName, planned: Sequence[tuple[CallTarget, ArgumentCall]], *,
                          unsettled: Unsettled) -> AsyncGenerator[tuple[Exchange, list[Verdict]], None]:
        """Calls of read-only targets (`may_window`) in pipelined windows (`run_in_order`), each exchange judged in
        order as if its call ran alone (a window that cannot attribute everything it saw, a crash included, runs
        its calls again one by one, and only those runs are judged); the consumer may stop early (`aclosing`).

        A window's answers queue behind each other: an answer past its target's slow limit is timed again alone
        (`call(aside=True)`), never judged slow from the window."""
        cases = [target.case(self.builder, call) for target, call in planned]
        if self.traced is not None:
            self.traced.settle()
        async with aclosing(run_in_order(self.session, cases, unsettled=unsettled)) as exchanges:
            for target, call in planned:
                try:
                    exchange = await anext(exchanges)
                except StopAsyncIteration:
                    return
                except (HarnessError, ServerStartError) as error:
                    raise PhaseStopped(str(error)) from None
                self.calls += 1
                self.called.add(target.label)
                # A window's lines all come before its first answer is handed over: each of its calls is kept.
                self.took_coverage(target, [c for t, c in planned if t.label == target.label])
                if exchange.wedged:
                    self.wedging.note(target.label, call.arguments)
                if self._fails_anew(exchange):
                    # Judged from the call alone: a window's other calls may have made this answer what it is.
                    yield await self.call(phase, target, call)
                    continue
                judged = self.judge(phase, exchange)
                if self.slow.suspect(target.label, exchange):
                    judged += (await self.call(phase, target, call, aside=True))[1]
                    if phase is PhaseName.COVERAGE:
                        self.arguments.dictionary.add_result(exchange)
                else:
                    self._learn(phase, target, call, exchange, answer_seconds(exchange))
                yield exchange, judged

    async def _slow_again(self, phase: PhaseName, target: CallTarget, call: ArgumentCall, limit: float,
                          history: tuple[bytes, ...], judged: list[Verdict]) -> bool:
        """Whether the call stays slow when it is sent again SLOW_CONFIRMATIONS times, each repeat between two
        calls of the target's simplest arguments timed right beside it: slow past `limit` and BESIDE_FACTOR times
        the slower of its two neighbours each time. A loaded machine slows a repeat and its neighbours alike, and
        a stall of it spans one call, not a repeat each time with quick calls around it. A repeat's time is the
        server's own: less the time its busiest thread waited for a CPU meanwhile (`RunQueueWaits`), as a starved
        machine stretches an input's ordinary work (an error path's logging) past any fixed floor."""
        before = await self._control_seconds(phase, target, history, judged)
        for _ in range(SLOW_CONFIRMATIONS):
            if before is None:
                return False
            waits = RunQueueWaits.take(self.session.server.pid)
            again = await self._run_call(target, call, history, aside=True)
            starved = (RunQueueWaits.take(self.session.server.pid) or RunQueueWaits({})).longest_since(waits)
            judged += self.judge(phase, again)
            after = await self._control_seconds(phase, target, history, judged)
            if not slow_beside(own_seconds(answer_seconds(again), starved), limit, before, after):
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
        self.took_coverage(target, [call])
        return exchange

    async def run_case(self, case: Case) -> Exchange:
        """A case that is no call of a target's arguments (a kind's own case, a linked read), on a ready server."""
        try:
            return await self.session.run_case(case)
        except (HarnessError, ServerStartError) as error:
            raise PhaseStopped(str(error)) from None

    def took_coverage(self, target: CallTarget, calls: list[ArgumentCall]) -> None:
        """The lines `calls` (one call, or a window's) reached first: counted for the target and the example, and
        the calls kept as covering calls when there were some."""
        if self.traced is None:
            return
        new = self.traced.after_call(target.label)
        if new:
            self.reached += new
            pool = self.covering_pools.setdefault(target.label, CoveringPool())
            for call in calls:
                pool.add(call)
