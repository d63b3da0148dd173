"""Watches the server between cases: resource samples judged by `memory-growth`, and a liveness ping."""

from __future__ import annotations

import ctypes
import functools
import gc
import statistics
import sys
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import psutil

from mcpfuzz.engine.monitor.resources import ResourceSampler, Sample
from mcpfuzz.engine.session.session import HarnessError, Session
from mcpfuzz.oracles.base import Failure, Severity
from mcpfuzz.oracles.memory import MemoryGrowthFailure, judge_growth
from mcpfuzz.oracles.process import NoHangFailure
from mcpfuzz.transport.errors import TransportError

MAX_SERIES = 4_000  # samples kept per process; older ones are thinned (the slope test thins to 240 anyway)
MIB = 1024 * 1024

# (failure, lines describing what was observed) -> None: the run turns it into a finding.
FailureSink = Callable[[Failure, tuple[str, ...]], None]
# (pid, sample) -> None: each sample of the server as it is taken (the run emits it as an event).
SampleSink = Callable[[int, Sample], None]


@dataclass
class MonitorOptions:
    """How often to sample and ping; no ping unless asked (a soak asks)."""

    sample_every: float = 1.0
    ping_every: float | None = None
    ping_timeout: float = 5.0


@dataclass
class MonitorFigures:
    """What the monitor saw over the run, for the report's stats."""

    samples: int = 0
    server_rss_first: int | None = None
    server_rss_last: int | None = None
    server_rss_peak: int = 0
    server_fds_last: int | None = None
    own_rss_first: int | None = None
    own_rss_last: int | None = None
    own_rss_peak: int = 0
    pings: int = 0
    pings_failed: int = 0
    ping_ms: deque[float] = field(default_factory=lambda: deque(maxlen=2_000))

    def as_dict(self) -> dict[str, Any]:
        """The figures in MB and milliseconds, for the JSON report."""
        latencies = sorted(self.ping_ms)
        return {
            "samples": self.samples,
            "server_rss_mb": {"first": _mb(self.server_rss_first), "last": _mb(self.server_rss_last),
                              "peak": _mb(self.server_rss_peak or None)},
            "server_open_fds": self.server_fds_last,
            "mcpfuzz_rss_mb": {"first": _mb(self.own_rss_first), "last": _mb(self.own_rss_last),
                               "peak": _mb(self.own_rss_peak or None)},
            "pings": self.pings, "pings_failed": self.pings_failed,
            "ping_ms": {"median": round(statistics.median(latencies), 2) if latencies else None,
                        "max": round(latencies[-1], 2) if latencies else None},
        }


