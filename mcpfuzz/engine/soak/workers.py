"""`soak --workers N`: each worker soaks its own server on its share of targets, with a checkpoint of its own."""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from mcpfuzz.engine.config import RunConfig, Shard
from mcpfuzz.engine.events import EventSink, RunFinished, Stats, StopReason
from mcpfuzz.engine.soak.checkpoint import mark_stopped, read_checkpoint
from mcpfuzz.engine.soak.soak import Soak, SoakOptions
from mcpfuzz.engine.workers import run_workers


@dataclass(frozen=True)
class SoakJob:
    """A soak in each worker: its targets and slice seeds strided by the worker's number."""

    options: SoakOptions

    @property
    def max_findings(self) -> int | None:
        return self.options.max_findings

    def runner(self, config: RunConfig, shard: Shard, emit: EventSink) -> Soak:
        """The soak of one worker: its checkpoint beside the lead's, resumed from it when the soak resumes."""
        options = self.options
        checkpoint = self.checkpoint(shard)
        resume = options.resume
        if resume is not None and not shard.lead and checkpoint is not None:
            resume = read_checkpoint(checkpoint)
        return Soak(config, replace(options, shard=(shard.index, shard.count), checkpoint=checkpoint,
                                    resume=resume), emit)

    def checkpoint(self, shard: Shard) -> Path | None:
        path = self.options.checkpoint
        return shard.worker_path(path) if path is not None else None

    def ended_by_force(self, shard: Shard) -> None:
        """The worker's last checkpoint says it was interrupted (so `--resume` and a reader know it stopped short)."""
        checkpoint = self.checkpoint(shard)
        if checkpoint is not None:
            mark_stopped(checkpoint, StopReason.INTERRUPTED)

    def describe(self, stats: Stats, per_worker: list[dict[str, Any]]) -> None:
        stats.soak = {"workers": len(per_worker), "per_worker": per_worker}


def soak_workers(config: RunConfig, options: SoakOptions, count: int, emit: EventSink) -> RunFinished:
    """The soak in `count` worker processes, their events relayed to `emit`."""
    return run_workers(config, count, emit, SoakJob(options))
