"""The adversarial server's plans that once ended cases of mcpfuzz with an error of its own, each run again by
the real CLI: now each run ends in time with a verdict, and the report lists no internal error."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.adversarial_runs import run_plan, verdict_problems

pytestmark = pytest.mark.process

FOUND: dict[str, dict[str, Any]] = {
    # A hand-written server's errors with no id member, to frames with an id written in (the field's report).
    "answers-without-id": {"seed": 5, "tools": False, "grace": 4, "misbehaviours": {"no-id": 0.5}},
    # Requests of the server whose ids are 5,000-digit integers (and arrays, null, NaN...), answered by mcpfuzz.
    "server-requests-odd-ids": {"seed": 5, "tools": True, "grace": 4, "misbehaviours": {"server-request": 0.5}},
    # A plain JSON-RPC method's result holding a 5,000-digit integer, judged against its OpenRPC result schema.
    "plain-huge-result": {"seed": 5, "tools": True, "grace": 4, "plain": True,
                          "misbehaviours": {"huge-number": 0.5}},
}


# The fuzz phase alone where the earlier phases would spend the budget waiting on answers that never come.
PHASES = {"answers-without-id": ("--phases", "fuzz", "--timeout", "0.5")}


@pytest.mark.parametrize("name", sorted(FOUND))
def test_a_plan_that_found_an_error_of_mcpfuzz_now_ends_cleanly(name: str, tmp_path: Path) -> None:
    plan = FOUND[name]
    done, seconds, report = run_plan(plan, tmp_path, PHASES.get(name, ()))
    assert not verdict_problems(done, seconds, report), (json.dumps(plan), done.stderr[-3000:])
    data = json.loads(report.read_text())
    # The phases ran on (a run stopped at its first answer judges one or two cases); the bound stays far below what
    # a loaded machine judges in the budget (answers-without-id waits out its misbehaving answers: 18 to 26 cases).
    assert data["stats"]["cases"] > 5
