"""`mcpfuzz run` against a server that misbehaves as a Hypothesis-drawn plan says (tests/servers/adversarial.py):
whatever the server does, mcpfuzz ends within its budget (and 10 s) with a verdict, and no error of its own.

A failure prints the plan and the seed: `python tests/servers/adversarial.py PLAN` is the server, and the
command line printed runs mcpfuzz on it the same way.
"""

from __future__ import annotations

import json
import shlex
import threading
from typing import Any

import anyio
import anyio.to_thread
import pytest
from hypothesis import HealthCheck, given, settings

from mcpfuzz.engine.searches.hypothesis_bridge import OutOfTime, on_loop
from tests.adversarial_runs import EXAMPLES, SEED, command_of, plans, run_plan, served, verdict_problems

pytestmark = pytest.mark.slow

# Each plan's run spends its whole budget, split among all the phases as in any run: how long it is changes nothing
# of the promise judged (the budget kept, a verdict, no error of mcpfuzz's).
PLAN_BUDGET = 4.0


@settings(max_examples=EXAMPLES, derandomize=True, deadline=None, database=None,
          suppress_health_check=list(HealthCheck))
@given(plan=plans)
def test_mcpfuzz_ends_every_run_on_an_adversarial_server_in_time_with_a_verdict(plan: dict[str, Any],
                                                                                 tmp_path_factory: Any) -> None:
    folder = tmp_path_factory.mktemp("adversary")
    done, seconds, report = run_plan(plan, folder, budget=PLAN_BUDGET)
    problems = verdict_problems(done, seconds, report, PLAN_BUDGET)
    assert not problems, (
        f"{'; '.join(problems)}\nplan: {json.dumps(plan)}\nmcpfuzz seed: {SEED}\n"
        f"command: {shlex.join(command_of(served(plan), report, folder / 'corpus', budget=PLAN_BUDGET))}"
        f"\nexit {done.returncode} after {seconds:.1f}s\nstderr (tail):\n{done.stderr[-3000:]}")


def test_a_call_to_the_loop_after_the_search_was_cancelled_is_out_of_time_not_a_hang() -> None:
    """The Hypothesis thread asks the event loop for a step just after the budget cancelled the search: the step is
    not started (started in a scope cancelled earlier, its first lock waited forever for a cancellation never
    handed to it; seen on the plain server that answers twice, one run in a dozen)."""
    outcome: dict[str, str] = {}

    async def step() -> str:
        async with anyio.Lock():  # as a frame's send takes the write lock
            return "sent"

    async def search() -> None:
        started, cancelled = threading.Event(), threading.Event()

        def in_thread() -> None:
            started.set()
            cancelled.wait(30)
            try:
                outcome["step"] = on_loop(step)
            except OutOfTime:
                outcome["step"] = "out of time"

        with anyio.CancelScope() as scope:
            async with anyio.create_task_group() as group:
                async def cancel_then_ask() -> None:
                    while not started.is_set():  # the search's thread runs
                        await anyio.sleep(0.01)
                    scope.cancel()
                    with anyio.CancelScope(shield=True):
                        await anyio.sleep(0.2)  # the cancellation delivered before the thread asks
                    cancelled.set()

                group.start_soon(cancel_then_ask)
                await anyio.to_thread.run_sync(in_thread)

    loop = threading.Thread(target=anyio.run, args=(search,), daemon=True)
    loop.start()
    loop.join(60)
    assert not loop.is_alive(), "the step waited for a cancellation that never came"
    assert outcome == {"step": "out of time"}
