"""A counted run (`--max-examples`) is not sliced by time and steers by no answer time; what is sent aside (a slow
answer timed again) takes harness ids of its own and stays out of --log-frames."""

from __future__ import annotations

import time
from pathlib import Path

import anyio
import pytest

from mcpfuzz.engine.plan.budget import Budget
from mcpfuzz.engine.searches.search import SearchOptions, slice_end, steers_by_time
from mcpfuzz.engine.session.session import HARNESS_FIRST_ID, Session, SessionOptions
from mcpfuzz.engine.session.wire import ASIDE_HARNESS_FIRST_ID
from mcpfuzz.transport.memory import MemoryTarget
from tests.test_memory_transport import OPTIONS, FakeServer, tools_list

pytestmark = pytest.mark.unit


def test_a_timed_budget_gives_shares_and_a_counted_one_gives_the_whole_deadline() -> None:
    timed, counted = Budget(100.0), Budget(100.0, counted=True)
    assert timed.share(0.3) < timed.deadline and timed.part(timed.deadline, 0.25) < timed.deadline
    assert counted.share(0.3) == counted.deadline and counted.part(counted.deadline - 10, 0.25) == counted.deadline - 10
    counted.reserve_calls(True)
    assert counted.protocol_deadline == counted.deadline  # the protocol phases are not cut short either


def test_a_counted_search_ends_at_its_count_not_at_a_share_of_the_time() -> None:
    deadline = time.monotonic() + 100
    timed, counted = SearchOptions(seed=1, database_root=None, server_label="s"), SearchOptions(
        seed=1, database_root=None, server_label="s", max_examples=10)
    assert slice_end(timed, deadline, 4) < deadline - 50
    assert slice_end(counted, deadline, 4) == deadline
    assert steers_by_time(timed) and not steers_by_time(counted)


def test_frames_sent_aside_take_ids_of_their_own_and_stay_out_of_the_frame_log(tmp_path: Path) -> None:
    log = tmp_path / "frames.log"
    server = FakeServer(lambda m: b'{"jsonrpc":"2.0","id":%d,"result":{"tools":[]}}' % m["id"])

    async def main() -> tuple[list[int], list[int]]:
        options = SessionOptions(timeout=OPTIONS.timeout, grace=OPTIONS.grace, frame_log=log)
        with anyio.fail_after(60):
            async with Session(MemoryTarget(server), options) as session:
                await session.ensure_ready()
                before = session.next_id()
                with session.aside():
                    aside = [session.next_id(), session.next_id()]
                    await session.run_case(tools_list())
                after = session.next_id()
                return [before, after], aside

    (before, after), aside = anyio.run(main)
    assert before > HARNESS_FIRST_ID and after == before + 1  # nothing aside moved the run's own ids
    assert aside == [ASIDE_HARNESS_FIRST_ID + 1, ASIDE_HARNESS_FIRST_ID + 2]
    logged = log.read_bytes()
    assert b'"tools/list"' not in logged and b'"initialize"' in logged
    assert any(frame.get("method") == "tools/list" for frame in server.frames)  # it was sent all the same
