"""The event stream: typed events and names, the handlers' fan-out, and `--events` (NDJSON) end to end."""

from __future__ import annotations

import json
import pickle
import sys
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from mcpfuzz.corpus.redact import REDACTED
from mcpfuzz.engine.config import PHASES, RunConfig
from mcpfuzz.engine.events import (
    CaseDone,
    CheckpointSaved,
    Event,
    Finding,
    FindingFound,
    Notice,
    PhaseName,
    PhaseStarted,
    ProbeDone,
    ResourcesSampled,
    RunFinished,
    RunStarted,
    ServerRestarted,
    SliceDone,
    StackFound,
    Stats,
    StopReason,
    TargetsPlanned,
)
from mcpfuzz.jsonrpc.exchange import Exchange
from mcpfuzz.jsonrpc.expectation import Expectation
from mcpfuzz.jsonrpc.frame import Case
from mcpfuzz.jsonrpc.versions import Era
from mcpfuzz.oracles.base import Severity
from mcpfuzz.report.event_json import event_json
from mcpfuzz.report.event_log import EventLog
from mcpfuzz.report.handlers import FanOut
from tests.conftest import SERVERS_DIR, run_cli
from tests.engine_runs import MCP_SERVER

pytestmark = pytest.mark.slow

SECRET = "s3cr3t-value-4242"
CONFIG = RunConfig(command=["python", "server.py"], seed=7, oracles=("no-crash",), env={"TOKEN": SECRET})
CASE = Case("empty-array", "envelope", "an empty batch", b"[]", Expectation("no-crash"))
FINDING = Finding("no-crash", Severity.CRITICAL, "crash", f"the server died; stderr: token {SECRET}",
                  "envelope/empty-array", "an empty batch", "an answer", (b"[]",), ("",), "exit")


def every_event() -> list[Event]:
    """One event of each type, the finding's message holding a secret the stream must not show."""
    finished = RunFinished(Stats(cases=3, phases={PhaseName.CATALOGUE: 3}), (FINDING,), "2025-11-25", "legacy",
                           StopReason.BUDGET)
    return [
        RunStarted("python server.py", 7, ("no-crash",), 60.0, 5.0),
        PhaseStarted(PhaseName.CATALOGUE, 3),
        ProbeDone("legacy", "2025-11-25", {"name": "s"}, {"tools": {}, "odd": float("nan")}, ("echo",)),
        TargetsPlanned(("tool/echo",), (("tool/rm", "destructiveHint"),)),
        CaseDone(PhaseName.CATALOGUE, Exchange(CASE, Era.LEGACY, "2025-11-25"), (FINDING,)),
        FindingFound(FINDING),
        ServerRestarted("restarted after the previous case"),
        ResourcesSampled(4242, 120, 50 * 1024 * 1024, 9, 3, 2),
        SliceDone(f"tool/echo-{SECRET}", 8.0, 400, 12, 1),
        Notice(f"the server printed {SECRET}"),
        StackFound({"name": "Python SDK", "version": "1.30.0", "evidence": "mcp-1.30.0.dist-info", "built_on": None},
                   "Python SDK 1.30.0 (mcp-1.30.0.dist-info)"),
        CheckpointSaved("corpus/soak-checkpoint.json", finished),
        finished,
    ]


# -- names and events ---------------------------------------------------------------------------


def test_names_are_their_strings_in_text_json_and_pickles() -> None:
    """Reports, checkpoints and worker messages keep the plain strings; the console prints the value."""
    assert f"{PhaseName.FUZZ}: {PhaseName.FUZZ:<6}|" == "fuzz: fuzz  |"
    assert json.dumps({PhaseName.FUZZ: StopReason.MAX_FINDINGS}) == '{"fuzz": "max-findings"}'
    assert pickle.loads(pickle.dumps(StopReason.INTERRUPTED)) is StopReason.INTERRUPTED
    assert not StopReason.NONE and StopReason.BUDGET == "budget"
    assert StopReason.parse("server-unrecoverable") is StopReason.SERVER_UNRECOVERABLE
    assert StopReason.parse("a reason of a later version") is StopReason.INTERRUPTED
    assert "catalogue" in PHASES and PhaseName.STATEFUL in ("coverage", "fuzz", "stateful")


