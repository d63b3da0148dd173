"""`mcpfuzz run` against a server that misbehaves as a Hypothesis-drawn plan says (tests/servers/adversarial.py):
whatever the server does, mcpfuzz ends within its budget (and 10 s) with a verdict, and no error of its own.

A failure prints the plan and the seed: `python tests/servers/adversarial.py PLAN` is the server, and the
command line printed runs mcpfuzz on it the same way.
"""

from __future__ import annotations

import json
import shlex
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings

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
