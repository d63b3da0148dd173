"""A run is a plan of phases over one context and one budget: order, skip reasons, the budget's shares, the
protocol phases leaving out what does not fit, and honest verdicts. On the memory transport, in milliseconds."""

from __future__ import annotations

import json
import sys
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

import anyio
import pytest

from mcpfuzz.cli.options import EXIT_ERROR, EXIT_FINDINGS, exit_status
from mcpfuzz.engine.config import RunConfig, Shard
from mcpfuzz.engine.events import Event, Notice, PhaseName, RunFinished, StopReason
from mcpfuzz.engine.plan.budget import CALL_SHARE, Budget
from mcpfuzz.engine.plan.context import RunContext
from mcpfuzz.engine.plan.plans import JSONRPC_PLAN, RUN_PLAN, WORKER_PLAN, plan_for
from mcpfuzz.engine.plan.protocol_phases import run_cases
from mcpfuzz.engine.runner import Run, run
from mcpfuzz.engine.session.session import Session, SessionOptions
from mcpfuzz.jsonrpc.encode import dumps, error_response, request, response
from mcpfuzz.jsonrpc.expectation import any_answer
from mcpfuzz.jsonrpc.frame import Case
from mcpfuzz.jsonrpc.ids import ABSENT
from mcpfuzz.oracles.base import Severity, all_oracles
from mcpfuzz.report.json_report import report_json
from mcpfuzz.report.time_split import never_called, time_split
from mcpfuzz.transport.memory import MemoryTarget, Reply

pytestmark = pytest.mark.slow

