"""Phases 3-5: coverage, fuzz and stateful calls of every selected tool, each call judged."""

from __future__ import annotations

import hashlib
import time
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

import anyio.from_thread
from hypothesis import strategies as st

from mcpfuzz.engine.events import PhaseName
from mcpfuzz.engine.judge import FindingKey
from mcpfuzz.engine.phases.hypothesis_bridge import check_deadline, run_given
from mcpfuzz.engine.phases.targets import ToolTarget
from mcpfuzz.engine.session.session import HarnessError, Session
from mcpfuzz.jsonrpc.exchange import Exchange
from mcpfuzz.jsonrpc.versions import Era
from mcpfuzz.oracles.base import Failure
from mcpfuzz.strategies.arguments.call import POSITIVE, ArgumentCall
from mcpfuzz.strategies.arguments.coverage import coverage_calls
from mcpfuzz.strategies.arguments.edges import edge_arguments
from mcpfuzz.strategies.arguments.harvest import harvest, substitute, takes_ids
from mcpfuzz.strategies.arguments.negative import negative_arguments
from mcpfuzz.strategies.arguments.tool_calls import TOOL_FAMILY, tool_call_case
from mcpfuzz.strategies.messages import FrameBuilder
from mcpfuzz.transport.errors import ServerStartError

# Tool-call ids live far above the catalogue's (100+) and the harness's (10000+).
TOOL_FIRST_ID = 2**32
MAX_SEQUENCE = 6
# Calls per Hypothesis example in the fuzz phase. Hypothesis spends about 1 ms on each example besides
# the draw (its engine, mutator and data tree); a list of calls pays it once for several. Measured on
# the clean test server: 2.6x the calls/s for a small schema, 1.4x for a 30-property one, and failures
# still shrink to one call (Hypothesis deletes the list's other elements first).
BATCH = 8
# Judge callback of the run: (phase, exchange, tool) -> [(failure, key, new finding or None)].
Judge = Callable[[PhaseName, Exchange, str | None], list]


class PhaseStopped(Exception):
    """The server could not be brought back; the tool phases end early."""


@dataclass
class ToolPhaseOptions:
    """What the tool phases need from the run's configuration."""

    seed: int
    strict_types: bool
    database_root: Path | None
    server_label: str
    max_examples: int | None = None


