"""`mcpfuzz soak`: fuzz frames and tools in slices, weighted toward what still finds new behaviour, for hours; the
client cases (the requests seen asking for input, answered in every way) get a slice of their own once per cycle."""

from __future__ import annotations

import time
from dataclasses import dataclass, replace
from itertools import zip_longest
from pathlib import Path

import anyio

from mcpfuzz.engine.config import RunConfig
from mcpfuzz.engine.events import (
    CheckpointSaved,
    EventSink,
    Finding,
    Notice,
    PhaseName,
    PhaseStarted,
    RunFinished,
    SliceDone,
    Stats,
    StopReason,
)
from mcpfuzz.engine.judge import FindingKey
from mcpfuzz.engine.monitor.monitor import MonitorOptions, release_free_memory
from mcpfuzz.engine.plan.client_phases import (
    CLIENT_FIRST_ID,
    CLIENT_ID_STRIDE,
    WatchAskingPhase,
    asks_for_input,
    client_cases,
    client_skip,
)
from mcpfuzz.engine.plan.context import RunContext, Searches
from mcpfuzz.engine.plan.finishing import outcome
from mcpfuzz.engine.plan.phase import Phase, Plan
from mcpfuzz.engine.plan.plans import PROTOCOL_PHASES
from mcpfuzz.engine.plan.protocol_phases import ProbePhase, VerifySoFarPhase
from mcpfuzz.engine.plan.target_phases import CoveragePhase, PlanTargetsPhase, TargetsReadyPhase
from mcpfuzz.engine.runner import Run
from mcpfuzz.engine.searches.search import PhaseStopped, Verdict, derive_seed
from mcpfuzz.engine.searches.stateful_search import STATEFUL
from mcpfuzz.engine.session.session import Session
from mcpfuzz.engine.session.tracking import BoundedDict
from mcpfuzz.engine.soak.behaviour import behaviour
from mcpfuzz.engine.soak.checkpoint import Checkpoint, write_checkpoint
from mcpfuzz.engine.soak.scheduler import Scheduler
from mcpfuzz.engine.surface.targets import CallTarget, TargetPlan
from mcpfuzz.jsonrpc.exchange import Exchange
from mcpfuzz.strategies.frames.mutations import FAMILIES

MIN_SLICE = 1.0  # a slice shorter than this is not worth starting a search for
SEEN_LIMIT = 200_000  # behaviour signatures remembered (a soak must stay flat in memory)
CLIENT_SLICE = "client"  # the slice target of the client cases
# Client slices' id blocks before they wrap (they stay below the random frames' ids, 2**40 on).
CLIENT_ID_BLOCKS = (2**40 - CLIENT_FIRST_ID) // CLIENT_ID_STRIDE


@dataclass
class SoakOptions:
    """What `mcpfuzz soak` adds to a run's configuration."""

    duration: float
    max_findings: int | None = None
    max_slices: int | None = None  # per worker and session: a soak that ends by its work, the duration a bound
    checkpoint: Path | None = None
    checkpoint_every: float = 60.0
    ping_every: float = 5.0
    slice_seconds: float | None = None  # default: a thirtieth of the duration, 5 to 30 s
    resume: Checkpoint | None = None
    shard: tuple[int, int] = (0, 1)  # (this worker, workers): which targets and slice seeds are ours

    @property
    def slice_length(self) -> float:
        """Seconds per slice: long enough for a search to get going and shrink, short enough to rotate."""
        if self.slice_seconds is not None:
            return self.slice_seconds
        return min(30.0, max(5.0, self.duration / 30))


