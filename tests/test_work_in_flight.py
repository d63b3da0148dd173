"""Work in flight: requests cancelled while they provably still run, and one read-only tool called at once with
distinct arguments. The oracle's rules on hand-built exchanges, then each bug of tests/servers/flight_server.py
found by its oracle alone in a 60 s run, and its clean twin with no finding."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcpfuzz.strategies.cancellation import in_flight_cancel_case
from mcpfuzz.strategies.messages import FrameBuilder

from mcpfuzz.engine.config import RunConfig
from mcpfuzz.engine.events import CaseDone, Event, PhaseName, RunFinished
from mcpfuzz.engine.runner import run
from mcpfuzz.engine.searches.latencies import LatencyBook
from mcpfuzz.jsonrpc.case_json import expectation_from_json, expectation_to_json
from mcpfuzz.jsonrpc.exchange import ID_CURRENT, Arrival, Exchange
from mcpfuzz.jsonrpc.expectation import Expectation
from mcpfuzz.jsonrpc.frame import Case
from mcpfuzz.jsonrpc.incoming import classify
from mcpfuzz.jsonrpc.oracle_ids import OracleId
from mcpfuzz.jsonrpc.parts.cancel import CancelCheck
from mcpfuzz.jsonrpc.parts.concurrency import ConcurrencyCheck
from mcpfuzz.jsonrpc.parts.tool_call import ToolCallCheck
from mcpfuzz.jsonrpc.versions import LATEST_MODERN, Era
from mcpfuzz.oracles.base import all_oracles
from mcpfuzz.oracles.cancellation import cancel_respected
from mcpfuzz.transport.http_target import HttpTarget
from tests.conftest import run_cli
from tests.engine_runs import SERVERS, run_engine
from tests.http_servers import start_sdk_server

pytestmark = pytest.mark.slow

FLIGHT_SERVER = SERVERS / "flight_server.py"
SDK_SERVERS = SERVERS.parent / "sdk_servers"
ROOT = SERVERS.parent.parent
REQUEST, RUNNING, PROBE = 1, 2, 3


def cancelled(latency: float = 1.0) -> Case:
    """A tools/call cancelled 0.25 s in (ids 1, 2, 3: the request, the liveness request, the probe)."""
    return in_flight_cancel_case(FrameBuilder(Era.MODERN, LATEST_MODERN, next_id=0), "tools/call",
                                 {"name": "report", "arguments": {}}, pause=0.25, latency=latency, subject="report")


def seen(case: Case, *answers: tuple[float, dict[str, Any]]) -> Exchange:
    """The exchange of `case` when each (seconds after the request, response) arrived, in that order."""
    exchange = Exchange(case, Era.MODERN, LATEST_MODERN)
    exchange.arrivals = [Arrival(classify(json.dumps(message).encode()), at, ID_CURRENT, 1) for at, message in answers]
    return exchange


def answer(rid: int, *, code: int | None = None) -> dict[str, Any]:
    """A result, or an error with `code`."""
    if code is None:
        return {"jsonrpc": "2.0", "id": rid, "result": {"content": []}}
    return {"jsonrpc": "2.0", "id": rid, "error": {"code": code, "message": "Request cancelled"}}


def verdicts(exchange: Exchange) -> list[str]:
    return [failure.message for failure in cancel_respected(exchange)]


def test_the_case_is_the_request_then_a_liveness_request_its_cancel_and_a_probe() -> None:
    case = cancelled()
    methods = [json.loads(line).get("method") for line in case.data.split(b"\n")]
    assert methods == ["tools/call", "server/discover", "notifications/cancelled", "server/discover"]
    assert case.expect.part(CancelCheck) is not None and case.expect.part(CancelCheck).running == RUNNING
    assert case.target == "in-flight/report"


def test_the_expectation_keeps_its_pause_and_latency_in_a_transcript() -> None:
    expect = cancelled(0.8).expect
    loaded = expectation_from_json(json.loads(json.dumps(expectation_to_json(expect))))
    assert loaded.part(CancelCheck) == expect.part(CancelCheck)


def test_an_error_code_0_while_still_running_is_found() -> None:
    """The Python SDK 1.x: the cancel is answered at once with error code 0, before the probe's answer."""
    (message,) = verdicts(seen(cancelled(), (0.26, answer(RUNNING)), (0.27, answer(REQUEST, code=0)),
                               (0.28, answer(PROBE))))
    assert "error code 0" in message and "Python SDK" in message