class ToolPhases:
    """Calls tools on the session and hands every exchange to the run's judge."""

    def __init__(self, session: Session, targets: list[ToolTarget], judge: Judge, options: ToolPhaseOptions) -> None:
        self.session = session
        self.targets = targets
        self.judge = judge
        self.options = options
        self.builder = FrameBuilder(session.era or Era.LEGACY, session.version, next_id=TOOL_FIRST_ID)
        self.calls = 0
        self.epoch = 0  # a soak's slice number: each slice of the same tool starts from another seed
        self._consumers = [target for target in targets if takes_ids(target.schema)]
        self._planned: list[tuple[ToolTarget, ArgumentCall]] | None = None

    async def call(self, phase: PhaseName, target: ToolTarget, call: ArgumentCall, *, family: str = TOOL_FAMILY,
                   history: tuple[bytes, ...] = ()) -> tuple[Exchange, list]:
        """One tools/call on a ready server, judged."""
        case = tool_call_case(self.builder, target.tool, call, family=family, history=history)
        try:
            exchange = await self.session.run_case(case)
        except (HarnessError, ServerStartError) as error:
            raise PhaseStopped(str(error)) from None
        self.calls += 1
        return exchange, self.judge(phase, exchange, target.name)

    # -- coverage ------------------------------------------------------------------------------

    async def coverage(self, deadline: float) -> int:
        """Every tool's deterministic calls, in order; returns how many were skipped for lack of time."""
        planned = self._coverage_plan()
        for index, (target, call) in enumerate(planned):
            if time.monotonic() >= deadline:
                return len(planned) - index
            await self.call(PhaseName.COVERAGE, target, call)
        return 0

    def coverage_size(self) -> int:
        """How many coverage calls there are (for the progress bar)."""
        return len(self._coverage_plan())

    def _coverage_plan(self) -> list[tuple[ToolTarget, ArgumentCall]]:
        """Every tool's coverage calls, computed once (each is validated against its schema)."""
        if self._planned is None:
            self._planned = [(t, c) for t in self.targets for c in coverage_calls(
                t.schema, t.plain, t.populated, strict_types=self.options.strict_types)]
        return self._planned

    # -- fuzz ----------------------------------------------------------------------------------

    async def fuzz(self, deadline: float) -> None:
        """One Hypothesis search per tool; the remaining time is shared fairly among the tools left."""
        for index, target in enumerate(self.targets):
            now = time.monotonic()
            if now >= deadline:
                return
            tool_deadline = now + (deadline - now) / (len(self.targets) - index)
            await self.fuzz_tool(target, tool_deadline)

    def _strategy(self, target: ToolTarget) -> st.SearchStrategy[ArgumentCall]:
        schema = target.schema
        valid = schema.positive.map(lambda arguments: ArgumentCall(POSITIVE, arguments, "valid arguments"))
        strategies = [valid, negative_arguments(schema, strict_types=self.options.strict_types),
                      edge_arguments(schema)]
        # The schema's own boundaries (bounds exactly, each enum value) as draws of their own: otherwise
        # hitting them depends on the constants Hypothesis happens to collect from loaded modules.
        boundaries = [call for planned, call in self._coverage_plan() if planned is target]
        if boundaries:
            strategies.append(st.sampled_from(boundaries))
        return st.one_of(strategies)

    async def fuzz_tool(self, target: ToolTarget, deadline: float) -> None:
        """One tool's search until the deadline; after a failure is shrunk, a new round searches on."""
        strategy = st.lists(self._strategy(target), min_size=1, max_size=BATCH)
        database = self._database(target)
        round_number = 0
        while time.monotonic() < deadline:
            pursued: set[FindingKey] = set()

            def body(calls: list[ArgumentCall], pursued: set[FindingKey] = pursued) -> Failure | None:
                return anyio.from_thread.run(self._call_batch, target, calls, pursued, deadline)

            outcome = await run_given(strategy, body, seed=self._seed(target.name, round_number),
                                      deadline=deadline, database=database, **self._limit())
            if not outcome.go_on:
                return  # out of time, or Hypothesis has nothing new to try
            round_number += 1

    async def _call_batch(self, target: ToolTarget, calls: list[ArgumentCall], pursued: set[FindingKey],
                          deadline: float) -> Failure | None:
        """One example's calls in order, in one hop to the event loop; the first failure ends it."""
        for call in calls:
            if time.monotonic() >= deadline:
                return None
            _, judged = await self.call(PhaseName.FUZZ, target, call)
            failure = to_raise(judged, pursued)
            if failure is not None:
                return failure
        return None

    # -- stateful ------------------------------------------------------------------------------

    async def stateful(self, deadline: float) -> None:
        """Sequences of calls across tools that reuse strings earlier results returned (ids above all)."""
        round_number = 0
        while time.monotonic() < deadline:
            pursued: set[FindingKey] = set()

            def body(data: Any, pursued: set[FindingKey] = pursued) -> Failure | None:
                return self._sequence(data, deadline, pursued)

            outcome = await run_given(st.data(), body, seed=self._seed("stateful", round_number),
                                      deadline=deadline, database=None, **self._limit())
            if not outcome.go_on:
                return
            round_number += 1

    def _sequence(self, data: Any, deadline: float, pursued: set[FindingKey]) -> Failure | None:
        """One sequence (runs in the Hypothesis thread; calls go through the event loop)."""
        pool: list[Any] = []
        history: list[bytes] = []
        process = self.session.process
        for step in range(data.draw(st.integers(2, MAX_SEQUENCE), label="steps")):
            check_deadline(deadline)
            # Once results have given ids back, favour the tools that take ids (3 times in 4).
            feed = pool and self._consumers and data.draw(st.integers(0, 3), label="feed") > 0
            target = data.draw(st.sampled_from(self._consumers if feed else self.targets), label="tool")
            arguments = data.draw(target.schema.positive, label="arguments")
            arguments = substitute(target.schema, arguments, pool, data)
            call = ArgumentCall(POSITIVE, arguments, f"step {step + 1} of a sequence")
            exchange, judged = anyio.from_thread.run(
                partial(self.call, PhaseName.STATEFUL, target, call, history=tuple(history)))
            failure = to_raise(judged, pursued)
            if failure is not None:
                return failure
            if self.session.process != process or exchange.crash is not None:
                return None  # a new process: the sequence's state is gone
            history.append(exchange.case.data)
            pool = harvest(exchange, pool)
        return None

    # -- helpers -------------------------------------------------------------------------------

    def _limit(self) -> dict[str, int]:
        """--max-examples caps each search by count (runs that must send the same frames every time)."""
        return {"max_examples": self.options.max_examples} if self.options.max_examples else {}

    def _seed(self, name: str, round_number: int) -> int:
        text = f"{self.options.seed}|{name}|{round_number}" + (f"|{self.epoch}" if self.epoch else "")
        return int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "big")

    def _database(self, target: ToolTarget) -> Path | None:
        root = self.options.database_root
        return root / target.digest(self.options.server_label) if root is not None else None


def to_raise(judged: list, pursued: set[FindingKey]) -> Failure | None:
    """The failure Hypothesis should shrink: one first seen in this search (known ones are left alone)."""
    chosen = None
    for failure, key, finding in judged:
        if finding is not None:
            pursued.add(key)
        if key in pursued and chosen is None:
            chosen = failure
    return chosen
