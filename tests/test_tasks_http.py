"""The tasks phase over streamable HTTP: tests/servers/tasks_server.py served by http_server.py (`--serve tasks`, its
tasks in one store for every POST, as a stateless server keeps them), in both eras; each task-ids bug found by its
oracle, the clean server by none."""

from __future__ import annotations

import json
import sys

import pytest

from mcpfuzz.engine.events import CaseDone, Event, PhaseName, RunFinished
from mcpfuzz.jsonrpc.exchange import Exchange
from mcpfuzz.transport.base import TransportKind
from mcpfuzz.transport.http_target import HttpTarget
from tests.engine_runs import run_engine
from tests.http_servers import HTTP_SERVER, free_port
from tests.test_tasks import LEGACY, found

pytestmark = pytest.mark.slow


def tasks_over_http(*server_bugs: str, version: str | None = None) -> tuple[RunFinished, list[Exchange]]:
    """A short run (probe, coverage, then the tasks phase) against the tasks server over HTTP, launched by mcpfuzz."""
    port = free_port()
    launch = [sys.executable, str(HTTP_SERVER), "--port", str(port), "--serve", "tasks"]
    for bug in server_bugs:
        launch += ["--server-bug", bug]
    target = HttpTarget(f"http://127.0.0.1:{port}/mcp", launch=tuple(launch), transport=TransportKind.STREAMABLE_HTTP)
    events: list[Event] = []
    finished = run_engine([], http=target, timeout=5.0, budget=40.0, phases=("probe", "coverage"),
                          protocol_version=version, events=events)
    assert not finished.error, finished.error
    return finished, [e.exchange for e in events if isinstance(e, CaseDone) and e.phase == PhaseName.TASKS]


@pytest.mark.parametrize("version", [None, LEGACY], ids=["2026-07-28", "2025-11-25"])
def test_the_clean_server_over_http_gives_no_finding(version: str | None) -> None:
    finished, exchanges = tasks_over_http(version=version)
    assert finished.findings == ()
    methods = {json.loads(e.case.data)["method"] for e in exchanges}
    assert {"tools/call", "tasks/get", "tasks/cancel"} <= methods
    # Every case was its own POST, answered on it.
    assert all(e.http is not None and e.http.done for e in exchanges)


@pytest.mark.parametrize(("bugs", "version", "expected"), [
    (("unknown-returns-other",), None, {("task-ids", "tasks/get", "high"), ("task-ids", "tasks/get", "medium")}),
    (("unknown-returns-other",), LEGACY, {("task-ids", "tasks/get", "high"), ("task-ids", "tasks/get", "medium")}),
    (("removed-method",), None, {("task-ids", "tasks/result", "medium")}),
    (("cancel-ignored",), LEGACY, {("task-ids", "tasks/get", "high")}),
    # The handler's exception ends its POST's connection with no response while the process runs on.
    (("malformed-crash",), None, {("no-hang", "tasks/get", "critical")}),
], ids=["other-task-modern", "other-task-legacy", "removed-method", "cancel-ignored-legacy", "malformed-crash"])
def test_each_task_bug_is_found_over_http(bugs: tuple[str, ...], version: str | None,
                                          expected: set[tuple[str, str, str]]) -> None:
    finished, _ = tasks_over_http(*bugs, version=version)
    assert found(finished) == expected


def test_a_task_for_a_client_that_did_not_declare_the_extension_over_http() -> None:
    # The coverage calls, which declare nothing, get tasks too: their own findings come with it.
    finished, _ = tasks_over_http("ignores-capability")
    assert ("task-ids", "tool/double", "high") in found(finished)
