"""`run --workers N` and `soak --workers N`: N processes, each with its own server and its part of the search;
their events relayed to the parent's reporters, findings de-duplicated, outcomes merged."""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import queue
import signal
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from functools import partial
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any, Protocol

from mcpfuzz.engine.config import RunConfig, Shard
from mcpfuzz.engine.events import (
    CheckpointSaved,
    Event,
    EventSink,
    Finding,
    FindingFound,
    Notice,
    PhaseStarted,
    ProbeDone,
    ResourcesSampled,
    RunFinished,
    RunStarted,
    SliceDone,
    Stats,
    StopReason,
    TargetsPlanned,
)
from mcpfuzz.engine.judge import FindingSet, group_by_upstream, group_under_tools, name_the_share
from mcpfuzz.engine.replied_frames import group_replied_frames
from mcpfuzz.transport.auth.lending import TokenLender, borrow_tokens
from mcpfuzz.transport.process_groups import kill_all


class Executable(Protocol):
    """What a worker executes: a run or a soak, ending in its outcome."""

    async def execute(self) -> RunFinished:
        """Run to the end (or the budget, or a signal) and return the outcome."""
        ...

POLL = 0.5  # seconds between two looks at the event queue and the workers
ORPHAN_POLL = 1.0  # seconds between looks at whether the parent is still there
ORPHAN_GRACE = 90.0  # seconds an orphaned worker has to stop as on SIGTERM before it is ended
EXIT_ORPHANED = 143  # as a process ended by SIGTERM
PR_SET_PDEATHSIG = 1  # linux/prctl.h: the signal a process gets when its parent dies
STOP_WAIT = 30.0  # after SIGTERM/Ctrl-C, how long workers get to shrink, save and report
# The lead worker (0) tells the whole story; the others only what is theirs to tell.
# Events a worker may send before the lead's RunStarted, kept until it comes.
MAX_EARLY = 1000
LEAD_ONLY = (RunStarted, ProbeDone, TargetsPlanned, PhaseStarted)
# Slices and resource samples are small and few (one a second at most): the HTML report charts them.
RELAYED = (FindingFound, Notice, CheckpointSaved, RunFinished, SliceDone, ResourcesSampled, *LEAD_ONLY)


@dataclass(frozen=True)
class _Message:
    """What a worker sends the parent: its index and one event."""

    worker: int
    event: Event


class WorkerJob(Protocol):
    """What every worker runs, sent to each worker process (so picklable): a run, or a soak."""

    @property
    def max_findings(self) -> int | None:
        """New findings across all workers that stop them all (None: no limit)."""

    def runner(self, config: RunConfig, shard: Shard, emit: EventSink) -> Executable:
        """The run a worker executes for its shard."""

    def checkpoint(self, shard: Shard) -> Path | None:
        """Where the worker writes its checkpoint (read back when it dies without a report), if anywhere."""

    def ended_by_force(self, shard: Shard) -> None:
        """Leave what a worker ended by force (its parent dead, its own stop stalled) must leave behind."""

    def describe(self, stats: Stats, per_worker: list[dict[str, Any]]) -> None:
        """Put the workers' part in the merged counters (`stats.workers`, a soak's `stats.soak`)."""


def run_workers(config: RunConfig, count: int, emit: EventSink, job: WorkerJob) -> RunFinished:
    """Start `count` worker processes, relay their events (findings de-duplicated), merge their outcomes."""
    before = set(config.corpus.glob("*.json")) if config.corpus is not None and config.corpus.is_dir() else set()
    context = multiprocessing.get_context("spawn")  # no fork: the parent's threads and loops stay its own
    events = context.Queue()
    # With a token source, this process keeps the tokens and the workers borrow them: one renewal for all.
    lender = TokenLender() if config.http is not None and config.http.auth is not None else None
    processes = []
    for index in range(count):
        tokens = lender.channel() if lender is not None else None
        process = context.Process(target=_worker_main,
                                  args=(config, job, Shard(index, count), events, os.getpid(), tokens),
                                  name=f"mcpfuzz-worker-{index}")
        process.start()
        if tokens is not None:
            tokens.close()  # the worker holds its end: when it ends, the lender sees the pipe close
        processes.append(process)
    if lender is not None:
        lender.start()
    merger = _Merger(count, emit, processes, job)
    previous = signal.signal(signal.SIGTERM, lambda number, frame: merger.stop())
    try:
        _relay(events, processes, merger)
    except KeyboardInterrupt:  # Ctrl-C reached the workers too (same process group): let them finish
        merger.stop()
        _relay(events, processes, merger)
    finally:
        signal.signal(signal.SIGTERM, previous)
        for process in processes:
            process.join(timeout=STOP_WAIT)
            if process.is_alive():
                process.kill()  # its server process groups are killed by the worker's own exit handlers
        if lender is not None:
            lender.close()
    return merger.finish(processes, before)


