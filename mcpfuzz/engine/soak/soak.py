"""`mcpfuzz soak`: fuzz frames and tools in slices, weighted toward what still finds new behaviour, for hours."""

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
from mcpfuzz.engine.phases.call_phases import STATEFUL, CallPhases
from mcpfuzz.engine.phases.frame_fuzz import FrameFuzz
from mcpfuzz.engine.phases.search import PhaseStopped, Verdict, derive_seed
from mcpfuzz.engine.phases.targets import CallTarget, TargetPlan
from mcpfuzz.engine.runner import Run
from mcpfuzz.engine.session.session import Session
from mcpfuzz.engine.session.tracking import BoundedDict
from mcpfuzz.engine.soak.behaviour import behaviour
from mcpfuzz.engine.soak.checkpoint import Checkpoint, write_checkpoint
from mcpfuzz.engine.soak.scheduler import Scheduler
from mcpfuzz.jsonrpc.exchange import Exchange
from mcpfuzz.strategies.frames.mutations import FAMILIES

MIN_SLICE = 1.0  # a slice shorter than this is not worth starting a search for
SEEN_LIMIT = 200_000  # behaviour signatures remembered (a soak must stay flat in memory)
COVERAGE_SHARE = 0.3  # of the soak at most, for the deterministic coverage calls at the start


@dataclass
class SoakOptions:
    """What `mcpfuzz soak` adds to a run's configuration."""

    duration: float
    max_findings: int | None = None
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


