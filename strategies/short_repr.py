"""Strategies behind a repr of a few bytes (Hypothesis copies a filtered strategy's repr into test cases)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from hypothesis import strategies as st
from hypothesis.internal.conjecture.utils import combine_labels

T = TypeVar("T")
# Draws of the strategy before a filter gives up and the example is invalid (as Hypothesis' own filters do).
TRIES = 3


class Kept(st.SearchStrategy[T]):
    """Values of `strategy` that `keep` accepts, shown as `name()`: a filter whose repr is a few bytes.

    Each time a filter rejects a draw, Hypothesis stores "Retried draw from <repr>" in that test case,
    and keeps thousands of test cases per search. The repr of a hypothesis-jsonschema object strategy
    runs to hundreds of KB, and a `sampled_from` of edge values to over 1 MB: a soak's RSS reached ~1 GB.

    One layer where `.filter` over a composite wrapper (for the short repr) was two: every layer is a
    nested draw, which Hypothesis validates, checks for emptiness and records as a span. A rejected draw
    is drawn again, up to TRIES times, then the example is invalid, as with `filter`; no repr is kept.
    """

    def __init__(self, strategy: st.SearchStrategy[T], keep: Callable[[T], bool], name: str) -> None:
        super().__init__()
        self.strategy = strategy
        self.keep = keep
        self.name = name

    def __repr__(self) -> str:
        return f"{self.name}()"

    def calc_label(self) -> int:
        return combine_labels(self.class_label, self.strategy.label)

    def calc_is_empty(self, recur: Any) -> bool:
        return bool(recur(self.strategy))

    def do_validate(self) -> None:
        self.strategy.validate()

    def do_draw(self, data: Any) -> T:
        for _ in range(TRIES):
            value = data.draw(self.strategy)
            if self.keep(value):
                return value
        data.mark_invalid(f"no value of {self.name}() kept")
        raise AssertionError("mark_invalid returns only by raising")  # pragma: no cover