class Monitor:
    """Called before each case (`Session.before_case`); samples on a clock, not per case.

    A process' series is judged by `memory-growth` once it has ended (the process was replaced, or the run is over:
    `finish`), never while it grows: a heap that warms up and then levels off must be seen levelling off.
    """

    def __init__(self, session: Session, options: MonitorOptions, on_failure: FailureSink,
                 on_sample: SampleSink | None = None) -> None:
        self.session = session
        self.options = options
        self.on_failure = on_failure
        self.on_sample = on_sample
        self.figures = MonitorFigures()
        self.leak_reported = False
        self._own = psutil.Process()
        self._sampler: ResourceSampler | None = None
        self._pid: int | None = None
        self._first_request = 0
        self._series: list[Sample] = []
        self._next_sample = 0.0
        self._next_ping = time.monotonic() + (options.ping_every or 0.0)

    async def __call__(self) -> None:
        now = time.monotonic()
        if now >= self._next_sample:
            self._next_sample = now + self.options.sample_every
            self.sample()
        if self.options.ping_every is not None and now >= self._next_ping:
            await self.ping()
            self._next_ping = time.monotonic() + self.options.ping_every

    def sample(self) -> None:
        """One sample of the server's process tree (a new series per process) and of mcpfuzz itself."""
        figures = self.figures
        own = self._own.memory_info().rss
        figures.own_rss_first = figures.own_rss_first or own
        figures.own_rss_last = own
        figures.own_rss_peak = max(figures.own_rss_peak, own)
        pid = self.session.server.pid
        if pid is None:
            return  # an HTTP server mcpfuzz did not start: its memory is not ours to read
        if pid != self._pid:
            # A fresh process starts small: mixing two lifetimes in one series would fake or hide growth.
            self._judge()  # the series of the process before it has ended
            self._pid, self._sampler, self._series = pid, ResourceSampler(pid), []
            self._first_request = self.session.wire.frames_sent
        assert self._sampler is not None
        sample = self._sampler.sample(self.session.wire.frames_sent - self._first_request)
        if sample is None:
            return
        figures.samples += 1
        figures.server_rss_first = figures.server_rss_first or sample.rss
        figures.server_rss_last = sample.rss
        figures.server_rss_peak = max(figures.server_rss_peak, sample.rss)
        figures.server_fds_last = sample.fds
        if self.on_sample is not None:
            self.on_sample(pid, sample)
        self._series.append(sample)
        if len(self._series) > MAX_SERIES:
            self._series = self._series[::2]

    def finish(self) -> None:
        """The run is over: the current process' series is judged, as it stands (once)."""
        self._judge()
        self._series = []

    def _judge(self) -> None:
        """The series so far judged whole; a leak becomes the run's one memory-growth finding."""
        if self.leak_reported or not self._series:
            return
        growth = judge_growth(self._series)
        if growth is None:
            return
        self.leak_reported = True  # one leak per run: every later sample would say the same
        first, last = self._series[0], self._series[-1]
        observed = (f"<{len(self._series)} samples of pid {self._pid}'s process tree over {last.t - first.t:.0f} s>",
                    f"<RSS {_mb(first.rss)} MB at request {first.requests}, {_mb(last.rss)} MB at request "
                    f"{last.requests}>")
        self.on_failure(MemoryGrowthFailure(growth), observed)

    async def ping(self) -> None:
        """A liveness request between cases; silence is a hang nothing sent just before explains."""
        session = self.session
        if not (session.alive and session.ready):
            return
        method, params = session.liveness_request()
        started = time.monotonic()
        self.figures.pings += 1
        try:
            await session.call(method, params, timeout=self.options.ping_timeout)
        except (HarnessError, TransportError) as error:
            session.forced_restart()  # the next case starts on a fresh server
            if not session.alive:
                return  # it exited between cases: nothing sent then explains it, and no-crash needs a frame
            self.figures.pings_failed += 1
            await session.server.kill()
            self.on_failure(NoHangFailure(
                Severity.HIGH, f"the server stopped answering the liveness {method} between cases ({error}), "
                f"after {session.wire.frames_sent} frames; the cases just before it were all answered", "liveness",
                server_wide=True), (f"<{method} unanswered within {self.options.ping_timeout:g}s>",))
            return
        self.figures.ping_ms.append((time.monotonic() - started) * 1000)


def release_free_memory() -> None:
    """Collect cycles and hand the C heap's free pages back to the OS (glibc's malloc_trim; elsewhere a no-op).

    A soak's live Python memory stays flat, but big transient values (a deep frame, a long tool
    argument, one Hypothesis search's test cases) leave free pages in the heap that RSS keeps counting.
    """
    gc.collect()
    trim = _malloc_trim()
    if trim is not None:
        trim(0)


@functools.cache
def _malloc_trim() -> Callable[[int], int] | None:
    if not sys.platform.startswith("linux"):
        return None
    try:
        return ctypes.CDLL("libc.so.6").malloc_trim
    except (OSError, AttributeError):  # musl and other C libraries have no malloc_trim
        return None


def _mb(size: int | None) -> float | None:
    return round(size / MIB, 1) if size else None
