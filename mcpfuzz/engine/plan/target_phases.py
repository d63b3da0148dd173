"""The phases that call targets: planning them, then coverage, fuzz (random frames first) and call sequences."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from mcpfuzz.engine.config import CALL_PHASES
from mcpfuzz.engine.coverage.book import CoverageBook
from mcpfuzz.engine.events import Notice, PhaseName, PhaseStarted, TargetsPlanned
from mcpfuzz.engine.plan.context import RunContext, Searches
from mcpfuzz.engine.plan.phase import KeepsTime
from mcpfuzz.engine.searches.caller import Caller
from mcpfuzz.engine.searches.frame_fuzz import FrameFuzz, simplest_tool
from mcpfuzz.engine.searches.search import PhaseStopped, SearchOptions
from mcpfuzz.engine.session.session import Session
from mcpfuzz.engine.surface.preparation import TargetPreparation
from mcpfuzz.engine.surface.targets import TargetPlan, plan_targets

NO_TARGET = "no target to call"


@dataclass(frozen=True)
class PlanTargetsPhase:
    """Which targets the call phases call (selection and safety hints, no draws), prepared from now on in the
    background while the protocol phases run; the budget keeps the calls' share from here."""

    name: str = "plan"

    def skip_reason(self, context: RunContext) -> str | None:
        return None  # the catalogue calls read-only tools at once too, with or without the call phases

    async def run(self, context: RunContext, session: Session) -> None:
        assert context.probe is not None
        plan = plan_targets(context.probe.declared, context.selection(), seed=context.config.seed)
        context.preparation = TargetPreparation.start(plan, context.hypothesis())
        context.budget.reserve_calls(bool(plan.targets) and _calls_wanted(context))


@dataclass(frozen=True)
class TargetsReadyPhase:
    """The prepared targets (milliseconds each, mostly done while the protocol phases ran), told to the reports,
    and the two searches over them: random frames, and calls of targets."""

    name: str = "prepare"

    def skip_reason(self, context: RunContext) -> str | None:
        if not _calls_wanted(context):
            return "no call phase in --phases"
        return None if context.preparation is not None else "nothing was planned"

    async def run(self, context: RunContext, session: Session) -> None:
        config = context.config
        assert context.probe is not None and context.preparation is not None
        plan = await context.preparation.finished()
        context.targets = plan
        context.emit(TargetsPlanned(tuple(t.label for t in plan.targets), tuple(plan.skipped), tuple(plan.risky)))
        for warning in plan.warnings:
            context.emit(Notice(warning))
        options = SearchOptions(config.seed, config.database_root, config.server_label, config.max_examples,
                                context.shared.example_database if context.shared is not None else None,
                                worker=config.shard.index, on_internal_error=context.note_internal)
        frames = FrameFuzz(session, context.judge, options, simplest_tool(plan.targets),
                           tools_listed="tools" in context.probe.capabilities)
        caller = Caller(session, plan.targets, context.judge, options, strict_types=config.strict_types,
                           timeouts=config.target_timeouts, known_arguments=config.known_arguments,
                           canaries=context.security.layout if context.security is not None else None,
                           oracles=config.oracles, coverage=traced(context))
        called = {target.label for target in plan.targets}
        for label in config.known_arguments:
            if label not in called:
                context.emit(Notice(f"--args: {label} is not a target this run calls; its arguments are not used"))
        context.searches = Searches.over(frames, caller)


def traced(context: RunContext) -> CoverageBook | None:
    """--coverage's book once the server's tracer has said it is in; else None, and coverage off, said once."""
    book = context.coverage
    if book is None:
        return None
    book.settle()
    if book.tracer is None:
        context.emit(Notice("--coverage is off: the server did not load mcpfuzz's tracer (a python started with -I, "
                            "-E or -S ignores PYTHONPATH, and a launcher may clear it or NODE_OPTIONS); the run goes "
                            "on without it"))
        context.coverage = None
    return context.coverage


def _calls_wanted(context: RunContext) -> bool:
    """Whether any phase that calls targets was asked for."""
    return any(phase in context.config.phases for phase in CALL_PHASES)


def count_of(plan: TargetPlan, *, fuzzed: bool = False) -> str:
    """How many targets of each kind, in words: "3 tools" (`fuzzed`: only the kinds the fuzz phase searches)."""
    counts: dict[str, int] = {}
    for target in plan.targets:
        if target.type.fuzzed or not fuzzed:
            counts[target.kind.value] = counts.get(target.kind.value, 0) + 1
    return ", ".join(f"{count} {kind}{'' if count == 1 else 's'}" for kind, count in counts.items())


def _call_phase_skip(context: RunContext, phase: PhaseName) -> str | None:
    """Why a call phase does not run: not asked for, or nothing to call."""
    if phase not in context.config.phases:
        return "not in --phases"
    if context.searches is None or context.targets is None or not context.targets.targets:
        return NO_TARGET
    return None