class SoakState:
    """What a soak adds to a run: its slices, the scheduler, the behaviours seen, the findings known before."""

    def __init__(self, options: SoakOptions, context: RunContext) -> None:
        self.options = options
        self.context = context
        resume = options.resume
        self.slices = resume.slices if resume is not None else 0
        self.scheduler: Scheduler | None = None
        self.known: set[FindingKey] = {key for key, finding in resume.findings if finding.known} if resume else set()
        self.seen: BoundedDict[tuple, None] = BoundedDict(SEEN_LIMIT)
        self.novel = 0
        self.target = ""
        self.started = time.monotonic()
        self._lead: bool | None = None
        if resume is not None:
            for key, finding in resume.findings:
                context.findings.restore(key, finding)

    def is_lead(self) -> bool:
        """Whether this process runs what is done once per soak; with --shared, whichever process of the whole
        fleet claimed the role first (asked once)."""
        if self._lead is None:
            shared = self.context.shared
            self._lead = shared.claim_lead() if shared is not None else self.options.shard[0] == 0
        return self._lead

    def once_skip(self) -> str | None:
        """Why what is done once per soak does not run in this process."""
        if self.options.resume is not None:
            return "done once per soak, before --resume"
        return None if self.is_lead() else "done once per soak, by the lead worker"

    def observe(self, phase: PhaseName, exchange: Exchange, judged: list[Verdict]) -> None:
        """Each judged exchange: its behaviour signature, and what the corpus replay shows was found before."""
        if phase == PhaseName.REGRESSION:
            # What the saved transcripts still show was found before, even if the probe saw it first here.
            self.known.update(key for _, key, _ in judged)
        signature = behaviour(self.target or phase, exchange)
        if signature not in self.seen:
            self.seen[signature] = None
            self.novel += 1

    def adjust(self, findings: tuple[Finding, ...], base: Stats) -> tuple[tuple[Finding, ...], Stats]:
        """Counters of earlier sessions added in; findings the corpus already held marked as known."""
        resume = self.options.resume
        stats = replace(base, phases=dict(base.phases))
        if resume is not None:
            stats.add(resume.stats)
        scheduler = self.scheduler
        stats.soak = {
            "slices": self.slices, "resumes": resume.resumes + 1 if resume is not None else 0,
            "worker": self.options.shard[0], "workers": self.options.shard[1],
            "new_behaviours": self.novel,
            "slices_per_target": dict(scheduler.slices) if scheduler is not None else {},
        }
        known = {finding.fingerprint for key, finding in self.context.findings.entries() if key in self.known}
        return tuple(replace(f, known=True) if f.fingerprint in known else f for f in findings), stats

    def status(self) -> dict[str, object]:
        """What a --shared heartbeat adds for a soak."""
        return {"slices": self.slices, "target": self.target}

    def new_findings(self) -> int:
        """Findings of this soak that neither the corpus nor another machine had."""
        shared = self.context.shared
        elsewhere = shared.elsewhere if shared is not None else set()
        return sum(1 for key, finding in self.context.findings.entries()
                   if key not in self.known and finding.fingerprint not in elsewhere)

    def max_reached(self) -> bool:
        """--max-findings new findings are in."""
        limit = self.options.max_findings
        return limit is not None and self.new_findings() >= limit

    def seed(self, name: str) -> int:
        """A seed of this soak's own for `name`, different per worker and per slice."""
        return derive_seed(self.context.config.seed, "soak", name, self.options.shard[0], self.slices)

    # -- checkpoints -----------------------------------------------------------------------------

    async def checkpoint_loop(self) -> None:
        """Every --checkpoint-every seconds: the checkpoint, new transcripts, and the reports so far."""
        context = self.context
        while True:
            await anyio.sleep(self.options.checkpoint_every)
            release_free_memory()
            context.count_session()
            if context.searches is not None:
                context.stats.tool_calls = context.searches.caller.calls
                context.stats.frame_cases = context.searches.frames.examples
            context.stats.duration = time.monotonic() - self.started
            findings = tuple(context.findings.all())
            self.write_checkpoint(outcome(context, findings, context.save(findings)), complete=False)

    def write_checkpoint(self, finished: RunFinished, *, complete: bool, announce: bool = True) -> None:
        """The state --resume needs, written atomically; announced so the reports are rewritten too."""
        path = self.options.checkpoint
        if path is None:
            return
        context, resume = self.context, self.options.resume
        checkpoint = Checkpoint(
            seed=context.config.seed, server=context.config.server_label, slices=self.slices,
            elapsed=(resume.elapsed if resume is not None else 0.0) + (time.monotonic() - self.started),
            resumes=resume.resumes + 1 if resume is not None else 0, stopped=finished.stopped, complete=complete,
            stats=finished.stats.as_dict(), scores=dict(self.scheduler.scores) if self.scheduler is not None else {},
            findings=[(key, replace(finding, known=True) if key in self.known else finding)
                      for key, finding in context.findings.entries()])
        try:
            write_checkpoint(path, checkpoint, context.config.target, context.redactor)
        except OSError as error:
            context.emit(Notice(f"the checkpoint could not be written to {path}: {error}", level="error"))
            return
        if announce:
            context.emit(CheckpointSaved(str(path), finished))


