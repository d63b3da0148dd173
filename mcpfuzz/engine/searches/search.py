"""One search loop for every Hypothesis search (frame families, call targets, call sequences).

A search is a series of rounds until its deadline: each round is one `@given` run with a seed of
its own (`derive_seed`), and a round that shrank a failure is followed by another that searches on.
The body of a search runs one example against the server and returns the failure Hypothesis should
shrink toward (`to_raise`), or None.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from hypothesis import strategies as st
from hypothesis.database import ExampleDatabase
from hypothesis.errors import HypothesisException

from mcpfuzz.engine.events import PhaseName
from mcpfuzz.engine.internal_errors import NoteInternal
from mcpfuzz.engine.judge import FindingKey, Verdict
from mcpfuzz.engine.searches.hypothesis_bridge import run_given
from mcpfuzz.oracles.base import Failure

if TYPE_CHECKING:
    from mcpfuzz.jsonrpc.exchange import Exchange

T = TypeVar("T")
# The run's judge: (phase, exchange) -> every verdict.
Judge = Callable[[PhaseName, "Exchange"], list[Verdict]]
# The body of a search: one example against the server, given the keys this round pursues.
Body = Callable[[T, set[FindingKey]], "Failure | None"]


class PhaseStopped(Exception):
    """The server could not be brought back; the search phases end early."""


@dataclass(frozen=True)
class SearchOptions:
    """What every search needs from the run's configuration."""

    seed: int
    database_root: Path | None
    server_label: str
    max_examples: int | None = None
    # --shared: a search's example database from its local folder (the folder and a shared twin).
    open_database: Callable[[Path], ExampleDatabase] | None = None
    # `run --workers N`: worker i > 0 searches the same targets with seeds of its own (worker 0 draws as a run
    # without workers does, so its frames and a corpus's seeds stay the same).
    worker: int = 0
    # Where an example that ended on an error of mcpfuzz's own is reported (the search then goes on); without
    # it the error ends the search.
    on_internal_error: NoteInternal | None = None


def slice_end(options: SearchOptions, deadline: float, searches_left: int) -> float:
    """When the next of `searches_left` searches sharing the time until `deadline` must end: an equal share of the
    time left, or with --max-examples the deadline itself (a search then ends at its count: a share of time would
    make a slower machine draw fewer examples, and the same seed would send other frames)."""
    if options.max_examples is not None:
        return deadline
    now = time.monotonic()
    return now + max(0.0, deadline - now) / max(1, searches_left)


def steers_by_time(options: SearchOptions) -> bool:
    """Whether a search may steer by answer times (toward slow inputs): not when its examples are counted, since
    answer times differ from one run to the next and the same seed must draw the same inputs."""
    return options.max_examples is None


def derive_seed(seed: int, *parts: object) -> int:
    """A 64-bit seed for one round of one search, from the run's seed and what names the round.

    The text joined with `|` is the contract: a run with the same seed and options draws the same
    inputs, so runs of earlier versions (and their corpora) are reproduced exactly.
    """
    text = "|".join(str(part) for part in (seed, *parts))
    return int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "big")


def database_key(*parts: object) -> str:
    """A short stable hash of what identifies a search's example database (server, target, schema)."""
    text = json.dumps(list(parts), sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def to_raise(judged: Sequence[Verdict], pursued: set[FindingKey]) -> Failure | None:
    """The failure Hypothesis should shrink: one first seen in this search (known ones are left alone)."""
    chosen = None
    for failure, key, finding in judged:
        if finding is not None:
            pursued.add(key)
        if key in pursued and chosen is None:
            chosen = failure
    return chosen


async def search(strategy: st.SearchStrategy[T], body: Body[T], *, options: SearchOptions, name: str,
                 deadline: float, epoch: int = 0, database: Path | None = None,
                 after_round: Callable[[], None] | None = None, label: str = "") -> None:
    """Rounds of `strategy` through `body` until the deadline, the space is exhausted, or --max-examples.

    `name` and `epoch` (a soak's slice number, 0 outside a soak) pick each round's seed, so no two
    slices of one target repeat their inputs. `after_round` may raise to end the search (a lost server).
    `label` names the search's cases in an internal error's note (`name` when empty).
    """
    limit = {"max_examples": options.max_examples} if options.max_examples else {}
    round_number = 0
    examples = options.open_database(database) if database is not None and options.open_database else database
    while time.monotonic() < deadline:
        pursued: set[FindingKey] = set()

        def one(value: Any, pursued: set[FindingKey] = pursued) -> Failure | None:
            try:
                return body(value, pursued)
            except (HypothesisException, PhaseStopped):
                raise  # Hypothesis' own control flow (reject), or the server lost: not a case's error
            except Exception as error:
                if options.on_internal_error is None:
                    raise
                # Never raised to Hypothesis, which would shrink mcpfuzz's bug as if it were the server's.
                options.on_internal_error(error, label or name)
                return None

        seed = derive_seed(options.seed, name, round_number, *((epoch,) if epoch else ()),
                           *((f"worker {options.worker}",) if options.worker else ()))
        outcome = await run_given(strategy, one, seed=seed, deadline=deadline, database=examples, **limit)
        if after_round is not None:
            after_round()
        if not outcome.go_on:
            return  # out of time, or Hypothesis has nothing new to try
        round_number += 1
