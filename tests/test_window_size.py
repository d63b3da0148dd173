"""How many calls of a target one window may hold: all it may, unless the target is slow for the session's timeout."""

from __future__ import annotations

import pytest

from mcpfuzz.engine.searches.caller import Caller
from mcpfuzz.engine.searches.search import SearchOptions
from mcpfuzz.engine.session.session import Session, SessionOptions
from mcpfuzz.engine.surface.targets import CallTarget
from mcpfuzz.transport.memory import MemoryTarget

pytestmark = pytest.mark.unit

LARGEST = 32


def caller(answers: list[float], *, max_examples: int | None = None, timeout: float = 10.0) -> Caller:
    """A caller (never started) whose target `t` was answered after each of `answers` seconds."""
    session = Session(MemoryTarget(lambda frame: None), SessionOptions(timeout=timeout))
    made = Caller(session, [], lambda phase, exchange: [], SearchOptions(1, None, "memory", max_examples))
    for seconds in answers:
        made.slow.note("t", seconds)
    return made


class Labelled:
    """Stands for a target: `window_size` reads its label only."""

    label = "t"


def size(made: Caller) -> int:
    target: CallTarget = Labelled()  # type: ignore[assignment]
    return made.window_size(target, LARGEST)


def test_a_target_not_yet_timed_or_fast_gets_the_largest_window() -> None:
    assert size(caller([])) == LARGEST
    assert size(caller([0.5] * 4)) == LARGEST  # four answers give no median yet
    assert size(caller([0.001] * 10)) == LARGEST


def test_a_slow_target_gets_what_fits_in_a_quarter_of_the_timeout() -> None:
    assert size(caller([0.5] * 10, timeout=10.0)) == 5
    assert size(caller([0.2, 0.3, 0.25, 0.25, 0.25], timeout=10.0)) == 10
    assert size(caller([4.0] * 10, timeout=10.0)) == 1  # one call at a time


def test_a_run_counted_by_examples_ignores_answer_times() -> None:
    """The same seed must send the same frames, whatever the answer times."""
    assert size(caller([0.5] * 10, max_examples=5)) == LARGEST