@dataclass(frozen=True)
class OncePerSoak:
    """A phase of the run done once per soak: by the lead worker, and not again after --resume."""

    inner: Phase
    state: SoakState

    @property
    def name(self) -> str:
        return self.inner.name

    def skip_reason(self, context: RunContext) -> str | None:
        return self.state.once_skip() or self.inner.skip_reason(context)

    async def run(self, context: RunContext, session: Session) -> None:
        await self.inner.run(context, session)


@dataclass(frozen=True)
class SoakCoveragePhase:
    """The schemas' boundaries and enum values, once per soak: deterministic calls that find a lot quickly."""

    state: SoakState
    name: str = PhaseName.COVERAGE.value

    def skip_reason(self, context: RunContext) -> str | None:
        if PhaseName.COVERAGE not in context.config.phases:
            return "not in --phases"
        if context.searches is None or context.targets is None or not context.targets.targets:
            return "no target to call"
        return self.state.once_skip()

    async def run(self, context: RunContext, session: Session) -> None:
        assert context.searches is not None
        coverage = context.searches.coverage
        context.emit(PhaseStarted(PhaseName.COVERAGE, await coverage.planned_coverage_size()))
        try:
            await coverage.coverage(context.budget.share(CoveragePhase.share))  # of the soak
        except PhaseStopped as error:
            context.server_lost(error, "the coverage calls")


@dataclass(frozen=True)
class SoakSlicesPhase:
    """Slice after slice over every target and frame family until the duration is up or enough new findings."""

    state: SoakState
    name: str = PhaseName.SOAK.value

    def skip_reason(self, context: RunContext) -> str | None:
        return None if context.searches is not None else "nothing was planned"

    async def run(self, context: RunContext, session: Session) -> None:
        state = self.state
        searches, plan = context.searches, context.targets
        assert searches is not None and plan is not None
        names = _targets(context, state.options, plan)
        if not names:
            context.emit(Notice("nothing to soak: the fuzz phase is off (see --phases)", level="error"))
            return
        resume = state.options.resume
        state.scheduler = _scheduler(context, state, names, resume.scores if resume is not None else None)
        context.emit(PhaseStarted(PhaseName.SOAK, None, f"{len(names)} targets in slices of "
                                                        f"{state.options.slice_length:g}s, about "
                                                        f"{context.budget.left():.0f}s"))
        async with anyio.create_task_group() as group:
            if state.options.checkpoint is not None:
                group.start_soon(state.checkpoint_loop)
            try:
                await _loop(context, session, state, plan, searches)
            except PhaseStopped as error:
                context.server_lost(error, "the soak")
            finally:
                context.stats.tool_calls = searches.caller.calls
                context.stats.frame_cases = searches.frames.examples
                group.cancel_scope.cancel()


def _targets(context: RunContext, options: SoakOptions, plan: TargetPlan) -> list[str]:
    """Frame families and call targets (and call sequences), this worker's share of them."""
    if PhaseName.FUZZ not in context.config.phases:
        return []
    calls = [target.label for target in plan.targets if target.type.fuzzed]
    frames = [f"frames/{family}" for family in FAMILIES]
    # Targets and frame families alternate, so that the first round (every target once) touches both early.
    names = [name for pair in zip_longest(calls, frames) for name in pair if name is not None]
    if plan.targets and PhaseName.STATEFUL in context.config.phases:
        names.append(STATEFUL)
    index, count = options.shard
    # More workers than targets: every worker takes all of them (their slice seeds still differ).
    return names[index::count] or names


def _scheduler(context: RunContext, state: SoakState, names: list[str], scores: dict[str, float] | None) -> Scheduler:
    """The scheduler; with --shared one whose scores are the whole fleet's."""
    if context.shared is not None:
        from mcpfuzz.engine.shared.weights import SharedScheduler

        return SharedScheduler(context.shared.link, names, state.seed("scheduler"), scores)
    return Scheduler(names, state.seed("scheduler"), scores)