def test_a_result_after_the_probe_while_the_work_had_time_left_is_found() -> None:
    """A server that ignores the cancel and answers when its work is done."""
    (message,) = verdicts(seen(cancelled(), (0.26, answer(RUNNING)), (0.27, answer(PROBE)), (1.0, answer(REQUEST))))
    assert "with its result" in message


@pytest.mark.parametrize("answers", [
    pytest.param([(0.2, answer(REQUEST)), (0.26, answer(RUNNING)), (0.27, answer(PROBE))], id="done-before"),
    pytest.param([(0.26, answer(RUNNING)), (0.27, answer(REQUEST)), (0.28, answer(PROBE))], id="early-result"),
    pytest.param([(0.26, answer(RUNNING)), (0.28, answer(PROBE))], id="respected"),
    pytest.param([(0.7, answer(RUNNING)), (0.7, answer(PROBE)), (0.9, answer(REQUEST, code=0))], id="probe-late"),
])
def test_no_verdict_unless_the_request_was_provably_still_running(answers: list) -> None:
    """Done before the cancel was written, a result that may be the work done, a respected cancel, or a cancel
    read too late in the target's latency to rule a race out: nothing."""
    assert verdicts(seen(cancelled(), *answers)) == []


def test_a_large_answer_after_the_probe_is_no_proof_that_the_work_was_still_running() -> None:
    """A 4 MB resource answered at once over HTTP: its encoding and transfer outlast the probe's round trip, so it
    arrives after the probe's answer, as a small answer written after the cancel was read would."""
    big = {"jsonrpc": "2.0", "id": REQUEST, "result": {"content": [{"type": "text", "text": "x" * 4_000_000}]}}
    timings = ((0.26, answer(RUNNING)), (0.27, answer(PROBE)))
    assert verdicts(seen(cancelled(), *timings, (1.0, big))) == []
    assert len(verdicts(seen(cancelled(), *timings, (1.0, answer(REQUEST))))) == 1


def test_without_a_measured_latency_only_an_answer_clearly_after_the_probe_counts() -> None:
    unknown = cancelled(latency=0.0)
    assert verdicts(seen(unknown, (0.01, answer(RUNNING)), (0.02, answer(PROBE)), (0.03, answer(REQUEST)))) == []
    assert len(verdicts(seen(unknown, (0.01, answer(RUNNING)), (0.02, answer(PROBE)), (1.5, answer(REQUEST))))) == 1


def test_latencies_are_read_from_valid_calls_answered_with_a_result() -> None:
    """Every target's answered valid calls are timed, whether or not it is annotated read-only (which is kept)."""
    book = LatencyBook()

    def call(tool: str = "lookup", valid: bool = True, read_only: bool = True, at: float = 0.4,
             reply: dict | None = None) -> None:
        frame = json.dumps({"jsonrpc": "2.0", "id": 7, "method": "tools/call",
                            "params": {"name": tool, "arguments": {"key": "alpha"}}}).encode()
        expect = Expectation(judge=OracleId.INVALID_PARAMS, id=7, result_ok=True, error_ok=True,
                             parts=(ToolCallCheck(tool, valid),))
        case = Case(tool, "tool", "", frame, expect, patient=True, slow_ok=True, shared_ok=read_only)
        book(PhaseName.FUZZ, seen(case, (at, reply or answer(7))), [])

    call(at=0.5)
    call(at=0.3)
    call(valid=False, at=0.01)
    call(at=0.01, reply=answer(7, code=-32602))
    call("store", read_only=False, at=0.25)
    assert [(label, t.method, t.shortest, t.read_only) for label, t in book.slowest(0.2, 3)] == [
        ("tool/lookup", "tools/call", 0.3, True), ("tool/store", "tools/call", 0.25, False)]
    assert list(book.targets["tool/lookup"].params.values()) == [(0.5, {"name": "lookup",
                                                                         "arguments": {"key": "alpha"}})]