def _worker_main(config: RunConfig, job: WorkerJob, shard: Shard, events: Any, parent: int,
                 tokens: Connection | None) -> None:
    """A worker process: its run, every event worth telling sent to the parent (nothing printed); its tokens
    borrowed from the parent over `tokens` when the server wants one."""
    import anyio

    stop_when_orphaned(parent)
    threading.Thread(target=_end_when_orphaned_too_long, args=(parent, partial(job.ended_by_force, shard)),
                     daemon=True, name="mcpfuzz-orphan-watch").start()

    def orphaned() -> bool:
        if os.getppid() == parent:
            return False
        # Nobody reads the queue any more: exiting must not wait to flush it (another worker holds its read
        # end, so the pipe never breaks and a full one would block the exit for ever).
        events.cancel_join_thread()
        return True

    def emit(event: Event) -> None:
        if orphaned() or not isinstance(event, RELAYED) or (isinstance(event, LEAD_ONLY) and not shard.lead):
            return
        events.put(_Message(shard.index, event))

    if tokens is not None:
        borrow_tokens(tokens, lambda text: emit(Notice(text)))
    try:
        anyio.run(job.runner(config, shard, emit).execute)
    finally:
        orphaned()  # events queued before the parent died must not hold the exit either


def _end_when_orphaned_too_long(parent: int, last_words: Callable[[], None]) -> None:
    """The backstop of `stop_when_orphaned`: a worker whose parent died and that has not stopped by itself within
    ORPHAN_GRACE (its stop held by a thread or a pipe nobody reads) says so where its job keeps state
    (`last_words`), kills its servers' process groups and exits."""
    while os.getppid() == parent:
        time.sleep(ORPHAN_POLL)
    time.sleep(ORPHAN_GRACE)
    with contextlib.suppress(Exception):  # a full disk must not keep the worker and its servers alive
        last_words()
    kill_all()
    os._exit(EXIT_ORPHANED)


def stop_when_orphaned(parent: int) -> None:
    """SIGTERM this worker when the parent dies (SIGKILL, OOM killer): it then stops as on Ctrl-C.

    Without it an orphaned worker would soak on, with its server, until --duration (hours, maybe).
    Linux only (prctl PR_SET_PDEATHSIG); elsewhere a killed parent leaves workers to end at --duration.
    """
    if sys.platform.startswith("linux"):
        import ctypes

        with contextlib.suppress(OSError, AttributeError):
            ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGTERM)
    if os.getppid() != parent:  # it died before prctl took effect
        os.kill(os.getpid(), signal.SIGTERM)


def _relay(events: Any, processes: list, merger: _Merger) -> None:
    """Pass events on until every worker has ended and the queue is empty."""
    while True:
        try:
            message = events.get(timeout=POLL)
        except queue.Empty:
            if not any(process.is_alive() for process in processes):
                return
            continue
        merger.take(message)


