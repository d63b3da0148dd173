"""Strategies behind a repr of a few bytes (Hypothesis copies a filtered strategy's repr into test cases)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from hypothesis import strategies as st

T = TypeVar("T")


def short_repr(strategy: st.SearchStrategy[T], name: str) -> st.SearchStrategy[T]:
    """The same values as `strategy`, shown as `name()`.

    Each time a filter rejects a draw, Hypothesis stores "Retried draw from <repr>" in that test case,
    and keeps thousands of test cases per search. The repr of a hypothesis-jsonschema object strategy
    runs to hundreds of KB, and a `sampled_from` of edge values to over 1 MB: a soak's RSS reached ~1 GB.
    """

    def draw_from(draw: Callable[[st.SearchStrategy[T]], T]) -> T:
        return draw(strategy)

    draw_from.__name__ = draw_from.__qualname__ = name
    return st.composite(draw_from)()

