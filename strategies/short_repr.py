"""Strategies behind a repr of a few bytes (Hypothesis copies a filtered strategy's repr into test cases)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from hypothesis import reject
from hypothesis import strategies as st

T = TypeVar("T")
# Draws of the strategy before a filter gives up and the example is invalid (as Hypothesis' own filters do).
TRIES = 3


def named_composite(name: str, body: Callable[[st.DrawFn], T]) -> st.SearchStrategy[T]:
    """`st.composite(body)()` whose repr is `name()`: the body is a closure, so no argument enters the repr.

    A composite's repr is its function's name and arguments; the name is set before `st.composite` copies it.
    Hypothesis labels a composite's spans by its function's code and defaults (its mutator copies spans
    between draws of one label), so the name is also a default: composites of different names differ.
    """
    if not name.isidentifier():
        raise ValueError(f"a strategy name must be a Python identifier, not {name!r}")

    def draw_named(draw: st.DrawFn, strategy_name: str = name) -> T:
        return body(draw)

    draw_named.__name__ = draw_named.__qualname__ = name
    return st.composite(draw_named)()


def kept(strategy: st.SearchStrategy[T], keep: Callable[[T], bool], name: str) -> st.SearchStrategy[T]:
    """Values of `strategy` that `keep` accepts, shown as `name()`: a filter whose repr is a few bytes.

    Each time `.filter` rejects a draw, Hypothesis stores "Retried draw from <repr>" in that test case,
    and keeps thousands of test cases per search. The repr of a hypothesis-jsonschema object strategy
    runs to hundreds of KB, and a `sampled_from` of edge values to over 1 MB: a soak's RSS reached ~1 GB.
    A rejected draw is drawn again, up to TRIES times, then the example is invalid (`reject`), as with
    `.filter`; no repr is kept. A composite cannot tell whether it is empty, so an empty `strategy` gives
    `st.nothing()` (callers ask `is_empty`).
    """
    if strategy.is_empty:
        return st.nothing()

    def draw_kept(draw: st.DrawFn) -> T:
        for _ in range(TRIES):
            value = draw(strategy)
            if keep(value):
                return value
        reject()
        raise AssertionError("reject returns only by raising")  # pragma: no cover

    return named_composite(name, draw_kept)