def test_every_event_has_a_timestamp_and_keeps_positional_fields() -> None:
    """The base field is keyword-only: subclasses are built as before; the time does not make events differ."""
    before = Notice("x")
    assert before.timestamp > 1e9 and isinstance(before, Event)
    assert Notice("x", "info", timestamp=1.0) == Notice("x", "info", timestamp=2.0)
    assert all(isinstance(event, Event) for event in every_event())


# -- handlers ---------------------------------------------------------------------------------------


@dataclass
class Recorder:
    """A handler that notes what it was told, and fails to start when asked to."""

    name: str
    log: list[str]
    fail_start: bool = False
    events: list[Event] = field(default_factory=list)

    def start(self) -> None:
        if self.fail_start:
            raise OSError("cannot start")
        self.log.append(f"start {self.name}")

    def handle(self, event: Event) -> None:
        self.events.append(event)

    def finish(self) -> None:
        self.log.append(f"finish {self.name}")


def test_fan_out_feeds_every_handler_in_order_and_finishes_the_started_ones() -> None:
    log: list[str] = []
    first, second = Recorder("a", log), Recorder("b", log)
    sink = FanOut([first, second])
    sink.start()
    events = every_event()
    for event in events:
        sink(event)
    sink.finish()
    assert first.events == second.events == events
    assert log == ["start a", "start b", "finish b", "finish a"]

    log.clear()
    failing = FanOut([Recorder("a", log), Recorder("b", log, fail_start=True), Recorder("c", log)])
    with pytest.raises(OSError):
        failing.start()
    assert log == ["start a", "finish a"]


def test_every_event_becomes_one_json_object_with_its_type_and_time() -> None:
    assert {type(event) for event in every_event()} == set(Event.__subclasses__())  # a new event is listed above
    for event in every_event():
        data = event_json(event, CONFIG)
        assert data["event"] == type(event).__name__ and data["timestamp"] == round(event.timestamp, 6)
        json.dumps(data, allow_nan=False)  # strict JSON: no NaN, no bytes, no enums left
    case_done = event_json(every_event()[4], CONFIG)
    assert case_done["phase"] == "catalogue" and case_done["findings"] == [FINDING.fingerprint]
    assert case_done["case"] == {"id": "empty-array", "family": "envelope", "title": "an empty batch",
                                 "target": "envelope/empty-array"}
    sample = event_json(ResourcesSampled(7, 10, 2048, None), CONFIG)
    assert {key: sample[key] for key in ("pid", "requests", "rss", "fds", "threads", "processes")} == {
        "pid": 7, "requests": 10, "rss": 2048, "fds": None, "threads": 0, "processes": 1}
    finished = event_json(every_event()[-1], CONFIG)
    assert finished["stopped"] == "budget" and finished["findings"] == [FINDING.fingerprint]
    assert finished["stats"]["phases"] == {"catalogue": 3} and finished["version"] == 1


def test_the_event_log_redacts_secrets_and_writes_a_line_per_event(tmp_path: Path) -> None:
    path = tmp_path / "events.ndjson"
    log = EventLog(CONFIG, str(path))
    log.start()
    for event in every_event():
        log.handle(event)
    log.finish()
    text = path.read_text(encoding="utf-8")
    assert SECRET not in text and REDACTED in text
    lines = [json.loads(line) for line in text.splitlines()]
    assert [line["event"] for line in lines] == [type(event).__name__ for event in every_event()]


# -- --events end to end ------------------------------------------------------------------------


