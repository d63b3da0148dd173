"""How long each target usually takes to answer, and which answers are far slower (the `slow-input` oracle's
limit; the fuzz phase's latency target that steers Hypothesis toward slow inputs)."""

from __future__ import annotations

import math
import os
from dataclasses import dataclass, field
from statistics import median

from mcpfuzz.jsonrpc.exchange import ID_CURRENT, Exchange

SLOW_FLOOR = 1.0  # seconds: nothing faster is slow, whatever the target's median
SLOW_FACTOR = 20.0  # times the target's median answer
# Times a slow call is sent again, each time between two calls of its target's simplest arguments, and must be far
# slower than both: a stall of a loaded machine spans one call, and a machine slow all along slows the neighbours.
SLOW_CONFIRMATIONS = 2
BESIDE_FACTOR = 5.0  # times the slower of a repeat's two neighbours that the repeat must take
MIN_SAMPLES = 5  # answered calls of a target before its median means anything
MAX_SAMPLES = 64  # per target: the first answers, bounded for a long soak
# Below this, an answer's time is noise to Hypothesis: no latency target is reported, so a fast server's searches
# draw exactly what they drew without one (the same seed, the same frames).
TARGET_FLOOR = 0.25
def latency_target_on() -> bool:
    """False only for benchmarks/slow_steering.py's blind runs (MCPFUZZ_LATENCY_TARGET=0), read when used."""
    return os.environ.get("MCPFUZZ_LATENCY_TARGET", "1") != "0"
# A frame longer than this carries a big input, which may take long in proportion: a blow-up is a small input.
MAX_INPUT = 4096


def answer_seconds(exchange: Exchange) -> float | None:
    """When the call's own answer came (seconds after it was sent), or None when it got none."""
    answer = next((arrival for arrival in exchange.responses() if arrival.id_tag == ID_CURRENT), None)
    return answer.at if answer is not None and exchange.crash is None else None


@dataclass
class SlowWatch:
    """Each target's answer times; `limit` says from when an answer is far slower than the target's usual."""

    samples: dict[str, list[float]] = field(default_factory=dict)

    def note(self, label: str, seconds: float) -> None:
        """Keep one answer time of the target (the first MAX_SAMPLES)."""
        times = self.samples.setdefault(label, [])
        if len(times) < MAX_SAMPLES:
            times.append(seconds)

    def usual(self, label: str) -> float | None:
        """The target's median answer time, once MIN_SAMPLES answers give one."""
        times = self.samples.get(label, ())
        return median(times) if len(times) >= MIN_SAMPLES else None

    def limit(self, label: str) -> float | None:
        """Seconds past which an answer of the target is slow, once MIN_SAMPLES answers give a median."""
        usual = self.usual(label)
        return None if usual is None else max(SLOW_FLOOR, SLOW_FACTOR * usual)

    def suspect(self, label: str, exchange: Exchange) -> bool:
        """Whether the call of `exchange` (a small input) was answered past the limit of its target, `label`."""
        return len(exchange.case.data) <= MAX_INPUT and self.is_slow(label, answer_seconds(exchange))

    def is_slow(self, label: str, seconds: float | None) -> bool:
        """Whether an answer after `seconds` is past the target's limit."""
        limit = self.limit(label)
        return limit is not None and seconds is not None and seconds >= limit


def slow_beside(seconds: float | None, limit: float, before: float | None, after: float | None) -> bool:
    """Whether an answer after `seconds` is slow next to the target's simplest call timed just `before` and just
    `after` it: past `limit`, both neighbours answered within half of it, and BESIDE_FACTOR times the slower one."""
    if seconds is None or before is None or after is None:
        return False
    neighbours = max(before, after)
    return seconds >= limit and neighbours < limit / 2 and seconds >= BESIDE_FACTOR * neighbours


def own_seconds(seconds: float | None, starved: float) -> float | None:
    """An answer's time less `starved`, the seconds the server waited for a CPU meanwhile (never below zero)."""
    return None if seconds is None else max(0.0, seconds - starved)


def latency_score(seconds: float) -> float | None:
    """What the fuzz phase reports to Hypothesis' `target()` for its slowest answer: tenths of a second, None
    below TARGET_FLOOR (steady scores: timing jitter must not decide what is drawn next)."""
    if not latency_target_on() or not math.isfinite(seconds) or seconds < TARGET_FLOOR:
        return None
    return round(seconds, 1)
