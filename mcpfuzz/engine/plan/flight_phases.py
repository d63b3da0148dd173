"""Work in flight: each read-only target's latency measured as the calls are judged; after the call phases,
requests cancelled a moment inside their measured latency, and one read-only tool called at once with distinct
arguments. Stdio only: the cancel is written while the request runs, which one POST per line cannot pace."""

from __future__ import annotations

import time
from dataclasses import dataclass

from mcpfuzz.engine.alone_answers import run_case
from mcpfuzz.engine.config import CALL_PHASES
from mcpfuzz.engine.events import Notice, PhaseName, PhaseStarted
from mcpfuzz.engine.phases.latencies import LatencyBook
from mcpfuzz.engine.phases.target_kinds import TOOLS
from mcpfuzz.engine.phases.targets import target_types
from mcpfuzz.engine.plan.context import RunContext
from mcpfuzz.engine.session.session import HarnessError, Session
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


def latency_book(context: RunContext) -> LatencyBook | None:
    """The run's book of latencies, when `WatchLatenciesPhase` installed one."""
    return next((o for o in context.judged_observers if isinstance(o, LatencyBook)), None)


def expects_work(context: RunContext) -> bool:
    """Whether the flight phase will have calls to cancel or one tool to call at once (the call sequences keep
    its share of the time only then)."""
    book = latency_book(context)
    if book is None:
        return False
    return bool(book.slowest(LONG_ENOUGH, 1)) or any(
        target.method == TOOLS.method and len(target.params) > 1 for target in book.targets.values())


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
    """Start measuring: every read-only target's answered valid calls, timed as they are judged."""

    name: str = "latencies"

    def skip_reason(self, context: RunContext) -> str | None:
        return _stdio_only(context)

    async def run(self, context: RunContext, session: Session) -> None:
        if latency_book(context) is None:
            context.judged_observers.append(LatencyBook())


@dataclass(frozen=True)
class FlightPhase:
    """The slowest read-only targets (and slow list methods) cancelled while in flight; a read-only tool called
    several times at once with distinct arguments, each answer compared with the same call alone."""

    name: str = PhaseName.FLIGHT.value

    def skip_reason(self, context: RunContext) -> str | None:
        reason = _stdio_only(context)
        if reason is None and latency_book(context) is None:
            return "no latency was measured"
        return reason

    async def run(self, context: RunContext, session: Session) -> None:
        book, probe = latency_book(context), context.probe
        assert book is not None and probe is not None
        until = context.budget.deadline
        builder = FrameBuilder(probe.era, probe.version, next_id=FLIGHT_FIRST_ID)
        cancels: list[Case] = []
        at_once = _same_tool_cases(builder, book) if OracleId.CONCURRENCY in context.config.oracles else []
        if OracleId.CANCEL_RESPECTED in context.config.oracles:
            for label, target in book.slowest(LONG_ENOUGH, MAX_CANCELLED):
                # The first params answered (the same seed sends the same frames; every answer took long enough).
                _, params = next(iter(target.params.values()))
                subject = label.split("/", 1)[-1]
                cancels.append(in_flight_cancel_case(builder, target.method, params, pause=PAUSE * target.shortest,
                                                     latency=target.shortest, subject=subject))
            cancels += await _list_cancel_cases(context, session, builder, until)
        # Each family's first case always runs (a phase never does nothing), the rest while there is time.
        firsts = [*cancels[:1], *at_once[:1]]
        cases = [*firsts, *cancels[1:], *at_once[1:]]
        context.emit(PhaseStarted(PhaseName.FLIGHT, len(cases)))
        for done, case in enumerate(cases):
            if done >= len(firsts) and time.monotonic() >= until:
                context.emit(Notice(f"{PhaseName.FLIGHT}: {len(cases) - done} of {len(cases)} cases left out to "
                                    "keep the run's time; raise --budget to run them all"))
                return
            try:
                exchange = await run_case(session, case)
            except (HarnessError, ServerStartError) as error:
                context.server_lost(error, PhaseName.FLIGHT)
                return
            context.judge(PhaseName.FLIGHT, exchange)


def _same_tool_cases(builder: FrameBuilder, book: LatencyBook) -> list[Case]:
    """Each read-only tool whose valid calls had distinct arguments, called with them at once."""
    cases: list[Case] = []
    for target in book.targets.values():
        if target.method != TOOLS.method:
            continue
        calls = [params for _, params in target.params.values()
                 if isinstance(params.get("name"), str) and isinstance(params.get("arguments", {}), dict)]
        if len(calls) < 2:
            continue
        case = same_target_case(builder, calls[0]["name"],
                                [params.get("arguments", {}) for params in calls[:MAX_TOOL_CALLS]])
        if case is not None:
            cases.append(case)
    return cases


async def _list_cancel_cases(context: RunContext, session: Session, builder: FrameBuilder, until: float
                             ) -> list[Case]:
    """A list method whose every answer takes LONG_ENOUGH, cancelled in flight (most servers list in a moment)."""
    assert context.probe is not None
    capabilities = context.probe.capabilities
    methods = [t.list_method for t in target_types().values() if t.capability in capabilities and t.list_method]
    cases: list[Case] = []
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
            cases.append(in_flight_cancel_case(builder, method, {}, pause=PAUSE * min(seconds),
                                               latency=min(seconds)))
    return cases