class _CallPhase:
    """What the call phases share: a lost server ends the phase (said once), and the counters go into the stats."""

    async def run(self, context: RunContext, session: Session) -> None:
        searches = context.searches
        assert searches is not None and context.targets is not None
        try:
            await self.calls(context, searches, context.targets)
        except PhaseStopped as error:
            context.server_lost(error, "the tool phases")
        finally:
            context.stats.tool_calls = searches.caller.calls
            context.stats.frame_cases = searches.frames.examples

    async def calls(self, context: RunContext, searches: Searches, plan: TargetPlan) -> None:
        raise NotImplementedError


@dataclass(frozen=True)
class CoveragePhase(_CallPhase):
    """Each target's deterministic calls (bounds, enum values, single-rule breaks): once per run, by the lead."""

    name: str = PhaseName.COVERAGE.value
    share: ClassVar[float] = 0.3  # of the call phases' time, at most

    def skip_reason(self, context: RunContext) -> str | None:
        return _call_phase_skip(context, PhaseName.COVERAGE)

    async def calls(self, context: RunContext, searches: Searches, plan: TargetPlan) -> None:
        context.emit(PhaseStarted(PhaseName.COVERAGE, None, f"the first call of {count_of(plan)}, then their "
                                                                "boundaries and single-rule breaks"))
        for refused in await searches.coverage.checked_arguments():
            context.emit(Notice(refused))
        # Every target's first call may run past the phase's share, into the later call phases' time (never the
        # time kept for the phases after them): a target never called is the largest gap a run can leave.
        left_out = await searches.coverage.coverage(context.budget.share(self.share),
                                                 first_calls_until=context.budget.share(1.0 - _kept(context)))
        if left_out:
            context.emit(Notice(f"coverage: {left_out.words()} left out to keep time for fuzzing; raise --budget "
                                "to run them all"))


@dataclass(frozen=True)
class FuzzPhase(_CallPhase):
    """Random frames (a quarter of the phase), then one Hypothesis search per target; without a target to call,
    random frames for the whole phase."""

    name: str = PhaseName.FUZZ.value
    share: ClassVar[float] = 0.6  # of what coverage leaves (the rest: call sequences and the phases after them)
    frames_share: ClassVar[float] = 0.25  # of the fuzz phase, for random frames before the targets' searches

    def skip_reason(self, context: RunContext) -> str | None:
        if PhaseName.FUZZ not in context.config.phases:
            return "not in --phases"
        if context.searches is None:
            return NO_TARGET
        if context.plain and (context.targets is None or not context.targets.targets):
            return "no method to call (the frame families speak MCP)"
        return None

    async def calls(self, context: RunContext, searches: Searches, plan: TargetPlan) -> None:
        budget = context.budget
        if not plan.targets:
            context.emit(PhaseStarted(PhaseName.FUZZ, None, f"random frames (no tool to fuzz), about "
                                                            f"{budget.left():.0f}s", budget.left()))
            await searches.frames.fuzz(budget.share(1.0))
            return
        # Without call sequences, the fuzz phase keeps what they would have left to the phases after them.
        share = self.share if PhaseName.STATEFUL in context.config.phases else 1.0 - (1.0 - self.share) * _kept(context)
        frames_first = "" if context.plain else "random frames, then "
        context.emit(PhaseStarted(PhaseName.FUZZ, None, f"{frames_first}{count_of(plan, fuzzed=True)}, about "
                                                        f"{budget.left() * share:.0f}s", budget.left() * share))
        end = budget.share(share)
        if not context.plain:  # the frame families speak MCP
            await searches.frames.fuzz(budget.part(end, self.frames_share))
        await searches.fuzz.fuzz(end)


@dataclass(frozen=True)
class StatefulPhase(_CallPhase):
    """Sequences of calls across targets that reuse what earlier results returned."""

    name: str = PhaseName.STATEFUL.value

    def skip_reason(self, context: RunContext) -> str | None:
        return _call_phase_skip(context, PhaseName.STATEFUL)

    async def calls(self, context: RunContext, searches: Searches, plan: TargetPlan) -> None:
        budget = context.budget
        share = 1.0 - _kept(context)
        context.emit(PhaseStarted(PhaseName.STATEFUL, None, f"call sequences across {count_of(plan)}, about "
                                                            f"{budget.left() * share:.0f}s", budget.left() * share))
        await searches.stateful.stateful(budget.share(share))


def _kept(context: RunContext) -> float:
    """The part of what the fuzz phase leaves that is kept for the plan's phases that declare a share (as far as the
    calls so far show each will have work)."""
    return context.budget.kept(phase.kept_share(context) for phase in context.plan if isinstance(phase, KeepsTime))
