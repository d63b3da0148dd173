"""`run -x` / `--max-findings N`: an event sink in front of the reporters that stops the run at the N-th finding.

The run is stopped the way a SIGTERM stops it (the single-process runner and the lead of `--workers` both watch
for one): what was found is kept and reported, the corpus written, the exit status that of the findings. The
reports say it stopped for `max-findings`, not `interrupted`: the engine saw a signal, this sink knows it sent it.
"""

from __future__ import annotations

import signal
from dataclasses import dataclass, replace

from mcpfuzz.engine.events import Event, EventSink, FindingFound, Notice, RunFinished, StopReason
from mcpfuzz.oracles.base import Severity
from mcpfuzz.report.plural import counted

STOP_SIGNAL = signal.SIGTERM


@dataclass
class StopAtFindings:
    """Counts the findings at or above `fail_on` on their way to `sink`; at `limit` asks the run to stop."""

    sink: EventSink
    limit: int
    fail_on: Severity
    found: int = 0
    stopping: bool = False

    def __call__(self, event: Event) -> None:
        if self.stopping and isinstance(event, Notice) and f"{STOP_SIGNAL.name} received" in event.message:
            return  # the runner's (or a worker's) "SIGTERM received": this stop was asked for here, and said so
        if self.stopping and isinstance(event, RunFinished) and event.stopped == StopReason.INTERRUPTED:
            event = replace(event, stopped=StopReason.MAX_FINDINGS)  # the signal was this sink's own
        self.sink(event)
        if isinstance(event, FindingFound) and event.finding.severity >= self.fail_on:
            self.found += 1
            if self.found >= self.limit and not self.stopping:
                self._stop()

    def _stop(self) -> None:
        handler = signal.getsignal(STOP_SIGNAL)
        if handler in (signal.SIG_DFL, signal.SIG_IGN, None):
            return  # nobody would stop cleanly (the run is over): a default SIGTERM would kill mcpfuzz itself
        self.stopping = True
        self.sink(Notice(f"{counted(self.found, 'finding')} at or above {self.fail_on}: stopping as --max-findings "
                         f"{self.limit} asks (what was found is reported)"))
        signal.raise_signal(STOP_SIGNAL)
