"""An error of mcpfuzz's own ends only the case it happened in: the phase goes on, and the report lists the error
(JSON: `internal_errors` and `stats.internal_errors`; the console: one line per distinct error). Ctrl-C still
stops the run. Errors are injected into in-process runs over the memory transport; the field's case (an answer
without an id to a frame with an id written in) runs against a server that answers that way.
"""

from __future__ import annotations

import io
import json
from collections.abc import Iterator
from typing import Any

import anyio
import pytest
from mcpfuzz.strategies.frames.draft import FrameDraft
from rich.console import Console

from mcpfuzz.engine.config import RunConfig
from mcpfuzz.engine.events import CaseDone, Event, RunFinished
from mcpfuzz.engine.internal_errors import InternalErrors
from mcpfuzz.engine.judge import FindingSet
from mcpfuzz.engine.runner import Run
from mcpfuzz.engine.searches.frame_fuzz import reuse_keys
from mcpfuzz.jsonrpc.encode import dumps, error_response, response
from mcpfuzz.jsonrpc.ids import ABSENT, show_id
from mcpfuzz.oracles.base import all_oracles
from mcpfuzz.report.console import ConsoleReporter
from mcpfuzz.report.json_report import report_json
from mcpfuzz.transport.memory import MemoryTarget

pytestmark = pytest.mark.process

