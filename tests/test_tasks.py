"""The tasks extension: tests/servers/tasks_server.py in both eras, each bug found by its oracle, the clean server by
none; the case builders and the oracle on hand-built answers; a server without tasks skips the phase."""

from __future__ import annotations

import json
import sys

import anyio
import pytest
from mcpfuzz.strategies.messages import FrameBuilder
from mcpfuzz.strategies.task_cases import UNKNOWN_TASK_ID, call_case, malformed_id, task_case

from mcpfuzz.engine.config import RunConfig
from mcpfuzz.engine.events import CaseDone, Event, PhaseName, RunFinished
from mcpfuzz.engine.runner import run
from mcpfuzz.jsonrpc.case_json import expectation_from_json, expectation_to_json
from mcpfuzz.jsonrpc.exchange import Exchange
from mcpfuzz.jsonrpc.parts.task import TaskCheck
from mcpfuzz.jsonrpc.task_check import TASKS_EXTENSION, TaskIdKind, TaskStep
from mcpfuzz.jsonrpc.versions import LATEST_MODERN, Era
from mcpfuzz.oracles.base import all_oracles
from tests.client_runs import SDK_SERVERS, node_ready
from tests.engine_runs import MCP_SERVER, SERVERS

pytestmark = pytest.mark.slow

TASKS_SERVER = SERVERS / "tasks_server.py"
LEGACY = "2025-11-25"


def tasks_run(*bugs: str, version: str | None = None, server: str = str(TASKS_SERVER), node: bool = False
              ) -> tuple[RunFinished, list[Exchange]]:
    """A short run (probe, coverage, then the tasks phase) with every oracle; the tasks phase's exchanges."""
    events: list[Event] = []
    command = ["node" if node else sys.executable, server, *(arg for bug in bugs for arg in ("--bug", bug))]
    config = RunConfig(command=command, seed=1, timeout=5.0, budget=40.0, oracles=tuple(all_oracles()),
                       phases=("probe", "coverage"), protocol_version=version)
    finished = anyio.run(run, config, events.append)
    assert not finished.error, finished.error
    return finished, [e.exchange for e in events if isinstance(e, CaseDone) and e.phase == PhaseName.TASKS]


def found(finished: RunFinished) -> set[tuple[str, str, str]]:
    """(oracle, target, severity) of every finding that failed again on a fresh server."""
    return {(f.oracle, f.target, f.severity.name.lower()) for f in finished.findings if f.reproducible is not False}


def test_case_builders_declare_the_extension_per_era() -> None:
    modern = FrameBuilder(Era.MODERN, LATEST_MODERN)
    params = json.loads(call_case(modern, "double", {"n": 1}).data)["params"]
    assert params["_meta"]["io.modelcontextprotocol/clientCapabilities"] == {"extensions": {TASKS_EXTENSION: {}}}
    plain = json.loads(call_case(modern, "double", {"n": 1}, declared=False).data)["params"]
    assert plain["_meta"]["io.modelcontextprotocol/clientCapabilities"] == {}
    legacy = FrameBuilder(Era.LEGACY, LEGACY)
    assert json.loads(call_case(legacy, "double", {"n": 1}).data)["params"]["task"] == {"ttl": 60000}
    assert malformed_id(TaskIdKind.WRONG_TYPE, "task-12") == 12
    assert malformed_id(TaskIdKind.UNKNOWN, "task-1") == UNKNOWN_TASK_ID
    assert len(malformed_id(TaskIdKind.HUGE, None)) == 4096
    missing = task_case(legacy, "tasks/get", TaskCheck(TaskStep.GET, TaskIdKind.MISSING))
    assert json.loads(missing.data)["params"] == {} and missing.expect.codes == {-32602}


