"""Searches are cut into rounds of ROUND_EXAMPLES examples, so Hypothesis' memory per run stays bounded."""

from __future__ import annotations

import os
import sys
import time
from typing import Any

import anyio
import psutil
import pytest
from hypothesis import reject
from hypothesis import strategies as st

from mcpfuzz.engine.config import RunConfig
from mcpfuzz.engine.events import CaseDone
from mcpfuzz.engine.plan.target_phases import FuzzPhase
from mcpfuzz.engine.runner import run
from mcpfuzz.engine.searches import hypothesis_bridge, search
from mcpfuzz.engine.searches.hypothesis_bridge import ROUND_EXAMPLES, GivenOutcome, run_given
from mcpfuzz.oracles.base import all_oracles
from tests.conftest import SERVERS_DIR

pytestmark = pytest.mark.slow


def given_once(strategy: st.SearchStrategy[Any], body: Any = lambda value: None, **limit: int) -> GivenOutcome:
    async def main() -> GivenOutcome:
        return await run_given(strategy, body, seed=1, deadline=time.monotonic() + 60, database=None, **limit)

    return anyio.run(main)


def test_a_round_ends_after_its_examples_and_says_the_search_may_go_on() -> None:
    outcome = given_once(st.integers())
    assert (outcome.ended, outcome.examples, outcome.go_on) == ("round-done", ROUND_EXAMPLES, True)


def test_rejected_examples_do_not_count_toward_the_round() -> None:
    outcome = given_once(st.integers(), lambda value: reject() if value % 2 else None)
    assert outcome.ended == "round-done" and outcome.examples > ROUND_EXAMPLES


def test_an_exhausted_space_or_the_users_cap_ends_the_search() -> None:
    exhausted = given_once(st.booleans())
    assert (exhausted.ended, exhausted.go_on) == ("exhausted", False) and exhausted.examples <= 2
    capped = given_once(st.integers(), max_examples=ROUND_EXAMPLES)  # --max-examples: no further rounds
    assert (capped.ended, capped.examples, capped.go_on) == ("exhausted", ROUND_EXAMPLES, False)


def test_a_long_tool_search_goes_on_round_after_round_and_mcpfuzz_stays_small(monkeypatch: Any) -> None:
    """One tool searched in rounds of 50 examples until four rounds are done: round after round (new
    seeds), and mcpfuzz's RSS does not climb with them. The run ends when that much work is done, not
    after a fixed time (a loaded machine takes longer; the budget is only a bound). The random frames
    that start a fuzz phase get no time: the tool's search is what is looked at.

    Without rounds one Hypothesis run kept every example: 120 -> 300 MB over 8,000 calls of this tool.
    """
    monkeypatch.setattr(hypothesis_bridge, "ROUND_EXAMPLES", int(os.environ.get("ROUNDS_OF", "50")))
    rounds: list[int] = []
    original = search.derive_seed

    def seed(run_seed: int, name: str, round_number: int, *parts: object) -> int:
        if name == "search":
            rounds.append(round_number)
        return original(run_seed, name, round_number, *parts)

    rss: list[float] = []  # mcpfuzz's own RSS after every 100 calls of the tool
    calls = 0
    own = psutil.Process()
    enough = anyio.Event()

    def emit(event: object) -> None:
        nonlocal calls
        if isinstance(event, CaseDone) and event.exchange.case.family == "tool":
            calls += 1
            if calls % 100 == 0:
                rss.append(own.memory_info().rss / 2**20)
            if rounds and max(rounds) >= 3 and len(rss) >= 6:
                enough.set()

    monkeypatch.setattr(search, "derive_seed", seed)
    monkeypatch.setattr(FuzzPhase, "frames_share", 0.0)
    config = RunConfig(command=[sys.executable, str(SERVERS_DIR / "tool_server.py")], seed=3, budget=100,
                       oracles=tuple(all_oracles()), phases=("probe", "fuzz"), corpus=None,
                       exclude_targets=tuple(f"tool/{name}" for name in (
                           "create_item", "get_item", "delete_item", "schedule", "tree_sum", "measure")))
    # the tool "search" alone; purge_all and fetch_page are skipped

    async def main() -> None:
        async with anyio.create_task_group() as group:
            async def stop_when_enough() -> None:
                await enough.wait()
                group.cancel_scope.cancel()

            group.start_soon(stop_when_enough)
            finished = await run(config, emit)
            assert not finished.error, finished.error
            group.cancel_scope.cancel()

    anyio.run(main)
    assert max(rounds) >= 3, (rounds, calls)
    # Level once warm: the last figure within 15 MB of the one after the first round's worth of calls.
    assert len(rss) >= 6 and rss[-1] - rss[len(rss) // 3] < 15, [round(r) for r in rss]