SLOW_MANY_TOOLS = Path(__file__).parent / "servers" / "slow_many_tools.py"
TOOLS = [
    {"name": "echo", "description": "Echo.", "inputSchema": {
        "type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}},
    {"name": "count", "description": "Count.", "annotations": {"readOnlyHint": True}, "inputSchema": {
        "type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}},
]


class MemoryMcpServer:
    """A legacy-era MCP server as a handler: the handshake, ping, two tools; `lose_after_call` makes the first
    tools/call kill it and every later start fail, as a server whose crash corrupts its own state."""

    def __init__(self, *, lose_after_call: bool = False) -> None:
        self.lose_after_call = lose_after_call
        self.lost = False
        self.calls: list[str] = []

    def __call__(self, frame: bytes) -> Reply | bytes | None:
        try:
            message = json.loads(frame)
        except ValueError:
            return dumps(error_response(None, -32700, "parse error"))
        if not isinstance(message, dict):
            return dumps(error_response(None, -32600, "invalid request"))
        method, rid = message.get("method"), message.get("id", ABSENT)
        if self.lost:
            return Reply(stderr="fatal: state file corrupt\n", exit=1)
        if rid is ABSENT:
            return None
        if method == "initialize":
            params = message.get("params") if isinstance(message.get("params"), dict) else {}
            return dumps(response(rid, {"protocolVersion": params.get("protocolVersion", "2025-11-25"),
                                        "capabilities": {"tools": {}}, "serverInfo": {"name": "mem", "version": "1"}}))
        if method == "ping":
            return dumps(response(rid, {}))
        if method == "tools/list":
            return dumps(response(rid, {"tools": TOOLS}))
        if method == "tools/call":
            params = message.get("params") if isinstance(message.get("params"), dict) else {}
            self.calls.append(str(params.get("name")))
            if self.lose_after_call:
                self.lost = True
                return Reply(stderr="Traceback: boom\n", exit=1)
            return dumps(response(rid, {"content": [{"type": "text", "text": "ok"}], "isError": False}))
        return dumps(error_response(rid, -32601, "method not found"))


def memory_config(server: MemoryMcpServer, **options: Any) -> RunConfig:
    options.setdefault("oracles", tuple(all_oracles()))
    return RunConfig(command=[], seed=5, budget=options.pop("budget", 20.0), timeout=options.pop("timeout", 2.0),
                     grace=0.01, server=MemoryTarget(server), **options)


def run_memory(config: RunConfig) -> tuple[Run, RunFinished, list[Event]]:
    events: list[Event] = []
    runner = Run(config, events.append)

    async def main() -> RunFinished:
        with anyio.fail_after(120):  # a hang is a failure, not a stuck test run
            return await runner.execute()

    return runner, anyio.run(main), events


def test_a_run_executes_its_plan_in_order_and_says_why_each_skipped_phase_did_not_run() -> None:
    server = MemoryMcpServer()
    # Ended by its examples, not its budget (one no machine spends): a loaded machine calls every target too.
    runner, finished, _ = run_memory(memory_config(server, phases=("probe", "catalogue", "fuzz"), budget=120.0,
                                                   max_examples=1))
    log = dict(runner.context.phase_log)
    assert [name for name, _ in runner.context.phase_log] == [phase.name for phase in RUN_PLAN]
    assert log["probe"] == "" and log["plan"] == "" and log["catalogue"] == "" and log["fuzz"] == ""
    assert log["lifecycle"] == "not in --phases" and log["coverage"] == "not in --phases"
    assert log["regression"] == "no corpus" and log["baseline"] == "no --baseline"
    plan = finished.stats.plan
    assert plan is not None
    assert {p["name"] for p in plan["phases"] if p["ran"]} >= {"probe", "plan", "catalogue", "fuzz"}
    assert sum(p["share"] for p in plan["phases"]) <= 1.01  # each share is rounded
    # Both tools were planned and called; the JSON report says so.
    assert plan["targets"]["planned"] == ["tool/echo", "tool/count"]
    assert plan["targets"]["not_called"] == [] and plan["targets"]["called"] == 2
    assert set(server.calls) >= {"echo", "count"}
    report = report_json(runner.context.config, finished)
    assert report["untested"] is None and report["stats"]["plan"]["targets"]["called"] == 2
    assert "calls" in time_split(finished.stats) and never_called(finished.stats) == ""


def test_each_run_shape_is_a_plan_not_a_subclass() -> None:
    config = RunConfig(command=["server"])
    assert plan_for(config) is RUN_PLAN
    assert plan_for(replace(config, shard=Shard(1, 2))) is WORKER_PLAN
    assert plan_for(replace(config, jsonrpc_methods=())) is JSONRPC_PLAN
    worker = {phase.name for phase in WORKER_PLAN}
    assert "catalogue" not in worker and "lifecycle" not in worker and "coverage" not in worker


def test_the_budget_keeps_the_calls_share_once_targets_are_planned() -> None:
    budget = Budget(100.0, started=time.monotonic())
    assert budget.verify_until == pytest.approx(budget.started + 98.0)
    assert budget.deadline == pytest.approx(budget.started + 93.0)
    assert budget.protocol_deadline == budget.deadline  # nothing planned yet: the protocol phases may use it all
    budget.reserve_calls(True)
    assert budget.protocol_until is not None
    left_for_calls = budget.deadline - budget.protocol_until
    assert left_for_calls >= CALL_SHARE * (budget.deadline - time.monotonic()) - 0.5
    budget.reserve_calls(False)
    assert budget.protocol_deadline == budget.deadline
    assert budget.fits(1.0, time.monotonic() + 60) and not budget.fits(100.0, time.monotonic() + 60)
    with budget.timing("catalogue"):
        pass
    assert "catalogue" in budget.spent and budget.split(0.0) == {}


def test_cases_that_need_a_fresh_process_are_left_out_when_a_start_costs_more_than_the_time_left() -> None:
    server = MemoryMcpServer()
    events: list[Event] = []
    context = RunContext.create(memory_config(server), events.append)
    context.budget.restart_cost = 1000.0  # a server that takes longer to start than the whole run has
    frame = dumps(request("ping", {}, 41))
    ordinary = Case("ping", "plan", "ping", frame, any_answer(41, "ping"))
    fresh = replace(ordinary, id="fresh-ping", fresh=True)

    async def main() -> None:
        with anyio.fail_after(60):
            async with Session(MemoryTarget(server), SessionOptions(timeout=2.0, grace=0.01)) as session:
                context.session = session
                await run_cases(context, session, PhaseName.LIFECYCLE, [ordinary, fresh])

    anyio.run(main)
    assert context.stats.phases == {PhaseName.LIFECYCLE: 1}  # the ordinary case ran, the fresh one did not
    notes = [e.message for e in events if isinstance(e, Notice)]
    assert any("1 of 2 cases left out" in note and "raise --budget" in note for note in notes), notes


def test_a_server_lost_for_good_never_passes_and_says_what_was_not_tested() -> None:
    server = MemoryMcpServer(lose_after_call=True)
    # The handler is no model server (the catalogue finds plenty): only the verdict on losing it is judged here.
    config = memory_config(server, oracles=("no-hang",), budget=10.0, fail_on=Severity.CRITICAL)
    runner, finished, _ = run_memory(config)
    assert [f for f in finished.findings if f.severity >= Severity.CRITICAL] == []
    assert runner.context.stopped is StopReason.SERVER_UNRECOVERABLE
    assert "the server was lost and could not be brought back" in finished.untested
    assert "tip:" in finished.untested
    assert exit_status(config, finished) == EXIT_ERROR
    assert report_json(config, finished)["untested"] == finished.untested


def test_a_lost_server_with_findings_fails_and_still_says_it_was_not_fully_tested() -> None:
    server = MemoryMcpServer(lose_after_call=True)
    config = memory_config(server, budget=10.0)
    _, finished, _ = run_memory(config)
    assert any(f.oracle == "no-crash" for f in finished.findings)
    assert finished.untested and exit_status(config, finished) == EXIT_FINDINGS


def test_a_slow_starting_server_with_many_tools_gets_every_tool_called() -> None:
    """The slow-start fixture (2 s before it reads stdin, 12 tools): restarts do not eat the calls' share."""
    command = [sys.executable, str(SLOW_MANY_TOOLS), "--startup-delay", "2", "--tools", "12"]
    config = RunConfig(command=command, seed=9, budget=40.0, timeout=5.0, oracles=tuple(all_oracles()))
    events: list[Event] = []
    finished = anyio.run(run, config, events.append)
    assert finished.error == "" and finished.untested == "", finished.error or finished.untested
    assert [f.oracle for f in finished.findings] == []
    called = finished.stats.targets
    assert sorted(label for label in called if label.startswith("tool/")) == [f"tool/tool_{n:02d}" for n in range(12)]
    plan = finished.stats.plan
    assert plan is not None and plan["targets"]["not_called"] == []
    # The fresh-process cases were charged the measured start-up: run, or left out and said, never a silent loss.
    lifecycle = finished.stats.phases.get(PhaseName.LIFECYCLE, 0)
    notes = [e.message for e in events if isinstance(e, Notice)]
    assert lifecycle == 5 or any(note.startswith("lifecycle:") and "left out" in note for note in notes)
