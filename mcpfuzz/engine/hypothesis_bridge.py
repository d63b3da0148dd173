"""Run a Hypothesis test against the live server: @given in a worker thread, I/O back on the event loop."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio.to_thread
from hypothesis import HealthCheck, Phase, Verbosity, given, settings
from hypothesis import seed as hypothesis_seed
from hypothesis import strategies as st
from hypothesis.database import DirectoryBasedExampleDatabase

# Hypothesis never stops on its own before the time slice ends; the slice is the limit.
MAX_EXAMPLES = 10_000_000


class OutOfTime(BaseException):
    """Raised inside the test body when the slice is spent; a BaseException so Hypothesis does not shrink it."""


@dataclass
class GivenOutcome:
    """How one @given run ended: "exhausted" (nothing new to try), "failed" (shrunk), "out-of-time"."""

    ended: str
    examples: int
    error: str = ""


def fuzz_settings(database: Path | None, max_examples: int = MAX_EXAMPLES) -> settings:
    """Explicit settings only: under CI=true Hypothesis' default profile would derandomize and drop the database."""
    return settings(
        database=DirectoryBasedExampleDatabase(str(database)) if database is not None else None,
        max_examples=max_examples,
        deadline=None,
        derandomize=False,
        phases=(Phase.reuse, Phase.generate, Phase.shrink),
        suppress_health_check=list(HealthCheck),
        verbosity=Verbosity.quiet,
        report_multiple_bugs=False,
        print_blob=False,
    )


def check_deadline(deadline: float) -> None:
    """Stop the Hypothesis run (without shrinking) once the slice is spent."""
    if time.monotonic() >= deadline:
        raise OutOfTime


async def run_given(strategy: st.SearchStrategy[Any], body: Callable[[Any], BaseException | None], *,
                    seed: int, deadline: float, database: Path | None,
                    max_examples: int = MAX_EXAMPLES) -> GivenOutcome:
    """Run `body` on values of `strategy` until a failure is shrunk, the space is exhausted, or `deadline`.

    `body` runs in the worker thread (draws happen there) and reaches the server through
    `anyio.from_thread.run`; it returns the failure to raise (Hypothesis then shrinks toward it) or
    None. Every example re-checks the deadline, so a slice overruns by one example at most.
    """
    examples = 0

    def test_body(value: Any) -> None:
        nonlocal examples
        check_deadline(deadline)
        examples += 1
        failure = body(value)
        if failure is not None:
            raise failure

    test = hypothesis_seed(seed)(fuzz_settings(database, max_examples)(given(strategy)(test_body)))

    def in_thread() -> GivenOutcome:
        try:
            test()
        except OutOfTime:
            return GivenOutcome("out-of-time", examples)
        except Exception as error:  # the shrunk failure, or Flaky when it did not reproduce
            return GivenOutcome("failed", examples, f"{type(error).__name__}: {error}"[:300])
        return GivenOutcome("exhausted", examples)

    return await anyio.to_thread.run_sync(in_thread)
