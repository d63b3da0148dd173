"""Random frames in batches: an example holds several frames, each judged as its own case, fresh ids drawn per
frame; a crash among them is blamed on its one frame and shrinks to that frame alone; a correct server gives
nothing, with frames of fresh ids sharing pipelined windows."""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from typing import Any

import anyio
import pytest

from mcpfuzz.engine.events import PhaseName
from mcpfuzz.engine.judge import FindingSet, Verdict
from mcpfuzz.engine.searches.frame_fuzz import BATCH, FrameFuzz
from mcpfuzz.engine.searches.search import SearchOptions
from mcpfuzz.engine.session.session import Session, SessionOptions
from mcpfuzz.jsonrpc.exchange import Exchange
from mcpfuzz.jsonrpc.frame import Case
from mcpfuzz.oracles.base import Failure, all_oracles
from mcpfuzz.transport.stdio_target import StdioTarget
from tests.engine_runs import fixture_command
from tests.servers.mcp_server import CRASH_DEPTH, nesting

pytestmark = pytest.mark.process

ORACLES = tuple(all_oracles())
OPTIONS = SessionOptions(timeout=5.0, grace=0.05)  # generous: only a broken server waits this long


@dataclass
class BatchRun:
    """What a frame search did: each example's cases and the failure it returned, every exchange, the findings."""

    examples: list[tuple[list[Case], Failure | None]] = field(default_factory=list)
    exchanges: list[Exchange] = field(default_factory=list)
    findings: FindingSet = field(default_factory=FindingSet)
    windows: list[int] = field(default_factory=list)  # the size of each pipelined window sent
    restarts: int = 0


def search_family(command: list[str], family: str, *, examples: int, seed: int = 7) -> BatchRun:
    """One family's search on a fresh server, counted (max_examples), every example and window recorded."""
    record = BatchRun()

    def judge(phase: PhaseName, exchange: Exchange) -> list[Verdict]:
        record.exchanges.append(exchange)
        return record.findings.judge_all(exchange, ORACLES)

    async def main() -> None:
        with anyio.fail_after(240):  # a hang is a failure, not a stuck test run
            async with Session(StdioTarget(tuple(command)), OPTIONS) as session:
                await session.ensure_ready()
                frames = FrameFuzz(session, judge, SearchOptions(seed, None, "batches", max_examples=examples))
                send_all, example, run_window = frames._send_all, frames._example, session.run_window
                current: list[Case] = []

                def recorded_example(*args: Any) -> Any:
                    current.clear()
                    outcome = example(*args)
                    record.examples.append((list(current), outcome if isinstance(outcome, Failure) else None))
                    return outcome

                async def recorded(family: str, cases: list[tuple[Case, tuple[Any, ...]]], *args: Any) -> Any:
                    current.extend(case for case, _ in cases)
                    return await send_all(family, cases, *args)

                async def window(cases: Any) -> Any:
                    record.windows.append(len(cases))
                    return await run_window(cases)

                frames._example = recorded_example  # type: ignore[method-assign]
                frames._send_all = recorded  # type: ignore[method-assign]
                session.run_window = window  # type: ignore[method-assign]
                frames.mark_origin()
                await frames.fuzz_family(family, time.monotonic() + 200)
                record.restarts = session.restarts

    anyio.run(main)
    return record


def depth(case: Case) -> int:
    return nesting(json.loads(case.data))


@pytest.fixture(scope="module")
def crash_deep() -> BatchRun:
    return search_family(fixture_command("crash-deep"), "nesting", examples=10)


def test_a_crash_among_a_batch_of_frames_is_blamed_on_its_frame(crash_deep: BatchRun) -> None:
    """Frames before the crashing one in its example were sent and passed; the crash is on the deep frame only,
    and it ends its example (no frame after it is drawn)."""
    assert BATCH["nesting"] > 1
    crashed = [exchange for exchange in crash_deep.exchanges if exchange.crash is not None]
    assert crashed and all(depth(exchange.case) > CRASH_DEPTH for exchange in crashed)
    crashing = [(cases, failure) for cases, failure in crash_deep.examples
                if failure is not None and failure.oracle == "no-crash"]
    among = [cases for cases, _ in crashing
             if len(cases) > 1 and depth(cases[0]) <= CRASH_DEPTH]
    assert among, [[depth(case) for case in cases] for cases, _ in crashing]
    sent = {id(exchange.case) for exchange in crash_deep.exchanges}
    for cases, _ in crashing:
        assert all(id(case) in sent for case in cases)
        assert [depth(case) > CRASH_DEPTH for case in cases] == [False] * (len(cases) - 1) + [True]


def test_a_crash_in_a_batch_shrinks_to_that_one_frame(crash_deep: BatchRun) -> None:
    """After a crash among several frames, Hypothesis' shrunk example is that frame alone, the shallowest that
    crashes; the finding's reproducer is one crashing frame after the handshake, and it is the only finding."""
    failing = [cases for cases, failure in crash_deep.examples if failure is not None and failure.oracle == "no-crash"]
    batched = next(index for index, cases in enumerate(failing) if len(cases) > 1)
    assert any(len(cases) == 1 and depth(cases[0]) == CRASH_DEPTH + 1 for cases in failing[batched:]), \
        [[depth(case) for case in cases] for cases in failing]
    (finding,) = crash_deep.findings.all()
    assert (finding.oracle, finding.target, len(finding.frames)) == ("no-crash", "frames/nesting", 3)
    assert nesting(json.loads(finding.frames[-1])) > CRASH_DEPTH  # initialize, initialized, the deep frame


@pytest.mark.parametrize("family", [family for family, size in BATCH.items() if size > 1])
def test_batches_on_the_correct_server_find_nothing_and_share_windows(family: str) -> None:
    """Several frames per example, each judged, no finding, no restart of a crash; the plain families put
    frames in flight together."""
    # Twelve examples show every family's batches; nesting's first window (frames shallow enough to share one) comes
    # later in its seeded draws.
    record = search_family(fixture_command(), family, examples=40 if family == "nesting" else 12)
    assert sorted((f.oracle, f.message) for f in record.findings.all()) == []
    assert max(len(cases) for cases, _ in record.examples) > 1
    assert len(record.exchanges) > len(record.examples)
    # At most the one fresh process a frame with a written-in id asks for where other phases sent ids before.
    assert record.restarts <= 1
    if family in ("envelope", "nesting"):
        assert record.windows and max(record.windows) > 1