def flight_run(*bugs: str, annotated: bool = True) -> tuple[RunFinished, list[Event]]:
    """A run of the flight server with every oracle: its coverage calls measure the latencies the flight phase
    works from, and the run ends by its calls (one example per search), not by a budget."""
    events: list[Event] = []
    command = [sys.executable, str(FLIGHT_SERVER), *(arg for bug in bugs for arg in ("--bug", bug)),
               *([] if annotated else ["--unannotated"])]
    config = RunConfig(command=command, seed=1, timeout=5.0, budget=300.0, oracles=tuple(all_oracles()),
                       phases=("probe", "coverage"), max_examples=1)
    return anyio.run(run, config, events.append), events


def flight_cases(events: list[Event]) -> list[Exchange]:
    return [e.exchange for e in events if isinstance(e, CaseDone) and e.phase == PhaseName.FLIGHT]


@pytest.mark.parametrize(("bug", "oracle", "family"), [
    ("cancel-code-0", "cancel-respected", "in-flight"),
    ("shared-argument", "concurrency", "concurrency"),
    (None, None, None),
], ids=["cancel-code-0", "shared-argument", "clean"])
def test_each_bug_of_work_in_flight_is_found_by_its_oracle_and_the_clean_twin_by_none(
        bug: str | None, oracle: str | None, family: str | None) -> None:
    finished, events = flight_run(*([bug] if bug else []))
    assert not finished.error, finished.error
    # The first case of each family comes first: report, the slowest, cancelled; lookup's four keys at once.
    assert [exchange.case.target for exchange in flight_cases(events)][:2] == ["in-flight/report",
                                                                               "concurrency/lookup-at-once"]
    found = {(f.oracle, f.target.split("/")[0]) for f in finished.findings}
    assert found == ({(oracle, family)} if bug else set())
    if bug == "cancel-code-0":
        assert all("error code 0" in f.message for f in finished.findings)


@pytest.mark.parametrize("bug", ["cancel-code-0", "shared-argument", None],
                         ids=["cancel-code-0", "shared-argument", "clean"])
def test_tools_without_annotations_are_worked_on_in_flight_too(bug: str | None) -> None:
    """The same tools listed without annotations (most servers annotate nothing): the slow one is still cancelled
    in flight, and a cancelled call answered with error code 0 still found; lookup is still called at once, but,
    as it may change state, its answers are not compared with answers alone: the shared-argument bug, which only
    that comparison shows, is then no finding, and nothing else is either."""
    finished, events = flight_run(*([bug] if bug else []), annotated=False)
    assert not finished.error, finished.error
    cases = {exchange.case.target: exchange for exchange in flight_cases(events)}
    assert {"in-flight/report", "concurrency/lookup-at-once"} <= set(cases)
    check = cases["concurrency/lookup-at-once"].case.expect.part(ConcurrencyCheck)
    assert check is not None and check.changes_state and check.alone == ()
    assert len(check.requests) > 1
    found = {(f.oracle, f.target.split("/")[0]) for f in finished.findings}
    assert found == ({("cancel-respected", "in-flight")} if bug == "cancel-code-0" else set())


def test_the_clean_test_server_whose_tools_are_not_annotated_gives_no_finding_in_flight() -> None:
    """tests/servers/mcp_server.py annotates nothing and answers at once: its tools are called at once with the
    distinct arguments their calls were answered for (nothing is slow enough to cancel), and nothing is found.
    Counted, not timed: 20 examples per search end the run; the budget only bounds it on a loaded machine."""
    events: list[Event] = []
    finished = run_engine([sys.executable, str(SERVERS / "mcp_server.py")], timeout=5.0, budget=240,
                          phases=("probe", "coverage", "fuzz", "stateful"), events=events, max_examples=20)
    assert not finished.error, finished.error
    bursts = [exchange.case.expect.part(ConcurrencyCheck) for exchange in flight_cases(events)]
    assert bursts and all(check is not None and check.changes_state and len(check.requests) > 1 for check in bursts)
    assert [(f.oracle, f.target) for f in finished.findings] == []


def _mcp1_python() -> str | None:
    """The interpreter of the mcp 1.x virtual environment that .ci/run creates."""
    candidate = os.environ.get("MCPFUZZ_MCP1_PYTHON") or str(ROOT / ".venv-mcp1" / "bin" / "python")
    return candidate if Path(candidate).exists() else None


