"""Time shares belong to the phases: each declares its own, the call sequences keep for the phases after them in
the plan what those declare, and the budget sums it."""

from __future__ import annotations

import pytest

from mcpfuzz.engine.plan.budget import Budget
from mcpfuzz.engine.plan.phase import KeepsTime
from mcpfuzz.engine.plan.plans import JSONRPC_PLAN, RUN_PLAN, WORKER_PLAN
from mcpfuzz.engine.plan.target_phases import StatefulPhase

pytestmark = pytest.mark.unit


def test_the_phases_that_keep_time_come_after_the_call_sequences_of_the_run() -> None:
    names = [phase.name for phase in RUN_PLAN]
    keeping = [phase.name for phase in RUN_PLAN if isinstance(phase, KeepsTime)]
    assert sorted(keeping) == ["client", "flight", "tasks"]
    stateful = names.index(StatefulPhase().name)
    assert all(names.index(name) > stateful for name in keeping)


def test_a_plan_without_those_phases_keeps_no_time_for_them() -> None:
    """A worker and a plain JSON-RPC run never run the flight, client or tasks phases: nothing is kept for them."""
    for plan in (WORKER_PLAN, JSONRPC_PLAN):
        assert not [phase for phase in plan if isinstance(phase, KeepsTime)]


def test_the_budget_sums_the_shares_declared() -> None:
    assert Budget.kept([]) == 0.0
    assert Budget.kept([0.25, 0.2, 0.15]) == pytest.approx(0.6)