TOOL = {"name": "echo", "description": "Echo.", "annotations": {"readOnlyHint": True}, "inputSchema": {
    "type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}}


class Server:
    """A legacy-era MCP server with one tool; `omit_ids` leaves the id out of the errors it answers to requests
    whose id is not a string or an integer, as a server whose JSON-RPC library skips a null id does."""

    def __init__(self, *, omit_ids: bool = False, tools: bool = True) -> None:
        self.omit_ids = omit_ids
        self.tools = [TOOL] if tools else []

    def __call__(self, frame: bytes) -> bytes | None:
        try:
            message = json.loads(frame)
        except ValueError:
            return dumps({"jsonrpc": "2.0", "error": {"code": -32700, "message": "parse error"}})
        if not isinstance(message, dict) or "id" not in message:
            return None
        rid = message["id"]
        if not isinstance(rid, str | int) or isinstance(rid, bool):
            error = {"code": -32600, "message": "invalid id"}
            return dumps({"jsonrpc": "2.0", "error": error} if self.omit_ids else error_response(None, -32600, "id"))
        method = message.get("method")
        if method == "initialize":
            return dumps(response(rid, {"protocolVersion": "2025-06-18", "capabilities": {"tools": {}},
                                        "serverInfo": {"name": "mem", "version": "1"}}))
        if method == "ping":
            return dumps(response(rid, {}))
        if method == "tools/list":
            return dumps(response(rid, {"tools": self.tools}))
        if method == "tools/call":
            return dumps(response(rid, {"content": [{"type": "text", "text": "ok"}], "isError": False}))
        return dumps(error_response(rid, -32601, "method not found"))


# The rules this sketchy server breaks (it answers malformed frames and arguments as if they were valid): their
# findings would each be shrunk, for seconds, and these tests are about mcpfuzz's own errors, not the server's.
SERVER_BREAKS = frozenset({"invalid-params", "invalid-request", "notification-silent", "parse-error",
                           "response-schema"})


def run_memory(server: Server, *, phases: tuple[str, ...] = ("probe", "fuzz"), budget: float = 120.0,
               max_examples: int | None = 3) -> tuple[RunConfig, RunFinished, list[Event]]:
    """A run on the in-memory server, ended by its examples (three per search) rather than by the budget: however
    slow the machine, every frame family and tool gets its examples, and a run takes a second or two, not eight."""
    oracles = tuple(oracle for oracle in all_oracles() if oracle not in SERVER_BREAKS)
    config = RunConfig(command=[], seed=3, budget=budget, timeout=2.0, grace=0.01, server=MemoryTarget(server),
                       oracles=oracles, phases=phases, max_examples=max_examples)
    events: list[Event] = []

    async def main() -> RunFinished:
        with anyio.fail_after(120):  # a hang is a failure, not a stuck test run
            return await Run(config, events.append).execute()

    return config, anyio.run(main), events


def judged_targets(events: list[Event]) -> list[str]:
    """The targets of the judged cases, in order."""
    return [event.exchange.case.target for event in events if isinstance(event, CaseDone)]


# -- the field's error: an answer without an id ------------------------------------------------------------------

def test_an_answer_without_an_id_to_a_frame_with_an_id_ends_no_case() -> None:
    _, finished, events = run_memory(Server(omit_ids=True, tools=False))  # the frames take the whole fuzz phase
    without_id = [event for event in events if isinstance(event, CaseDone)
                  and event.exchange.case.target.startswith("frames/")
                  and any(a.incoming.id is ABSENT for a in event.exchange.responses())]
    assert without_id, "the server never answered a frame with an answer lacking its id"
    assert finished.internal_errors == () and finished.stats.internal_errors == 0
    assert finished.error == ""
    targets = judged_targets(events)
    assert targets.index("frames/id") < max(i for i, target in enumerate(targets) if target.startswith("frames/"))


def test_an_id_of_any_size_or_absence_has_keys_and_a_rendering() -> None:
    huge = 10**5000 - 1  # 5,000 digits: past the int-to-str limit of Python 3.11+
    assert reuse_keys(ABSENT) == set()
    assert reuse_keys(huge) and reuse_keys(huge) != reuse_keys(huge + 10**4990)
    assert reuse_keys("7") & reuse_keys(7)
    deep: Any = 1
    for _ in range(100_000):
        deep = [deep]
    assert "too large or too deep" in show_id(deep)
    assert "integer of about 5000 digits" in show_id(huge)


# -- injected errors ---------------------------------------------------------------------------------------------

@pytest.fixture
def judge_fails_on_envelopes(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Judging any frame of the envelope family raises, as an oracle with a bug would."""
    real = FindingSet.judge_all

    def judge_all(self: FindingSet, exchange: Any, *args: Any, **kwargs: Any) -> Any:
        if exchange.case.target == "frames/envelope":
            raise RuntimeError("injected: an oracle failed")
        return real(self, exchange, *args, **kwargs)

    monkeypatch.setattr(FindingSet, "judge_all", judge_all)
    yield


def test_an_oracle_error_ends_its_case_and_the_phase_goes_on(judge_fails_on_envelopes: None) -> None:
    config, finished, events = run_memory(Server())
    assert finished.error == ""
    (error,) = finished.internal_errors
    assert error.what == "RuntimeError: injected: an oracle failed"
    assert error.phase == "fuzz" and error.case.startswith("frames/envelope: ")
    assert error.where.startswith("engine/plan/context.py:")
    assert error.count >= 2 and finished.stats.internal_errors == error.count  # the family went on
    targets = judged_targets(events)
    assert {"frames/bytes", "frames/batch", "frames/nesting", "tool/echo"} <= set(targets)  # so did the phase

    report = report_json(config, finished)
    assert report["stats"]["internal_errors"] == error.count
    assert report["internal_errors"] == [{"what": error.what, "where": error.where, "phase": "fuzz",
                                          "case": error.case, "count": error.count}]
    json.dumps(report)

    reporter = ConsoleReporter(config, Console(file=io.StringIO(), width=300))
    errors = io.StringIO()
    reporter.errors = Console(file=errors, width=300, soft_wrap=True)
    reporter.handle(finished)
    lines = [line for line in errors.getvalue().splitlines() if "internal-error:" in line]
    assert len(lines) == 1 and "RuntimeError: injected: an oracle failed" in lines[0]


def test_a_strategy_error_ends_its_example_and_the_other_families_run(monkeypatch: pytest.MonkeyPatch) -> None:
    real = FrameDraft.case

    def case(self: FrameDraft, *args: Any, **kwargs: Any) -> Any:
        if self.family == "bytes":
            raise ValueError("injected: a frame that cannot be built")
        return real(self, *args, **kwargs)

    monkeypatch.setattr(FrameDraft, "case", case)
    _, finished, events = run_memory(Server())
    (error,) = finished.internal_errors
    assert error.what == "ValueError: injected: a frame that cannot be built"
    assert error.case.startswith("frames/bytes: ") and error.count >= 2
    assert {"frames/batch", "frames/nesting", "tool/echo"} <= set(judged_targets(events))


def test_a_call_phase_error_ends_its_example_and_the_search_goes_on(monkeypatch: pytest.MonkeyPatch) -> None:
    from mcpfuzz.engine.searches.fuzz_search import FuzzSearch

    async def call_batch(self: FuzzSearch, *args: Any, **kwargs: Any) -> Any:
        raise KeyError("injected")

    monkeypatch.setattr(FuzzSearch, "_call_batch", call_batch)
    _, finished, _ = run_memory(Server(), phases=("probe", "fuzz", "stateful"))
    (error,) = finished.internal_errors
    assert error.what == "KeyError: 'injected'" and error.case == "tool/echo" and error.count >= 2


def test_an_error_a_phase_does_not_contain_ends_that_phase_only(monkeypatch: pytest.MonkeyPatch) -> None:
    from mcpfuzz.engine.plan import protocol_phases

    async def run_cases(*args: Any, **kwargs: Any) -> None:
        raise AttributeError("injected")

    monkeypatch.setattr(protocol_phases, "run_cases", run_cases)
    _, finished, events = run_memory(Server(), phases=("probe", "catalogue", "fuzz"))
    (error,) = finished.internal_errors
    assert error.phase == "catalogue" and error.case == "the rest of the catalogue phase"
    assert "frames/id" in judged_targets(events) and finished.error == ""


def test_ctrl_c_still_stops_the_run(monkeypatch: pytest.MonkeyPatch) -> None:
    def judge_all(self: FindingSet, exchange: Any, *args: Any, **kwargs: Any) -> Any:
        if exchange.case.target.startswith("frames/"):
            raise KeyboardInterrupt
        return []

    monkeypatch.setattr(FindingSet, "judge_all", judge_all)
    with pytest.raises(KeyboardInterrupt):
        run_memory(Server())


def test_each_distinct_error_is_kept_once_with_its_count() -> None:
    book = InternalErrors()
    for _ in range(3):
        try:
            {}["x"]  # noqa: B018
        except KeyError as error:
            book.note(error, "fuzz", "tool/a")
    try:
        raise ValueError("other")
    except ValueError as error:
        book.note(error, "stateful", "stateful")
    first, second = book.entries()
    assert (first.count, first.case, second.count, second.phase) == (3, "tool/a", 1, "stateful")
    assert book.total == 4 and first.where.startswith("test_internal_errors.py:")


# -- what the adversarial server found ------------------------------------------------------------------------

HUGE = 10**5000 - 1  # an id of 5,000 digits: past what Python writes as text by default (3.11+)


def test_an_integer_of_any_length_is_written_exactly() -> None:
    assert dumps({"id": HUGE}) == b'{"id":' + b"9" * 5000 + b"}"
    assert dumps([1, "x"]) == b'[1,"x"]'


class AskingServer(Server):
    """Before each answer to ping, a request of its own whose id is an integer of 5,000 digits (valid JSON-RPC),
    then a line that the test's injected reader error is keyed on; it keeps the answers it gets."""

    def __init__(self) -> None:
        super().__init__(tools=False)
        self.answers: list[Any] = []

    def __call__(self, frame: bytes) -> bytes | list[bytes] | None:
        if b'"method"' not in frame and b'"id":9999' in frame:
            self.answers.append(json.loads(frame, parse_int=str))  # ids as their digits
            return None
        answer = super().__call__(frame)
        if answer is None or b'"method":"ping"' not in frame:
            return answer
        asking = b'{"jsonrpc":"2.0","id":' + b"9" * 5000 + b',"method":"ping"}'
        poison = b'{"jsonrpc":"2.0","method":"notifications/message","params":{"data":"poison"}}'
        return [asking, poison, answer]


def test_a_request_of_the_server_with_a_huge_id_is_answered_with_that_id(monkeypatch: pytest.MonkeyPatch) -> None:
    from mcpfuzz.engine.session import session as session_module

    real = session_module.classify

    def classify(line: bytes, size: int | None = None) -> Any:
        if b"poison" in line:
            raise OverflowError("injected: a line mcpfuzz cannot read")
        return real(line, size)

    monkeypatch.setattr(session_module, "classify", classify)
    server = AskingServer()
    _, finished, events = run_memory(server, phases=("probe", "fuzz"))
    assert server.answers and all(answer["id"] == "9" * 5000 and answer["result"] == {} for answer in server.answers)
    # The reader's own error ended no more than its line: the frames went on.
    (error,) = finished.internal_errors
    assert error.what == "OverflowError: injected: a line mcpfuzz cannot read"
    assert error.case.startswith("a line the server wrote: ") and error.count >= 2
    assert len([t for t in judged_targets(events) if t.startswith("frames/")]) >= 5 and finished.error == ""


def test_hypothesis_own_errors_in_an_example_are_left_to_hypothesis(monkeypatch: pytest.MonkeyPatch) -> None:
    """A replayed example that draws differently (the server answered at another pace) is Hypothesis' business."""
    from hypothesis.errors import FlakyStrategyDefinition

    from mcpfuzz.engine.searches.frame_fuzz import FrameFuzz

    real = FrameFuzz._example
    calls = {"count": 0}

    def example(self: FrameFuzz, *args: Any, **kwargs: Any) -> Any:
        calls["count"] += 1
        if calls["count"] % 3 == 0:
            raise FlakyStrategyDefinition("Inconsistent data generation! (injected)")
        return real(self, *args, **kwargs)

    monkeypatch.setattr(FrameFuzz, "_example", example)
    # An example Hypothesis drops never counts towards --max-examples: this run is ended by its budget.
    _, finished, events = run_memory(Server(tools=False), budget=6.0, max_examples=None)
    assert calls["count"] >= 6 and finished.internal_errors == () and finished.error == ""
    assert len({t for t in judged_targets(events) if t.startswith("frames/")}) >= 3


def test_an_error_in_a_protocol_case_on_a_fresh_process_ends_that_case_only(monkeypatch: pytest.MonkeyPatch) -> None:
    from mcpfuzz.engine.plan import protocol_phases

    real = protocol_phases.run_case
    failed: list[str] = []

    async def run_case(session: Any, case: Any, *args: Any, **kwargs: Any) -> Any:
        if case.fresh and not failed:
            failed.append(case.target)
            raise IndexError("injected")
        return await real(session, case, *args, **kwargs)

    monkeypatch.setattr(protocol_phases, "run_case", run_case)
    _, finished, events = run_memory(Server(), phases=("probe", "lifecycle"), budget=30.0)
    (error,) = finished.internal_errors
    assert failed and error.case.startswith(f"{failed[0]}: ") and error.phase == "lifecycle" and error.count == 1
    fresh_after = [e for e in events if isinstance(e, CaseDone) and e.exchange.case.fresh]
    assert fresh_after, "the lifecycle phase's other fresh-process cases still ran"
