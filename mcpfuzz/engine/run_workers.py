"""`run --workers N`: the lead runs the whole run; every other worker probes its own server and only searches."""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import anyio

from mcpfuzz.engine.config import RunConfig, Shard
from mcpfuzz.engine.events import Event, EventSink, Notice, PhaseName, RunFinished, RunStarted, Stats
from mcpfuzz.engine.runner import Run
from mcpfuzz.engine.workers import run_workers

# The phases a worker other than the lead runs: the searches split between the workers' seeds (plans.WORKER_PLAN).
SEARCH_PHASES = (PhaseName.FUZZ, PhaseName.STATEFUL)


@dataclass(frozen=True)
class RunJob:
    """A run in each worker; worker i > 0 draws with seeds of its own and logs frames to a file of its own."""

    max_findings: int | None = None

    def runner(self, config: RunConfig, shard: Shard, emit: EventSink) -> Run:
        """The run of one worker (its `--log-frames` file beside the lead's, so each log is one server's frames)."""
        log = config.log_frames
        return Run(replace(config, shard=shard, log_frames=shard.worker_path(log) if log is not None else None), emit)

    def checkpoint(self, shard: Shard) -> Path | None:
        return None  # a run keeps no checkpoint: a worker that dies without a report leaves only its transcripts

    def ended_by_force(self, shard: Shard) -> None:
        """Nothing to leave: a run's transcripts are written as its findings are found."""

    def describe(self, stats: Stats, per_worker: list[dict[str, Any]]) -> None:
        stats.workers = {"count": len(per_worker), "per_worker": per_worker}


def no_search_work(config: RunConfig) -> str | None:
    """Why workers besides the lead would have nothing to search (None: they split the searches)."""
    if config.jsonrpc_methods is not None:
        return None  # every worker of a plain JSON-RPC run runs its whole plan
    if not any(phase in config.phases for phase in SEARCH_PHASES):
        return "no search phase (fuzz, stateful) in --phases"
    if config.max_examples == 0:
        return "--max-examples 0 draws no example"
    return None


def run_in_workers(config: RunConfig, count: int, emit: EventSink) -> RunFinished:
    """`mcpfuzz run` in `count` worker processes, their events relayed to `emit`, their outcomes merged; in this
    process alone, said once, when there is no search for the workers to split."""
    reason = no_search_work(config)
    if reason is None:
        return run_workers(config, count, emit, RunJob())
    said = f"--workers {count}: {reason}, so no worker process is started; the run goes on in this one"

    def told(event: Event) -> None:
        emit(event)
        if isinstance(event, RunStarted):  # the reports begin with the run: the line comes right after
            emit(Notice(said, level="info"))

    return anyio.run(Run(config, told).execute)