def _assert_the_sdks_cancel_verdict(major: int, finished: RunFinished, events: list[Event]) -> None:
    """The slow tool was cancelled in flight; mcp 1.x answered it with error code 0 (found), 2.x answered nothing."""
    assert not finished.error, finished.error
    assert "in-flight/report" in {exchange.case.target for exchange in flight_cases(events)}
    cancels = [f for f in finished.findings if f.oracle == "cancel-respected"]
    if major == 1:
        assert [f.target for f in cancels] == ["in-flight/report"] and "error code 0" in cancels[0].message
    else:
        assert cancels == []


@pytest.mark.sdk
@pytest.mark.parametrize("major", [1, 2])
def test_a_real_python_sdk_cancelled_in_flight(major: int) -> None:
    """A FastMCP tool that awaits for a second, cancelled while it runs: mcp 1.30.0 answers it with error code 0
    (python-sdk#2480), found; mcp 2.3.0 answers nothing, no finding."""
    if major == 1:
        python = _mcp1_python()
        if python is None:
            pytest.skip("no mcp 1.x environment: .ci/run creates .venv-mcp1 (or set MCPFUZZ_MCP1_PYTHON)")
    else:
        pytest.importorskip("mcp.server.mcpserver")
        python = sys.executable
    events: list[Event] = []
    # The coverage calls time the tools; the flight phase follows them (the run ends by its calls, not a budget).
    config = RunConfig(command=[python, str(SDK_SERVERS / f"sdk{major}_slow_server.py")], seed=1, timeout=5.0,
                       budget=300.0, oracles=tuple(all_oracles()), phases=("probe", "coverage"), max_examples=1)
    finished = anyio.run(run, config, events.append)
    _assert_the_sdks_cancel_verdict(major, finished, events)


@pytest.mark.sdk
@pytest.mark.parametrize("major", [1, 2])
def test_a_real_python_sdk_cancelled_in_flight_over_streamable_http(major: int) -> None:
    """The same tool over streamable HTTP: each line of the case is its own POST, the cancel sent once the call's
    response stream is open; mcp 1.30.0's answer with error code 0 is found there too, mcp 2.3.0 gives none."""
    events: list[Event] = []
    with start_sdk_server(f"sdk{major}-slow") as url:
        config = RunConfig(command=[], http=HttpTarget(url), seed=1, timeout=5.0, budget=300.0,
                           oracles=tuple(all_oracles()), phases=("probe", "coverage"), max_examples=1)
        finished = anyio.run(run, config, events.append)
    _assert_the_sdks_cancel_verdict(major, finished, events)


@pytest.mark.sdk
def test_a_real_python_sdk_whose_tools_carry_no_annotations_is_worked_on_in_flight(tmp_path: Path) -> None:
    """A plain `mcpfuzz run` of a FastMCP server on mcp 1.30.0 whose tools are not annotated (as most servers'):
    the flight phase runs cases, the slow tool cancelled while it runs is answered with error code 0
    (python-sdk#2480) and found; the tools called at once with distinct arguments (one of them keeps state) give
    no finding."""
    python = _mcp1_python()
    if python is None:
        pytest.skip("no mcp 1.x environment: .ci/run creates .venv-mcp1 (or set MCPFUZZ_MCP1_PYTHON)")
    report_path = tmp_path / "report.json"
    result = run_cli(["run", "--seed", "1", "--timeout", "5", "--budget", "40", "--json", str(report_path), "--",
                      python, str(SDK_SERVERS / "sdk1_plain_slow_server.py")], timeout=300, cwd=tmp_path)
    assert report_path.exists(), result.stdout + result.stderr
    report = json.loads(report_path.read_text())
    assert report["stats"]["phases"].get("flight", 0) > 0, report["stats"]
    cancels = [f for f in report["findings"] if f["oracle"] == "cancel-respected"]
    assert cancels and "error code 0" in cancels[0]["message"], report["findings"]
    assert "in-flight/report" in {cancels[0]["target"], *cancels[0].get("also_on", [])}
    assert [f for f in report["findings"] if f["oracle"] == "concurrency"] == []
    assert result.returncode == 1, result.stdout + result.stderr
