"""Repeated measurements, their median and spread, ratios between them, and targets met or missed."""

from __future__ import annotations

import statistics
from dataclasses import dataclass, field

LABEL_WIDTH = 58


@dataclass
class Figure:
    """One measured quantity, once per repetition."""

    label: str
    unit: str
    digits: int = 0
    values: list[float] = field(default_factory=list)

    @property
    def median(self) -> float:
        """The median of the repetitions (NaN before any)."""
        return statistics.median(self.values) if self.values else float("nan")

    def line(self) -> str:
        """`label  median unit  (min .., max .., n=..)`."""
        if not self.values:
            return f"{self.label:<{LABEL_WIDTH}} {'-':>10}"
        spread = f"(min {min(self.values):,.{self.digits}f}, max {max(self.values):,.{self.digits}f}, " \
                 f"n={len(self.values)})"
        return f"{self.label:<{LABEL_WIDTH}} {self.median:>10,.{self.digits}f} {self.unit:<8} {spread}"


def ratio(label: str, top: Figure, bottom: Figure) -> Figure:
    """Per-repetition ratio in percent: both figures were measured in the same repetition, so noise cancels."""
    values = [100.0 * a / b for a, b in zip(top.values, bottom.values, strict=False) if b > 0]
    return Figure(label, "%", 1, values)


@dataclass
class Target:
    """A goal of the issue, measured against: printed, never asserted."""

    goal: str
    measured: str
    met: bool | None  # None: not measured in this run

    def line(self) -> str:
        """`goal  measured  met|MISSED|not measured`."""
        verdict = "not measured" if self.met is None else ("met" if self.met else "MISSED")
        return f"{self.goal:<{LABEL_WIDTH}} {self.measured:<28} {verdict}"


def megabytes(size: int) -> str:
    """Bytes as MB (10**6)."""
    return f"{size / 1e6:,.0f} MB"
