"""`memory-growth`: server memory that keeps growing with the number of requests (a leak).

Judged on a series of samples of the server's process tree (RSS against requests sent), not on one
exchange, and on the whole life of a process: the engine judges a series once it has ended (the run is
over, or the process was replaced), so a heap that climbs for a while and then levels off is judged with
its plateau in view. Method: drop a warm-up, then require all of
- a robust slope (Theil-Sen: the median of all pairwise slopes, which GC spikes, one-off steps and
  page-granular noise cannot drag) of at least `min_slope` bytes per request;
- a total growth over the window (that slope times the requests in it) of at least `min_growth`;
- a monotonic trend that is statistically significant (Mann-Kendall, the rank test that goes with
  Theil-Sen) over the window, so that a sawtooth or a random walk is not a leak;
- the same slope floor and a significant trend over the last third, so that memory which rose
  and then levelled off (caches filled, a heap sized up) is not a leak;
- the plateau model rejected: memory that warms up and levels off rises ever more slowly, so the slope
  of the window's late half falls well below its early half's (under `plateau_ratio` of it: a
  saturating curve whose remaining growth is bounded), where a leak keeps the same slope; the late
  half must also keep the slope floor.
A V8 process (Node.js, Deno) sizes its heap up lazily: its RSS climbs by tens of MB over its first
thousands of requests before the first full collection, then levels off (measured on the reference
TypeScript servers: +51 MB over 9,000 calls, +58 MB over 1,200 refused requests, flat after). Growth
within that says nothing, so for a tree that runs V8 the total growth must pass `v8_heap_warmup` too.
Until the series holds enough samples the oracle says nothing (a false positive costs more). Memory
that rises steadily to the very end of a run and only levels off later looks like a leak, and is
reported as one: only a longer run tells them apart. Sizes are binary: KB = 1024 bytes, MB = 1024 KB.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from statistics import median
from typing import Protocol

from mcpfuzz.jsonrpc.oracle_ids import OracleId
from mcpfuzz.oracles.base import Failure, Severity, register_run_check

KIB = 1024
MIB = 1024 * 1024
MAX_POINTS = 240  # Theil-Sen and Mann-Kendall are O(n^2): a long soak is thinned to this many samples


class RssPoint(Protocol):
    """One sample of a series (`mcpfuzz.engine.monitor.resources.Sample` is one)."""

    @property
    def t(self) -> float: ...
    @property
    def requests(self) -> int: ...
    @property
    def rss(self) -> int: ...
    # Optionally `v8: bool`: a process of the tree runs V8 (read with getattr, default False).


@dataclass(frozen=True)
class GrowthLimits:
    """What counts as a leak; the defaults catch ~100 KB per call within a minute and spare a clean server."""

    warmup_fraction: float = 0.2  # samples before this share of the requests are warm-up
    min_samples: int = 16  # after warm-up; fewer and the oracle stays silent
    min_tail_samples: int = 6  # the last third needs this many: a rank test on fewer cannot reach z_critical
    min_growth: int = 8 * MIB  # bytes over the window
    min_slope: float = 20 * KIB  # bytes per request
    tail_fraction: float = 1 / 3
    z_critical: float = 2.33  # one-sided Mann-Kendall test at about 1%
    v8_heap_warmup: int = 96 * MIB  # growth a V8 heap may take before its first full collection
    plateau_ratio: float = 0.5  # a late half rising slower than this share of the early half is levelling off


DEFAULT_LIMITS = GrowthLimits()


@dataclass(frozen=True)
class Growth:
    """The figures of one series after warm-up; `leaking` says whether they make a leak."""

    first_requests: int
    last_requests: int
    seconds: float
    start_rss: int  # observed at the first and last sample of the window
    end_rss: int
    slope: float  # bytes per request over the window (Theil-Sen)
    tail_slope: float  # the same over the last third
    trend_z: float  # Mann-Kendall z over the window (positive: rising)
    tail_z: float
    samples: int
    v8: bool = False  # the tree runs V8: its heap's warm-up is not a leak
    early_slope: float = 0.0  # bytes per request over the window's first half (Theil-Sen)
    late_slope: float = 0.0  # the same over its second half: the plateau model's test

    @property
    def requests(self) -> int:
        """Requests sent within the window."""
        return self.last_requests - self.first_requests

    @property
    def growth(self) -> float:
        """Bytes gained over the window according to the robust slope."""
        return self.slope * self.requests

    def leaking(self, limits: GrowthLimits = DEFAULT_LIMITS) -> bool:
        """Fast enough, large enough, steady, still rising at the end, and not levelling off."""
        floor = max(limits.min_growth, limits.v8_heap_warmup) if self.v8 else limits.min_growth
        return (self.slope >= limits.min_slope and self.growth >= floor
                and self.trend_z >= limits.z_critical
                and self.tail_slope >= limits.min_slope and self.tail_z >= limits.z_critical
                and not self.levelling_off(limits))

    def levelling_off(self, limits: GrowthLimits = DEFAULT_LIMITS) -> bool:
        """The plateau model fits: the late half rises under the slope floor, or far slower than the early half."""
        return self.late_slope < limits.min_slope or self.late_slope < limits.plateau_ratio * self.early_slope

    def message(self) -> str:
        """E.g. `RSS grew 38.2 MB over 400 requests (about 98 KB per request) and was still growing`."""
        return (f"the server's RSS (its whole process tree) grew {_mb(self.growth)} over {self.requests} requests "
                f"after warm-up (about {self.slope / KIB:.0f} KB per request; {_mb(self.start_rss)} to "
                f"{_mb(self.end_rss)} in {self.seconds:.0f} s) and was still growing at the end "
                f"(about {self.tail_slope / KIB:.0f} KB per request over the last third)")


class MemoryGrowthFailure(Failure):
    """A leak, with its figures."""

    oracle = OracleId.MEMORY_GROWTH.value
    title = "Server memory keeps growing"

    def __init__(self, growth: Growth) -> None:
        # High: a client sees nothing yet, but a long-lived server is heading for the OOM killer.
        super().__init__(Severity.HIGH, growth.message(), "leak", server_wide=True)
        self.growth = growth


def measure_growth(samples: Sequence[RssPoint], limits: GrowthLimits = DEFAULT_LIMITS) -> Growth | None:
    """The figures of a series after its warm-up, or None while it is too short to judge."""
    ordered = sorted(samples, key=lambda s: (s.requests, s.t))
    if not ordered:
        return None
    start = ordered[-1].requests * limits.warmup_fraction
    window = _thin([s for s in ordered if s.requests >= start])
    tail = window[len(window) - math.ceil(len(window) * limits.tail_fraction):]
    early, late = window[:len(window) // 2 + 1], window[len(window) // 2:]
    if (len(window) < limits.min_samples or len(tail) < limits.min_tail_samples
            or window[-1].requests == window[0].requests or tail[-1].requests == tail[0].requests):
        return None
    return Growth(
        first_requests=window[0].requests, last_requests=window[-1].requests,
        seconds=window[-1].t - window[0].t, start_rss=window[0].rss, end_rss=window[-1].rss,
        slope=theil_sen(window), tail_slope=theil_sen(tail),
        trend_z=mann_kendall_z(window), tail_z=mann_kendall_z(tail), samples=len(window),
        v8=any(getattr(s, "v8", False) for s in window),
        early_slope=theil_sen(early), late_slope=theil_sen(late),
    )


def judge_growth(samples: Sequence[RssPoint], limits: GrowthLimits = DEFAULT_LIMITS) -> Growth | None:
    """The growth of a series when it is a leak, else None."""
    growth = measure_growth(samples, limits)
    return growth if growth is not None and growth.leaking(limits) else None


def theil_sen(points: Sequence[RssPoint]) -> float:
    """Median of the slopes (bytes per request) of every pair with different request counts."""
    slopes = [(b.rss - a.rss) / (b.requests - a.requests)
              for i, a in enumerate(points) for b in points[i + 1:] if b.requests != a.requests]
    return median(slopes) if slopes else 0.0


def mann_kendall_z(points: Sequence[RssPoint]) -> float:
    """Mann-Kendall trend statistic of RSS over request order, as a z score (0 for no trend).

    Ties (RSS moves in whole pages, so a quiet server repeats values) count as neither rise nor fall;
    the variance is not corrected for them, which only makes the test more cautious.
    """
    n = len(points)
    s = sum(_sign(b.requests - a.requests) * _sign(b.rss - a.rss)
            for i, a in enumerate(points) for b in points[i + 1:])
    variance = n * (n - 1) * (2 * n + 5) / 18
    if variance == 0 or s == 0:
        return 0.0
    return (s - math.copysign(1, s)) / math.sqrt(variance)  # continuity correction


def _thin(points: list[RssPoint]) -> list[RssPoint]:
    """At most MAX_POINTS samples, evenly spread, always keeping the first and the last."""
    if len(points) <= MAX_POINTS:
        return points
    step = (len(points) - 1) / (MAX_POINTS - 1)
    return [points[round(i * step)] for i in range(MAX_POINTS)]


def _sign(value: float) -> int:
    return (value > 0) - (value < 0)


def _mb(size: float) -> str:
    return f"{size / MIB:.1f} MB"


# Judged on the series the engine samples (`judge_growth`), never on one exchange.
register_run_check(MemoryGrowthFailure, Severity.HIGH, "The server's memory (the RSS of its process tree) keeps "
                   "growing with the number of requests: steadily, significantly and still at the end of the run.")