async def _loop(context: RunContext, session: Session, state: SoakState, plan: TargetPlan,
                searches: Searches) -> None:
    """Slice after slice until the duration is up, enough new findings are in, or --max-slices slices ran."""
    assert state.scheduler is not None
    targets: dict[str, CallTarget] = {target.label: target for target in plan.targets}
    index, count = state.options.shard
    frames = searches.frames
    # One client slice per cycle (as many slices as targets), first right after coverage, while some request is
    # seen asking; not scheduled by score: its cases are the same each time and find what takes many tries.
    client = client_skip(context) is None
    since_client = len(state.scheduler.targets)
    first_slice = state.slices  # --max-slices counts this session's slices, not those before --resume
    while True:
        now = time.monotonic()
        limit = state.options.max_slices
        if limit is not None and state.slices - first_slice >= limit:
            return
        if state.max_reached():
            context.stopped = StopReason.MAX_FINDINGS
            context.emit(Notice(f"{state.options.max_findings} new findings: stopping as --max-findings asks",
                                level="info"))
            return
        end = min(now + state.options.slice_length, context.budget.deadline)
        if end - now < MIN_SLICE:
            return
        due = client and since_client >= len(state.scheduler.targets) and asks_for_input(context)
        name = CLIENT_SLICE if due else state.scheduler.pick()
        # Slice seeds never repeat: not after --resume (the counter goes on), not across workers (strided).
        epoch = context.shared.next_epoch() if context.shared is not None else state.slices * count + index + 1
        cases, novel, found = context.stats.cases, state.novel, state.new_findings()
        state.target = name
        try:
            if name.startswith("frames/"):
                frames.mark_origin()  # the slices before sent their own ids on this process
                await frames.fuzz_family(name.removeprefix("frames/"), end, epoch=epoch)
            elif name == STATEFUL:
                await searches.stateful.stateful(end, epoch=epoch)
            elif name == CLIENT_SLICE:
                await client_cases(context, session, end, _client_first_id(epoch))
            else:
                await searches.fuzz.fuzz_target(targets[name], end, epoch=epoch)
        finally:
            state.target = ""
        state.slices += 1
        done = SliceDone(name, time.monotonic() - now, context.stats.cases - cases, state.novel - novel,
                         state.new_findings() - found)
        if name == CLIENT_SLICE:
            since_client = 0
        else:
            since_client += 1
            state.scheduler.update(name, done.cases, done.new_behaviours, done.new_findings)
        context.emit(done)
        if context.stopped is StopReason.SERVER_UNRECOVERABLE:
            return  # the client cases said so already (the other slices raise PhaseStopped)


def _client_first_id(epoch: int) -> int:
    """The first id of a client slice: a block of its own per epoch, so that no id is sent twice on a process."""
    return CLIENT_FIRST_ID + (epoch % CLIENT_ID_BLOCKS) * CLIENT_ID_STRIDE


def soak_plan(state: SoakState) -> Plan:
    """A soak: the probe, the targets planned, what is done once per soak, coverage once, then the slices (the
    requests seen asking for input noted from the coverage calls on, for the client slices)."""
    once = tuple(OncePerSoak(phase, state) for phase in PROTOCOL_PHASES if not isinstance(phase, VerifySoFarPhase))
    return (ProbePhase(), PlanTargetsPhase(), *once, TargetsReadyPhase(), WatchAskingPhase(),
            SoakCoveragePhase(state), SoakSlicesPhase(state))


class Soak:
    """`mcpfuzz soak`: a run whose plan ends in slices over every target, with checkpoints for --resume."""

    def __init__(self, config: RunConfig, options: SoakOptions, emit: EventSink) -> None:
        self.run = Run(config, emit, plan=())
        context = self.run.context
        self.state = SoakState(options, context)
        context.monitor_options = MonitorOptions(sample_every=context.config.sample_every,
                                                 ping_every=options.ping_every, ping_timeout=context.config.timeout)
        context.judged_observers.append(self.state.observe)
        context.report_adjusters.append(self.state.adjust)
        context.status_parts.append(self.state.status)
        self.run.plan = soak_plan(self.state)

    async def execute(self) -> RunFinished:
        """Soak, then write the last checkpoint (also after SIGTERM: the run stops cleanly first)."""
        self.state.started = time.monotonic()
        finished = await self.run.execute()
        # Silently: the summary is printed and the final reports written on RunFinished already.
        complete = finished.stopped in (StopReason.NONE, StopReason.MAX_FINDINGS) and not finished.error
        self.state.write_checkpoint(finished, complete=complete, announce=False)
        return finished
