"""`run --workers N`: the lead runs the whole run; every other worker probes its own server and only searches."""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from mcpfuzz.engine.config import RunConfig, Shard
from mcpfuzz.engine.events import EventSink, RunFinished, Stats
from mcpfuzz.engine.runner import Run
from mcpfuzz.engine.workers import run_workers


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


def run_in_workers(config: RunConfig, count: int, emit: EventSink) -> RunFinished:
    """`mcpfuzz run` in `count` worker processes, their events relayed to `emit`, their outcomes merged."""
    return run_workers(config, count, emit, RunJob())
