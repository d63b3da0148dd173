"""2026-07-28 tasks that wait for input, and tasks/update: tests/servers/tasks_server.py with `asks-input` (a task is
`input_required` until a tasks/update answers its elicitation), each bug found by its oracle, the clean server by
none; over stdio and over streamable HTTP."""

from __future__ import annotations

import json

import pytest
from mcpfuzz.strategies.messages import FrameBuilder
from mcpfuzz.strategies.task_cases import STALE_KEY, STALE_RESPONSES, task_case

from mcpfuzz.engine.events import RunFinished
from mcpfuzz.jsonrpc.case_json import expectation_from_json, expectation_to_json
from mcpfuzz.jsonrpc.exchange import Exchange
from mcpfuzz.jsonrpc.parts.task import TaskCheck
from mcpfuzz.jsonrpc.task_check import TaskIdKind, TaskStep
from mcpfuzz.jsonrpc.versions import LATEST_MODERN, Era
from tests.test_tasks import LEGACY, found, tasks_run
from tests.test_tasks_http import tasks_over_http

pytestmark = pytest.mark.process


def updates(exchanges: list[Exchange]) -> list[dict]:
    """The params of every tasks/update the phase sent."""
    frames = [json.loads(e.case.data) for e in exchanges]
    return [frame["params"] for frame in frames if frame["method"] == "tasks/update"]


def test_update_cases_carry_input_responses_and_what_is_due() -> None:
    modern = FrameBuilder(Era.MODERN, LATEST_MODERN)
    stale = TaskCheck(TaskStep.UPDATE, TaskIdKind.VALID, "task-1", ("task-1",), method="tasks/update", stale_keys=True)
    case = task_case(modern, "tasks/update", stale, responses=STALE_RESPONSES)
    assert json.loads(case.data)["params"]["inputResponses"] == {STALE_KEY: {"action": "decline"}}
    assert case.expect.result_ok and not case.expect.codes
    assert expectation_from_json(expectation_to_json(case.expect)) == case.expect  # a transcript keeps stale_keys
    unknown = TaskCheck(TaskStep.UPDATE, TaskIdKind.UNKNOWN, "nope", method="tasks/update")
    refused = task_case(modern, "tasks/update", unknown)
    assert json.loads(refused.data)["params"]["inputResponses"] == {}
    assert refused.expect.codes == {-32602} and refused.expect.wrong_answer == "low"  # the extension: SHOULD
    undeclared = task_case(modern, "tasks/update", TaskCheck(TaskStep.UPDATE_UNDECLARED, TaskIdKind.VALID, "task-1"),
                           declared=False)
    assert undeclared.expect.codes == {-32021} and undeclared.expect.wrong_answer == "medium"  # MUST


def test_a_task_waiting_for_input_is_answered_through_tasks_update_and_the_clean_server_gives_no_finding() -> None:
    finished, exchanges = tasks_run("asks-input")
    assert finished.findings == ()
    sent = updates(exchanges)
    # The outstanding elicitation answered as an accepting client would, besides the stale key and the bad ids.
    assert any(set(params["inputResponses"]) == {"confirm-task-1"} and
               params["inputResponses"]["confirm-task-1"]["action"] == "accept" for params in sent)
    assert any(STALE_KEY in params["inputResponses"] for params in sent)
    gets = [json.loads(e.case.data) for e in exchanges if json.loads(e.case.data)["method"] == "tasks/get"]
    assert len(gets) >= 3


@pytest.mark.parametrize(("bugs", "expected"), [
    (("asks-input", "input-without-requests"), {("task-ids", "tasks/get", "medium")}),
    (("asks-input", "update-stale-key-crash"), {("no-crash", "tasks/update", "critical")}),
    (("asks-input", "update-undeclared"), {("task-ids", "tasks/update", "medium")}),
    (("update-unknown-acked",), {("task-ids", "tasks/update", "low")}),
], ids=["input-without-requests", "stale-key-crash", "update-undeclared", "update-unknown-acked"])
def test_each_task_input_bug_is_found(bugs: tuple[str, ...], expected: set[tuple[str, str, str]]) -> None:
    finished, _ = tasks_run(*bugs)
    assert found(finished) == expected


def test_a_legacy_task_waiting_for_input_is_fetched_through_tasks_result() -> None:
    """2025-11-25: tasks/result sends the elicitation (the session answers it as an accepting client) and ends with
    the task's result; no tasks/update in this era."""
    finished, exchanges = tasks_run("asks-input", version=LEGACY)
    assert finished.findings == () and updates(exchanges) == []
    fetched = [e for e in exchanges if json.loads(e.case.data)["method"] == "tasks/result"
               and json.loads(e.case.data)["params"].get("taskId") == "task-1"]
    assert fetched and [r.message.get("method") for r in fetched[0].server_requests] == ["elicitation/create"]
    assert [a.incoming.message["result"]["content"][0]["text"] for a in fetched[0].responses()] == ["0"]


def test_a_legacy_input_request_that_does_not_name_its_task() -> None:
    finished, _ = tasks_run("asks-input", "input-unrelated", version=LEGACY)
    assert found(finished) == {("task-ids", "tasks/result", "medium")}


def test_tasks_waiting_for_input_over_http() -> None:
    clean: tuple[RunFinished, list[Exchange]] = tasks_over_http("asks-input")
    assert clean[0].findings == () and updates(clean[1])
    missing, _ = tasks_over_http("asks-input", "input-without-requests")
    assert found(missing) == {("task-ids", "tasks/get", "medium")}