def test_what_is_due_follows_the_spec_words() -> None:
    modern, legacy = FrameBuilder(Era.MODERN, LATEST_MODERN), FrameBuilder(Era.LEGACY, LEGACY)
    unknown = TaskCheck(TaskStep.CANCEL, TaskIdKind.UNKNOWN, UNKNOWN_TASK_ID)
    # The extension: -32602 is a SHOULD for tasks/cancel (low), a MUST in 2025-11-25 (medium).
    assert task_case(modern, "tasks/cancel", unknown).expect.wrong_answer == "low"
    assert task_case(legacy, "tasks/cancel", unknown).expect.wrong_answer == "medium"
    removed = TaskCheck(TaskStep.REMOVED, TaskIdKind.VALID, "task-1")
    assert task_case(modern, "tasks/result", removed).expect.codes == {-32601}
    assert task_case(modern, "tasks/list", removed).expect.wrong_answer == "low"
    valid = TaskCheck(TaskStep.GET, TaskIdKind.VALID, "task-1", ("task-1",), cancel_acked=True)
    case = task_case(modern, "tasks/get", valid, history=(b"{}",))
    assert case.expect.result_ok and case.expect.error_ok and case.history == (b"{}",)
    assert expectation_from_json(expectation_to_json(case.expect)) == case.expect


@pytest.mark.parametrize("version", [None, LEGACY], ids=["2026-07-28", "2025-11-25"])
def test_the_clean_server_gives_no_finding(version: str | None) -> None:
    finished, exchanges = tasks_run(version=version)
    assert finished.findings == ()
    methods = {json.loads(e.case.data)["method"] for e in exchanges}
    assert {"tools/call", "tasks/get", "tasks/cancel"} <= methods
    assert ("tasks/list" in methods) is (version is None)


@pytest.mark.parametrize(("bugs", "version", "expected"), [
    (("unknown-returns-other",), None, {("task-ids", "tasks/get", "high"), ("task-ids", "tasks/get", "medium")}),
    (("unknown-returns-other",), LEGACY, {("task-ids", "tasks/get", "high"), ("task-ids", "tasks/get", "medium")}),
    (("removed-method",), None, {("task-ids", "tasks/result", "medium")}),
    (("malformed-crash",), None, {("no-crash", "tasks/get", "critical")}),
    (("cancel-ignored",), LEGACY, {("task-ids", "tasks/get", "high")}),
    (("cancel-ignored",), None, set()),  # 2026-07-28: cancellation is eventually consistent
], ids=["other-task-modern", "other-task-legacy", "removed-method", "malformed-crash", "cancel-ignored-legacy",
        "cancel-ignored-modern"])
def test_each_bug_is_found_by_its_oracle(bugs: tuple[str, ...], version: str | None,
                                         expected: set[tuple[str, str, str]]) -> None:
    finished, _ = tasks_run(*bugs, version=version)
    assert found(finished) == expected


def test_a_task_for_a_client_that_did_not_declare_the_extension() -> None:
    finished, _ = tasks_run("ignores-capability")
    assert ("task-ids", "tool/double", "high") in found(finished)


@pytest.mark.parametrize(("version", "severity"), [(None, "LOW"), (LEGACY, "HIGH")], ids=["2026-07-28", "2025-11-25"])
def test_a_cancelled_task_that_completes(version: str | None, severity: str) -> None:
    # Seen only after the task's work is done (2 s after it started), so a fresh server may not show it again.
    finished, _ = tasks_run("cancelled-completes", version=version)
    assert [(f.oracle, f.target, f.severity.name) for f in finished.findings] == [("task-ids", "tasks/get", severity)]


def test_a_server_without_tasks_skips_the_phase() -> None:
    finished, exchanges = tasks_run(server=str(MCP_SERVER))
    assert exchanges == []
    assert finished.stats.plan is not None
    tasks = [phase for phase in finished.stats.plan["phases"] if phase["name"] == "tasks"]
    assert tasks and not tasks[0]["ran"] and "declares no tasks" in tasks[0]["skipped"]


@pytest.mark.skipif(not node_ready(), reason="needs node and tests/sdk_servers/ts installed")
def test_the_typescript_sdk_experimental_tasks() -> None:
    # 1.32.2's tasks (2025-11-25) keep a cancelled task cancelled and refuse unknown ids with -32602; a task id of
    # the wrong type is its known ZodError answered -32603, attributed to the SDK.
    finished, exchanges = tasks_run(server=str(SDK_SERVERS / "ts" / "tasks_server.mjs"), node=True)
    assert {json.loads(e.case.data)["method"] for e in exchanges} >= {"tasks/get", "tasks/cancel", "tasks/result"}
    tasks = [f for f in finished.findings if f.oracle == "task-ids"]
    assert [(f.key, f.severity.name, f.upstream is not None) for f in tasks] == [("code:-32603", "MEDIUM", True)]