class Soak(Run):
    """A run whose fuzz phase is a loop of slices over every target until the duration or N findings."""

    def __init__(self, config: RunConfig, options: SoakOptions, emit: EventSink) -> None:
        super().__init__(config, emit)
        self.options = options
        resume = options.resume
        self.slices = resume.slices if resume is not None else 0
        self.scheduler: Scheduler | None = None
        self._known: set[FindingKey] = {key for key, finding in resume.findings if finding.known} if resume else set()
        self._seen: BoundedDict[tuple, None] = BoundedDict(SEEN_LIMIT)
        self._novel = 0
        self._target = ""
        self._started = 0.0
        self._fuzzers_running: tuple[FrameFuzz, CallPhases] | None = None  # their counters go into checkpoints
        if resume is not None:
            for key, finding in resume.findings:
                self.findings.restore(key, finding)

    # -- the run's hooks -------------------------------------------------------------------------

    async def execute(self) -> RunFinished:
        """Soak, then write the last checkpoint (also after SIGTERM: the run stops cleanly first)."""
        self._started = time.monotonic()
        finished = await super().execute()
        # Silently: the summary is printed and the final reports written on RunFinished already.
        complete = finished.stopped in (StopReason.NONE, StopReason.MAX_FINDINGS) and not finished.error
        self._write_checkpoint(finished, complete=complete, announce=False)
        return finished

    def _monitor_options(self) -> MonitorOptions:
        return MonitorOptions(sample_every=self.config.sample_every, ping_every=self.options.ping_every,
                              ping_timeout=self.config.timeout)

    def _finished(self, findings: tuple[Finding, ...], corpus_paths: dict[str, str],
                  stats: Stats | None = None) -> RunFinished:
        """Counters of earlier sessions added in; findings the corpus already held marked as known."""
        resume = self.options.resume
        base = stats or self.stats
        stats = replace(base, phases=dict(base.phases))
        if resume is not None:
            stats.add(resume.stats)
        scheduler = self.scheduler
        stats.soak = {
            "slices": self.slices, "resumes": resume.resumes + 1 if resume is not None else 0,
            "worker": self.options.shard[0], "workers": self.options.shard[1],
            "new_behaviours": self._novel,
            "slices_per_target": dict(scheduler.slices) if scheduler is not None else {},
        }
        known = {finding.fingerprint for key, finding in self.findings.entries() if key in self._known}
        marked = tuple(replace(f, known=True) if f.fingerprint in known else f for f in findings)
        return super()._finished(marked, corpus_paths, stats)

    def _judge(self, phase: PhaseName, exchange: Exchange) -> list[Verdict]:
        judged = super()._judge(phase, exchange)
        if phase == PhaseName.REGRESSION:
            # What the saved transcripts still show was found before, even if the probe saw it first here.
            self._known.update(key for _, key, _ in judged)
        signature = behaviour(self._target or phase, exchange)
        if signature not in self._seen:
            self._seen[signature] = None
            self._novel += 1
        return judged

    async def _phases(self, session: Session) -> None:
        context = await self._probe(session)
        # With --shared the lead is whichever process of the whole fleet claimed the role first.
        lead = self.shared.claim_lead() if self.shared is not None else self.options.shard[0] == 0
        if lead and self.options.resume is None:
            await self._protocol_phases(session, context)  # the corpus, catalogue and lifecycle: once per soak
        plan, frames, phases = await self._fuzzers(session)
        self._fuzzers_running = (frames, phases)
        if lead and self.options.resume is None and PhaseName.COVERAGE in self.config.phases and plan.targets:
            # The schema's boundaries and enum values, once: deterministic calls that find a lot quickly.
            self.emit(PhaseStarted(PhaseName.COVERAGE, await phases.planned_coverage_size()))
            await phases.coverage(time.monotonic() + max(0.0, self._deadline - time.monotonic()) * COVERAGE_SHARE)
        names = self._targets(plan)
        if not names:
            self.emit(Notice("nothing to soak: the fuzz phase is off (see --phases)", level="error"))
            return
        resume = self.options.resume
        self.scheduler = self._scheduler(names, resume.scores if resume is not None else None)
        left = max(0.0, self._deadline - time.monotonic())
        self.emit(PhaseStarted(PhaseName.SOAK, None, f"{len(names)} targets in slices of "
                                                     f"{self.options.slice_length:g}s, about {left:.0f}s"))
        async with anyio.create_task_group() as group:
            if self.options.checkpoint is not None:
                group.start_soon(self._checkpoint_loop)
            try:
                await self._loop(plan, frames, phases)
            except PhaseStopped as error:
                self._server_lost(error, "the soak")
            finally:
                self._count(frames, phases)
                group.cancel_scope.cancel()

    # -- slices ----------------------------------------------------------------------------------

    def _targets(self, plan: TargetPlan) -> list[str]:
        """Frame families and call targets (and call sequences), this worker's share of them."""
        if PhaseName.FUZZ not in self.config.phases:
            return []
        calls = [target.label for target in plan.targets if target.type.fuzzed]
        frames = [f"frames/{family}" for family in FAMILIES]
        # Targets and frame families alternate, so that the first round (every target once) touches both early.
        names = [name for pair in zip_longest(calls, frames) for name in pair if name is not None]
        if plan.targets and PhaseName.STATEFUL in self.config.phases:
            names.append(STATEFUL)
        index, count = self.options.shard
        # More workers than targets: every worker takes all of them (their slice seeds still differ).
        return names[index::count] or names

    async def _loop(self, plan: TargetPlan, frames: FrameFuzz, phases: CallPhases) -> None:
        """Slice after slice until the duration is up or enough new findings are in."""
        assert self.scheduler is not None
        targets: dict[str, CallTarget] = {target.label: target for target in plan.targets}
        index, count = self.options.shard
        while True:
            now = time.monotonic()
            if self._max_reached():
                self.stopped = StopReason.MAX_FINDINGS
                self.emit(Notice(f"{self.options.max_findings} new findings: stopping as --max-findings asks",
                                 level="info"))
                return
            end = min(now + self.options.slice_length, self._deadline)
            if end - now < MIN_SLICE:
                return
            name = self.scheduler.pick()
            # Slice seeds never repeat: not after --resume (the counter goes on), not across workers (strided).
            epoch = self.shared.next_epoch() if self.shared is not None else self.slices * count + index + 1
            cases, novel, found = self.stats.cases, self._novel, self._new_findings()
            self._target = name
            try:
                if name.startswith("frames/"):
                    frames.mark_origin()  # the slices before sent their own ids on this process
                    await frames.fuzz_family(name.removeprefix("frames/"), end, epoch=epoch)
                elif name == STATEFUL:
                    await phases.stateful(end, epoch=epoch)
                else:
                    await phases.fuzz_target(targets[name], end, epoch=epoch)
            finally:
                self._target = ""
            self.slices += 1
            done = SliceDone(name, time.monotonic() - now, self.stats.cases - cases, self._novel - novel,
                             self._new_findings() - found)
            self.scheduler.update(name, done.cases, done.new_behaviours, done.new_findings)
            self.emit(done)

    def _scheduler(self, names: list[str], scores: dict[str, float] | None) -> Scheduler:
        """The scheduler; with --shared one whose scores are the whole fleet's."""
        if self.shared is not None:
            from mcpfuzz.engine.shared.weights import SharedScheduler

            return SharedScheduler(self.shared.link, names, self._seed("scheduler"), scores)
        return Scheduler(names, self._seed("scheduler"), scores)

    def _shared_status(self) -> dict[str, object]:
        return {**super()._shared_status(), "slices": self.slices, "target": self._target}

    def _new_findings(self) -> int:
        elsewhere = self.shared.elsewhere if self.shared is not None else set()
        return sum(1 for key, finding in self.findings.entries()
                   if key not in self._known and finding.fingerprint not in elsewhere)

    def _max_reached(self) -> bool:
        limit = self.options.max_findings
        return limit is not None and self._new_findings() >= limit

    def _seed(self, name: str) -> int:
        return derive_seed(self.config.seed, "soak", name, self.options.shard[0], self.slices)

    # -- checkpoints -----------------------------------------------------------------------------

    async def _checkpoint_loop(self) -> None:
        """Every --checkpoint-every seconds: the checkpoint, new transcripts, and the reports so far."""
        while True:
            await anyio.sleep(self.options.checkpoint_every)
            release_free_memory()
            session = self._session
            if session is not None:
                self.stats.frames_sent, self.stats.restarts = session.frames_sent, session.restarts
            if self._fuzzers_running is not None:
                self._count(*self._fuzzers_running)
            self.stats.duration = time.monotonic() - self._started
            if self.monitor is not None and self.monitor.figures.samples:
                self.stats.resources = self.monitor.figures.as_dict()
            findings = tuple(self.findings.all())
            finished = self._finished(findings, self._save_corpus(findings))
            self._write_checkpoint(finished, complete=False)

    def _write_checkpoint(self, finished: RunFinished, *, complete: bool, announce: bool = True) -> None:
        path = self.options.checkpoint
        if path is None:
            return
        resume = self.options.resume
        checkpoint = Checkpoint(
            seed=self.config.seed, server=self.config.server_label, slices=self.slices,
            elapsed=(resume.elapsed if resume is not None else 0.0) + (time.monotonic() - self._started),
            resumes=resume.resumes + 1 if resume is not None else 0, stopped=finished.stopped, complete=complete,
            stats=finished.stats.as_dict(), scores=dict(self.scheduler.scores) if self.scheduler is not None else {},
            findings=[(key, finding) for key, finding in self._entries_marked()])
        try:
            write_checkpoint(path, checkpoint, self.config.target, self._redactor)
        except OSError as error:
            self.emit(Notice(f"the checkpoint could not be written to {path}: {error}", level="error"))
            return
        if announce:
            self.emit(CheckpointSaved(str(path), finished))

    def _entries_marked(self) -> list[tuple[FindingKey, Finding]]:
        """Every finding with its key, those from the corpus marked as known."""
        return [(key, replace(finding, known=True) if key in self._known else finding)
                for key, finding in self.findings.entries()]