def test_events_to_stdout_stream_a_whole_run_that_matches_the_report(tmp_path: Path) -> None:
    """`--events -`: stdout is NDJSON only, the console on stderr, the stream agrees with the JSON report."""
    script = f'echo "starting with token $TOKEN" >&2; exec {sys.executable} {MCP_SERVER} --bug crash-batch ' \
             "--bug id-coerce"
    result = run_cli(["run", "--budget", "60", "--timeout", "1", "--seed", "3", "--phases", "catalogue,lifecycle",
                      "--json", str(tmp_path / "report.json"), "--events", "-", "--env", f"TOKEN={SECRET}", "--",
                      "sh", "-c", script], timeout=120)
    assert result.returncode == 1, result.stderr
    events = [json.loads(line) for line in result.stdout.splitlines()]
    assert SECRET not in result.stdout
    assert "findings" in result.stderr and "FAILED" in result.stderr  # the console went to stderr
    kinds = [event["event"] for event in events]
    assert kinds[0] == "RunStarted" and kinds[-1] == "RunFinished" and kinds.count("RunFinished") == 1
    times = [event["timestamp"] for event in events]
    assert times == sorted(times)

    order = ["probe", "lint", "catalogue", "lifecycle"]
    assert [event["name"] for event in events if event["event"] == "PhaseStarted"] == order
    case_phases = [order.index(event["phase"]) for event in events if event["event"] == "CaseDone"]
    # The lint phase judges declarations, not frames: it has no CaseDone of its own.
    assert case_phases == sorted(case_phases) and set(case_phases) == {0, 2, 3}

    report = json.loads((tmp_path / "report.json").read_text())
    found = {event["finding"]["fingerprint"]: event["finding"] for event in events if event["event"] == "FindingFound"}
    assert {finding["fingerprint"] for finding in report["findings"]} <= set(found)
    # The report's finding as it was first seen: the same shape and identity (a later repeat may add to its
    # message, a smaller reproducer replace its frames, the re-run on a fresh server set `reproducible`).
    stable = ("oracle", "severity", "tool", "title", "target", "fingerprint", "new", "observed")
    for finding in report["findings"]:
        first = found[finding["fingerprint"]]
        assert set(first) == set(finding)
        assert {key: first[key] for key in stable} == {key: finding[key] for key in stable}
    new_in_cases = {fp for event in events if event["event"] == "CaseDone" for fp in event["findings"]}
    assert new_in_cases == set(found)

    finished = events[-1]
    assert finished["findings"] == [finding["fingerprint"] for finding in report["findings"]]
    assert finished["stats"] == report["stats"] and finished["stopped"] is None and finished["seed"] == 3


def test_events_to_a_file_in_a_soak_with_workers(tmp_path: Path) -> None:
    """The workers' events relayed: one RunStarted (the lead's), the findings, one RunFinished at the end."""
    server = [sys.executable, str(SERVERS_DIR / "tool_server.py"), "--bug", "crash-at-maximum", "--bug",
              "crash-enum-pair"]
    result = run_cli(["soak", "--duration", "120", "--max-findings", "2", "--slice", "2", "--workers", "2",
                      "--phases", "coverage,fuzz", "--seed", "11", "--json", "report.json", "--events",
                      "events.ndjson", "--", *server], timeout=240, cwd=tmp_path)
    assert result.returncode == 1, result.stdout + result.stderr
    events = [json.loads(line) for line in (tmp_path / "events.ndjson").read_text().splitlines()]
    kinds = [event["event"] for event in events]
    assert kinds[0] == "RunStarted" and kinds.count("RunStarted") == 1
    assert kinds[-1] == "RunFinished" and kinds.count("RunFinished") == 1
    report = json.loads((tmp_path / "report.json").read_text())
    found = {event["finding"]["fingerprint"] for event in events if event["event"] == "FindingFound"}
    assert {finding["fingerprint"] for finding in report["findings"]} <= found
    assert events[-1]["stopped"] == "max-findings" == report["stopped"]
    assert events[-1]["stats"]["soak"]["workers"] == 2


def test_events_refused_where_they_cannot_go(tmp_path: Path) -> None:
    """A stream that cannot be opened is exit 2 before the server starts; --compare runs two servers."""
    missing = run_cli(["run", "--events", str(tmp_path / "no" / "such" / "dir.ndjson"), "--", sys.executable,
                       str(MCP_SERVER)])
    assert missing.returncode == 2 and "cannot write the event stream" in missing.stderr, missing.stderr
    assert "Traceback" not in missing.stderr
    compare = run_cli(["run", "--events", "-", "--compare", f"{sys.executable} {MCP_SERVER}", "--", sys.executable,
                       str(MCP_SERVER)])
    assert compare.returncode == 2 and "--compare" in compare.stderr and not compare.stdout
