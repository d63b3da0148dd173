"""Work in flight: each called target's latency measured as the calls are judged; after the call phases, requests
cancelled a moment inside their measured latency, and one tool called at once with distinct arguments. Every
target the call phases called qualifies, annotated or not: the plan has already left out what must not be called,
and a tool not annotated read-only has its answers judged without comparing them with answers alone. Stdio and
streamable HTTP: the cancel is written while the request runs."""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import ClassVar

from mcpfuzz.engine.alone_answers import run_case
from mcpfuzz.engine.config import CALL_PHASES
from mcpfuzz.engine.events import Notice, PhaseName, PhaseStarted
from mcpfuzz.engine.plan.context import RunContext
from mcpfuzz.engine.searches.latencies import LatencyBook
from mcpfuzz.engine.session.session import HarnessError, Session
from mcpfuzz.engine.surface.target_kinds import TOOLS
from mcpfuzz.engine.surface.targets import target_types
from mcpfuzz.jsonrpc.frame import Case
from mcpfuzz.jsonrpc.oracle_ids import OracleId
from mcpfuzz.strategies.cancellation import in_flight_cancel_case
from mcpfuzz.strategies.concurrency import MAX_TOOL_CALLS, same_target_case
from mcpfuzz.strategies.messages import FrameBuilder
from mcpfuzz.transport.base import TransportKind
from mcpfuzz.transport.errors import ServerStartError

FLIGHT_FIRST_ID = 2**36  # above the calls' ids (2**32 on), below the random frames' (2**40 on)
LONG_ENOUGH = 0.2  # seconds: a target answering no faster can be cancelled while it surely runs
PAUSE = 0.25  # of a target's shortest answer: when its cancel is written
MAX_CANCELLED = 3  # slowest targets (and list methods) cancelled in flight
LIST_SAMPLES = 3  # times each list method is timed (its shortest is its latency)
CASE_OVERHEAD = 0.1  # seconds a case takes beyond its requests' work (writes, a barrier's round trip)


def latency_book(context: RunContext) -> LatencyBook | None:
    """The run's book of latencies, when `WatchLatenciesPhase` installed one."""
    return next((o for o in context.judged_observers if isinstance(o, LatencyBook)), None)


def flight_share(context: RunContext) -> float:
    """The part of the time left that the flight phase is expected to need, which the call sequences keep for it:
    about twice its cases' measured work, at most `FlightPhase.share`; 0 when it will have nothing to cancel or to call
    at once."""
    measured, left = latency_book(context), context.budget.left()
    if measured is None or left <= 0:
        return 0.0
    book = _planned_only(measured, context)
    # A cancelled call waits out its answer and a grace; a burst its calls one after another (on a server that
    # works on one at a time), a read-only one's twice more alone.
    seconds = sum(2 * max(target.seconds) + 1.0 for _, target in book.slowest(LONG_ENOUGH, MAX_CANCELLED))
    for target in book.targets.values():
        works = [work for work, _ in target.params.values()][:MAX_TOOL_CALLS]
        if target.method == TOOLS.method and len(works) > 1:
            seconds += sum(works) * (3 if target.read_only else 1) + CASE_OVERHEAD
    return min(FlightPhase.share, 2 * seconds / left) if seconds else 0.0


def _stdio_only(context: RunContext) -> str | None:
    """Why work in flight cannot be tried on this run (None: it can)."""
    if not any(phase in context.config.phases for phase in CALL_PHASES):
        return "no call phase in --phases (latencies are measured by the calls)"
    session = context.session
    if session is not None and session.transport not in (TransportKind.STDIO, TransportKind.STREAMABLE_HTTP):
        # Legacy HTTP+SSE answers its POSTs at once and the answers come on one GET stream, and a handler in
        # memory answers as it is called: no case can tell the request was still running when its cancel came.
        return "stdio and streamable HTTP only"
    if OracleId.CANCEL_RESPECTED not in context.config.oracles and OracleId.CONCURRENCY not in context.config.oracles:
        return "neither cancel-respected nor concurrency is selected"
    return None


@dataclass(frozen=True)
class WatchLatenciesPhase:
    """Start measuring: every target's answered valid calls, timed as they are judged."""

    name: str = "latencies"

    def skip_reason(self, context: RunContext) -> str | None:
        return _stdio_only(context)

    async def run(self, context: RunContext, session: Session) -> None:
        if latency_book(context) is None:
            context.judged_observers.append(LatencyBook())