class _Merger:
    """Relays worker events to the parent's reporter and keeps the merged state."""

    def __init__(self, count: int, emit: EventSink, processes: list, job: WorkerJob | None = None) -> None:
        self.count = count
        self.emit = emit
        self.processes = processes
        self.job = job
        # --max-findings counts for the whole soak: each worker alone would only stop at N of its own.
        self.max_findings = job.max_findings if job is not None else None
        self.new_findings = 0
        self.max_reached = False
        self.findings = FindingSet()
        self.latest: dict[int, RunFinished] = {}  # per worker: its final outcome, or its last checkpoint's
        self.final: set[int] = set()
        self.stopping = False
        # A worker's resource samples and slices before the lead's RunStarted wait for it: a report reads the
        # timeline from RunStarted on. Bounded, in case the lead never starts (then they are dropped).
        self.early: list[_Message] | None = []

    def take(self, message: _Message) -> None:
        """One worker event, relayed in an order a report can read (timeline events wait for RunStarted)."""
        if self.early is not None and not isinstance(message.event, RunStarted):
            if isinstance(message.event, (ResourcesSampled, SliceDone)):
                if len(self.early) < MAX_EARLY:
                    self.early.append(message)
                return
        elif self.early is not None:
            early, self.early = self.early, None
            self._take(message)
            for waiting in early:
                self._take(waiting)
            return
        self._take(message)

    def _take(self, message: _Message) -> None:
        """One worker event merged: findings de-duplicated, outcomes kept per worker, the rest passed on."""
        event, worker = message.event, message.worker
        if isinstance(event, FindingFound):
            if self.findings.merge(event.finding) is not None:
                self.emit(event)
                self._count_new(event.finding)
        elif isinstance(event, Notice):
            self.emit(replace(event, message=f"worker {worker}: {event.message}") if self.count > 1 else event)
        elif isinstance(event, CheckpointSaved):
            self.latest[worker] = event.finished
            self.emit(CheckpointSaved(event.path, self.merged()))
        elif isinstance(event, RunFinished):
            self.latest[worker] = event
            self.final.add(worker)
        elif isinstance(event, ResourcesSampled):
            self.emit(replace(event, server=worker))  # each worker's server is its own memory line
        else:
            self.emit(event)

    def _count_new(self, finding: Finding) -> None:
        if finding.known:
            return
        self.new_findings += 1
        if self.max_findings is not None and self.new_findings >= self.max_findings and not self.max_reached:
            self.max_reached = True
            self.emit(Notice(f"{self.max_findings} new findings across the workers: stopping as --max-findings "
                             "asks", level="info"))
            self.stop()

    def stop(self) -> None:
        """Ask every worker to stop (SIGTERM: each shrinks, saves and reports what it has)."""
        if self.stopping:
            return
        self.stopping = True
        self.emit(Notice("stopping the workers; they save what they found and report"))
        for process in self.processes:
            if process.is_alive() and process.pid is not None:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(process.pid, signal.SIGTERM)

    def merged(self) -> RunFinished:
        """The workers' outcomes as one: counters summed, findings de-duplicated (the smaller reproducer wins)."""
        stats = Stats()
        findings = FindingSet()
        corpus: dict[str, str] = {}
        for worker in sorted(self.latest):
            outcome = self.latest[worker]
            stats.add(outcome.stats.as_dict())
            for finding in outcome.findings:
                findings.merge(finding)
            corpus.update(outcome.corpus_paths)
        lead = self.latest.get(0)
        stats.duration = max((o.stats.duration for o in self.latest.values()), default=0.0)
        if lead is not None:
            stats.resources, stats.plan = lead.stats.resources, lead.stats.plan
        if self.job is not None:
            self.job.describe(stats, [
                {"worker": w, "cases": o.stats.cases, "frames_sent": o.stats.frames_sent, "findings": len(o.findings),
                 "stopped": o.stopped or None, "resources": o.stats.resources} for w, o in sorted(self.latest.items())])
        # Workers may have led one cause with other targets.
        chosen = name_the_share(group_replied_frames(group_by_upstream(group_under_tools(tuple(findings.all())))),
                                stats.targets)
        paths = {f.fingerprint: corpus[f.fingerprint] for f in chosen if f.fingerprint in corpus}
        stopped = StopReason.MAX_FINDINGS if self.max_reached else next((o.stopped for o in self.latest.values()
                                                                         if o.stopped), StopReason.NONE)
        errors = [f"worker {w}: {o.error}" for w, o in sorted(self.latest.items()) if o.error]
        # Only the lead replays the --baseline transcripts: its stale entries are the run's.
        # Untested only when no worker could test: one that called its targets vouches for the run.
        untested = lead.untested if lead is not None and all(o.untested for o in self.latest.values()) else ""
        return RunFinished(stats, chosen, lead.protocol_version if lead else None, lead.era if lead else None,
                           stopped, "\n".join(errors) if len(errors) == len(self.latest) else "", paths,
                           lead.stale_baseline if lead else (), untested,
                           internal_errors=tuple(e for _, o in sorted(self.latest.items()) for e in o.internal_errors),
                           stack=lead.stack if lead else None)

    def finish(self, processes: list, before: set[Path]) -> RunFinished:
        """The merged outcome; a worker that died without reporting counts with its last checkpoint, if any."""
        for index, process in enumerate(processes):
            if index in self.final:
                continue
            checkpoint = self.job.checkpoint(Shard(index, self.count)) if self.job is not None else None
            self.emit(Notice(f"worker {index} ended without a report (exit status {process.exitcode})"
                             f"{'; its last checkpoint counts' if checkpoint is not None else ''}", level="error"))
            if index not in self.latest and checkpoint is not None:
                self._from_checkpoint(index, checkpoint)
        merged = self.merged()
        if not self.latest:
            merged = replace(merged, error="no worker reported; see the notices above")
        _drop_duplicate_transcripts(self.latest.values(), merged, before)
        self.emit(merged)
        return merged

    def _from_checkpoint(self, index: int, path: Path) -> None:
        from mcpfuzz.engine.soak.checkpoint import read_checkpoint

        try:
            checkpoint = read_checkpoint(path)
        except Exception:  # noqa: BLE001 (a worker killed before its first checkpoint leaves nothing to read)
            return
        stats = Stats()
        stats.add(checkpoint.stats)
        self.latest[index] = RunFinished(stats, tuple(f for _, f in checkpoint.findings), None, None,
                                         StopReason.parse(checkpoint.stopped or StopReason.INTERRUPTED))


def _drop_duplicate_transcripts(outcomes: Any, merged: RunFinished, before: set[Path]) -> None:
    """Two workers may save one server-wide bug under two targets: keep the transcript the report names.

    Only transcripts written during this soak are removed; what the corpus held before is never touched.
    """
    kept = set(merged.corpus_paths.values())
    chosen = {f.fingerprint for f in merged.findings}
    for outcome in outcomes:
        for fingerprint, path in outcome.corpus_paths.items():
            if fingerprint not in chosen and path not in kept and Path(path) not in before:
                with contextlib.suppress(OSError):
                    Path(path).unlink()