@dataclass(frozen=True)
class FlightPhase:
    """The slowest targets (and slow list methods) cancelled while in flight; a tool called several times at once
    with distinct arguments, each answer its own, and for a read-only tool equal to the same call's alone."""

    name: str = PhaseName.FLIGHT.value
    share: ClassVar[float] = 0.25  # of what the fuzz phase leaves, at most, kept from call sequences

    def kept_share(self, context: RunContext) -> float:
        return flight_share(context)

    def skip_reason(self, context: RunContext) -> str | None:
        reason = _stdio_only(context)
        if reason is None and latency_book(context) is None:
            return "no latency was measured"
        return reason

    async def run(self, context: RunContext, session: Session) -> None:
        measured, probe = latency_book(context), context.probe
        assert measured is not None and probe is not None
        book = _planned_only(measured, context)
        until = context.budget.deadline
        builder = FrameBuilder(probe.era, probe.version, next_id=FLIGHT_FIRST_ID)
        cancels: list[FlightCase] = []
        at_once = _same_tool_cases(builder, book) if OracleId.CONCURRENCY in context.config.oracles else []
        if OracleId.CANCEL_RESPECTED in context.config.oracles:
            for label, target in book.slowest(LONG_ENOUGH, MAX_CANCELLED):
                # The first params answered (the same seed sends the same frames; every answer took long enough).
                work, params = next(iter(target.params.values()))
                subject = label.split("/", 1)[-1]
                cancels.append(FlightCase(in_flight_cancel_case(
                    builder, target.method, params, pause=PAUSE * target.shortest, latency=target.shortest,
                    subject=subject), work, label))
            cancels += await _list_cancel_cases(context, session, builder, until)
        # Each family's first case always runs (a phase never does nothing), the rest while there is time.
        firsts = [*cancels[:1], *at_once[:1]]
        cases = [*firsts, *cancels[1:], *at_once[1:]]
        context.emit(PhaseStarted(PhaseName.FLIGHT, len(cases)))
        for done, flight in enumerate(cases):
            if done >= len(firsts) and time.monotonic() >= until:
                context.emit(Notice(f"{PhaseName.FLIGHT}: {len(cases) - done} of {len(cases)} cases left out to "
                                    "keep the run's time; raise --budget to run them all"))
                return
            try:
                exchange = await run_case(session, flight.case,
                                          timeout=flight.patience(session, context.config.target_timeouts))
            except (HarnessError, ServerStartError) as error:
                context.server_lost(error, PhaseName.FLIGHT)
                return
            context.judge(PhaseName.FLIGHT, exchange)


@dataclass(frozen=True)
class FlightCase:
    """A case of work in flight, and the seconds its requests were measured to take one after another (a server
    whose one thread works on them answers nothing else meanwhile, the liveness requests included)."""

    case: Case
    work: float
    label: str = ""  # the target whose calls these are ("" for a list method)

    def patience(self, session: Session, timeouts: Mapping[str, float]) -> float:
        """How long the case's answers are waited for: the target's timeout (its own, else --timeout) after twice
        that work, the work counted up to the longest a call is ever waited for (twice --call-timeout)."""
        timeout = timeouts.get(self.label, session.options.timeout)
        return timeout + min(2 * self.work, 2 * max(session.options.call_timeout, timeout))


def _planned_only(book: LatencyBook, context: RunContext) -> LatencyBook:
    """The measured targets the run's plan calls (a saved call replayed by an earlier phase may be of a target
    this run leaves out)."""
    planned = {target.label for target in context.preparation.plan.targets} if context.preparation else set()
    return LatencyBook({label: target for label, target in book.targets.items() if label in planned})


def _same_tool_cases(builder: FrameBuilder, book: LatencyBook) -> list[FlightCase]:
    """Each tool whose valid calls had distinct arguments, called with them at once (a tool that may change state:
    each answered once, with its own id; a read-only one: each answer also compared with its answer alone)."""
    cases: list[FlightCase] = []
    for label, target in book.targets.items():
        if target.method != TOOLS.method:
            continue
        calls = [(seconds, params) for seconds, params in target.params.values()
                 if isinstance(params.get("name"), str) and isinstance(params.get("arguments", {}), dict)]
        if len(calls) < 2:
            continue
        chosen = calls[:MAX_TOOL_CALLS]
        case = same_target_case(builder, chosen[0][1]["name"], [params.get("arguments", {}) for _, params in chosen],
                                changes_state=not target.read_only)
        if case is not None:
            cases.append(FlightCase(case, sum(seconds for seconds, _ in chosen), label))
    return cases


async def _list_cancel_cases(context: RunContext, session: Session, builder: FrameBuilder, until: float
                             ) -> list[FlightCase]:
    """A list method whose every answer takes LONG_ENOUGH, cancelled in flight (most servers list in a moment)."""
    assert context.probe is not None
    capabilities = context.probe.capabilities
    methods = [t.list_method for t in target_types().values() if t.capability in capabilities and t.list_method]
    cases: list[FlightCase] = []
    for method in dict.fromkeys(methods):
        seconds: list[float] = []
        for _ in range(LIST_SAMPLES):
            if time.monotonic() >= until:
                return cases
            started = time.monotonic()
            try:
                reply = await session.call(method, {})
            except HarnessError:
                break
            if not reply.is_result:
                break
            seconds.append(time.monotonic() - started)
        if len(seconds) == LIST_SAMPLES and min(seconds) >= LONG_ENOUGH and len(cases) < MAX_CANCELLED:
            cases.append(FlightCase(in_flight_cancel_case(builder, method, {}, pause=PAUSE * min(seconds),
                                                          latency=min(seconds)), max(seconds)))
    return cases
