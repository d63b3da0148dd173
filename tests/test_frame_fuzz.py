"""Random frames (the fuzz phase's frame search): correct servers give no frame finding; each bug of a buggy
server is caught by its oracle from the fuzz phase alone and shrinks to a minimal frame that the corpus saves
and replays. Runs are shared across assertions (module fixtures) to keep the file fast."""

from __future__ import annotations

import itertools
import json
import re
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import anyio
import pytest
from hypothesis import HealthCheck, given, settings
from mcpfuzz.strategies.frames.bytes import MAX_FRAME
from mcpfuzz.strategies.frames.context import FrameContext
from mcpfuzz.strategies.frames.expect import expect_frame
from mcpfuzz.strategies.frames.mutations import FAMILIES, frame_drafts

from mcpfuzz.engine.config import RunConfig
from mcpfuzz.engine.events import CaseDone, Finding, FindingFound, RunFinished
from mcpfuzz.engine.replay import FAILED, FIXED, load_replayables, replay_one
from mcpfuzz.engine.runner import run
from mcpfuzz.engine.searches.frame_fuzz import FRAME_FIRST_ID
from mcpfuzz.engine.session.session import HARNESS_FIRST_ID, SessionOptions
from mcpfuzz.jsonrpc import expectation as ex
from mcpfuzz.jsonrpc.case_json import expectation_to_json
from mcpfuzz.jsonrpc.parts.past_limit import PastLimit
from mcpfuzz.jsonrpc.versions import Era
from mcpfuzz.oracles.base import Severity, all_oracles
from mcpfuzz.transport.stdio_target import StdioTarget
from tests.conftest import EXAMPLE_COMMAND
from tests.engine_runs import fixture_command

pytestmark = pytest.mark.slow

SEED = 7
FUZZ_ONLY = ("probe", "fuzz")
SDK2_SERVER = Path(__file__).parent / "sdk_servers" / "sdk2_server.py"
TOOLS = ("echo", "add", "get_note")  # of tests/servers/mcp_server.py
TOOL = {"name": "echo", "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}},
                                        "required": ["text"]}}
CONTEXTS = {
    "legacy": FrameContext(Era.LEGACY, "2025-11-25", TOOL, {"text": ""}, False, frozenset({"echo"})),
    "batch": FrameContext(Era.LEGACY, "2025-03-26"),
    "modern": FrameContext(Era.MODERN, "2026-07-28", TOOL, {"text": ""}, False, frozenset({"echo"})),
}


# -- the strategies and the reading of frames (no process) ----------------------------------------------------

@pytest.mark.parametrize("era", sorted(CONTEXTS))
@pytest.mark.parametrize("family", FAMILIES)
def test_drawn_frames_are_single_lines_with_stable_targets_and_own_ids(era: str, family: str) -> None:
    """One line each (a CR only last), at most 1 MiB of whitespace, target frames/<family>, ids of our own."""
    ctx = CONTEXTS[era]
    fresh = itertools.count(FRAME_FIRST_ID + 1)
    seen: list[str] = []

    @settings(max_examples=25, database=None, deadline=None, suppress_health_check=list(HealthCheck))
    @given(frame_drafts(ctx, family))
    def check(draft: object) -> None:
        case = draft.case(ctx, lambda: next(fresh))  # type: ignore[attr-defined]
        assert b"\n" not in case.data and b"\r" not in case.data.rstrip(b"\r")
        assert len(case.data) <= MAX_FRAME + 2048
        assert case.target == f"frames/{family}"
        json.dumps(expectation_to_json(case.expect))  # a transcript can store it
        for rid in draft.explicit_ids:  # type: ignore[attr-defined]
            # Clear of the catalogue's (100+), the harness's, the tool calls' and the fresh ids.
            assert not (isinstance(rid, int) and 100 <= rid < 2**53), rid
            assert not (isinstance(rid, str) and rid.isdecimal() and int(rid) >= HARNESS_FIRST_ID), rid
        seen.append(case.expect.judge)

    check()
    assert len(seen) >= 20


FRAME = b'{"jsonrpc":"2.0","id":1,"method":"ping"}'
LEGACY = CONTEXTS["legacy"]


@pytest.mark.parametrize(("data", "judge", "rid", "codes", "result_ok", "null_ok"), [
    (FRAME, "no-hang", 1, set(), True, False),
    (b"[]", "invalid-request", None, {ex.INVALID_REQUEST}, False, False),
    (FRAME[:-1], "parse-error", None, {ex.PARSE_ERROR}, False, False),
    (b"\xef\xbb\xbf" + FRAME, "parse-error", 1, {ex.PARSE_ERROR}, True, True),  # RFC 8259 8.1: a BOM may be ignored
    (FRAME[:-1] + b',"method":"ping"}', "parse-error", 1, {ex.PARSE_ERROR}, True, True),  # a key twice, same value
    (FRAME + FRAME.replace(b":1,", b":2,"), "parse-error", 1, {ex.PARSE_ERROR}, True, True),  # two on a line
    (FRAME.replace(b'"2.0"', b'"1.0"').replace(b"ping", b"mcpfuzz/x"), "invalid-request", 1,
     {ex.INVALID_REQUEST, ex.METHOD_NOT_FOUND}, False, False),  # every defect's code is accepted
    (FRAME[:-1] + b',"params":"x"}', "invalid-params", 1, {ex.INVALID_PARAMS, ex.INVALID_REQUEST}, True, False),
    (FRAME.replace(b":1,", b':"0",'), "no-hang", "0", set(), True, False),
    (FRAME.replace(b":1,", b":1.5,"), "invalid-request", 1.5, {ex.INVALID_REQUEST}, False, True),
])
def test_expectation_is_read_from_the_final_bytes(data: bytes, judge: str, rid: object, codes: set[int],
                                                  result_ok: bool, null_ok: bool) -> None:
    """The rules of the catalogue, applied to whatever bytes the mutations left."""
    expect = expect_frame(data, LEGACY)
    assert (expect.judge, expect.id, set(expect.codes), expect.result_ok, expect.null_id_ok) == \
        (judge, rid, codes, result_ok, null_ok)


def test_silence_on_a_deep_request_for_an_unknown_method_is_the_depth_limits() -> None:
    """mcp's stdio drops a frame nested past 200 levels whatever its method: for an unknown method too, that is one
    low no-hang finding (limit:nesting, the SDK's known behaviour), not a medium method-not-found one; an invalid
    envelope that is also deep stays invalid-request's."""
    deep = b'{"jsonrpc":"2.0","id":7,"method":"mcpfuzz/","params":{"deep":' + b"[" * 220 + b"1" + b"]" * 220 + b"}}"
    expect = expect_frame(deep, LEGACY)
    assert (expect.judge, expect.part(PastLimit)) == ("method-not-found", PastLimit(ex.ReaderLimit.NESTING))
    invalid = deep.replace(b'"jsonrpc":"2.0",', b"")
    assert not expect_frame(invalid, LEGACY).has(PastLimit)


def test_a_frame_past_the_nesting_and_integer_limits_blames_the_one_an_sdk_enforces() -> None:
    """96 deep with an id of 2**64: the TypeScript SDK drops it for the id (its known behaviour), as no SDK's
    reader stops at 96 levels; 220 deep, mcp's reader refuses the depth first."""
    def frame(levels: int) -> bytes:
        return (b'{"jsonrpc":"2.0","id":18446744073709551616,"method":"mcpfuzz/x","params":{"deep":'
                + b"[" * levels + b"1" + b"]" * levels + b"}}")

    assert expect_frame(frame(96), LEGACY).part(PastLimit) == PastLimit(ex.ReaderLimit.BIG_INTEGER)
    assert expect_frame(frame(220), LEGACY).part(PastLimit) == PastLimit(ex.ReaderLimit.NESTING)
    assert expect_frame(frame(96), LEGACY).codes == frozenset()  # any refusal of a deep frame stays allowed


def test_frames_the_spec_leaves_open_expect_nothing_but_survival() -> None:
    """Conflicting duplicate ids, a notification with bad params, a big notification: no reply is due, none banned."""
    for data in (b'{"jsonrpc":"2.0","id":1,"id":2,"method":"ping"}',
                 b'{"jsonrpc":"2.0","method":"ping","params":"x"}',
                 b'{"jsonrpc":"2.0","method":"ping"' + b" " * (MAX_FRAME // 2) + b"}"):
        expect = expect_frame(data, LEGACY, (1, 2))
        assert not expect.reply and expect.judge == "no-hang" and expect.note, data[:60]
    assert expect_frame(b'[{"jsonrpc":"2.0","id":1,"method":"ping"}]', CONTEXTS["batch"]).well_formed


# -- live runs --------------------------------------------------------------------------------------------------

@dataclass
class FuzzRun:
    """A run of the probe and fuzz phases, with when each finding and each case happened."""

    finished: RunFinished
    found_at: dict[str, float] = field(default_factory=dict)  # fingerprint -> seconds into the run
    cases: list[tuple[float, CaseDone]] = field(default_factory=list)

    def frame_findings(self) -> list[Finding]:
        """Findings of the frame search."""
        return [f for f in self.finished.findings if f.target.startswith("frames/")]

    def one(self, oracle: str) -> Finding:
        """The single frame finding of `oracle`."""
        (finding,) = [f for f in self.frame_findings() if f.oracle == oracle]
        return finding

    def shrink_seconds(self, finding: Finding) -> float:
        """From the first failure to the first time its final (smallest) frame was sent."""
        sent = min(at for at, case in self.cases
                   if case.exchange.case.target == finding.target and case.exchange.case.data == finding.frames[-1])
        return sent - self.found_at[finding.fingerprint]


def fuzz_run(command: list[str], *, examples: int, version: str | None = None, timeout: float = 2.0,
             corpus: Path | None = None, exclude_tools: tuple[str, ...] = ()) -> FuzzRun:
    """Probe and fuzz only, counted (--max-examples) rather than timed, so the budget never cuts it short."""
    config = RunConfig(command=command, seed=SEED, timeout=timeout, grace=0.05, budget=150,
                       oracles=tuple(all_oracles()), protocol_version=version, phases=FUZZ_ONLY, corpus=corpus,
                       max_examples=examples,
                       exclude_targets=tuple(f"tool/{name}" for name in exclude_tools))
    started = time.monotonic()
    record = FuzzRun(None)  # type: ignore[arg-type]

    def emit(event: object) -> None:
        if isinstance(event, FindingFound):
            record.found_at[event.finding.fingerprint] = time.monotonic() - started
        elif isinstance(event, CaseDone):
            record.cases.append((time.monotonic() - started, event))

    record.finished = anyio.run(run, config, emit)
    assert not record.finished.error and not record.finished.stopped, (record.finished.error, record.finished.stopped)
    return record


def _show(findings: list[Finding]) -> list[tuple[str, str, str, str, bytes]]:
    return [(f.oracle, str(f.severity), f.target, f.message[:100], f.frames[-1][:120]) for f in findings]


def _report(name: str, record: FuzzRun) -> None:
    """For the closing note: frames beyond the handshake and seconds to shrink, per finding."""
    for finding in record.frame_findings():
        print(f"{name}: {finding.oracle} on {finding.target}: {len(finding.frames)} frames "
              f"({len(finding.frames[-1])} bytes last), shrunk in {record.shrink_seconds(finding):.2f}s")


@pytest.mark.parametrize(("bug", "version", "tools"),
                         [("modern-only", None, True), ("legacy-only", "2025-03-26", False)])
def test_correct_server_gives_no_finding_on_500_random_frames(bug: str, version: str | None, tools: bool) -> None:
    """Every drawn frame's expectation holds on the spec-correct server, in the modern era and in 2025-03-26
    (there without its tools, to save time: then all of the fuzz phase is frames, and no tools/call frame)."""
    record = fuzz_run(fixture_command(bug), examples=100, version=version, exclude_tools=() if tools else TOOLS)
    assert _show(list(record.finished.findings)) == []
    assert record.finished.stats.frame_cases >= 100 * len(FAMILIES)  # type: ignore[attr-defined]
    # Fresh ids are handed out per frame, never twice in a run (MCP ids are unique per session).
    fresh = [set(re.findall(rb"1099511\d{6}", case.exchange.case.data)) for _, case in record.cases]
    assert sum(map(len, fresh)) == len(set().union(*fresh)) > 300


# The example server's documented bugs that frames reach (mcpfuzz/example/__main__.py), by oracle and key.
EXAMPLE_BUGS = {
    "id-preserved": "string->integer",  # 1
    "no-crash": "crash:",  # 2 (a batch)
    "invalid-request": "code:-32603",  # 4
    "invalid-params": "code:-32603",  # 5 (an unknown tool)
    "no-internal-leak": "trace",  # 5
    "parse-error": "silent-low",  # silent on unparseable input, like the SDKs
}


def test_example_server_frame_findings_are_its_documented_bugs() -> None:
    """Every frame finding on the bundled example is one of its documented bugs; the common ones are found."""
    record = fuzz_run(EXAMPLE_COMMAND, examples=8)
    findings = record.frame_findings()
    assert all(f.key.startswith(EXAMPLE_BUGS.get(f.oracle, "<none>")) for f in findings), _show(findings)
    assert {f.oracle for f in findings} >= {"id-preserved", "no-crash", "invalid-request", "parse-error"}, \
        _show(findings)


@pytest.mark.sdk
def test_mcp_2x_server_frame_findings_are_its_known_habits() -> None:
    """mcp 2.3.0: only the habits tests/sdk_servers/SURVEY.md records (checked by hand) may show up."""
    pytest.importorskip("mcp.server.mcpserver")
    record = fuzz_run([sys.executable, str(SDK2_SERVER)], examples=5, timeout=5)
    for finding in record.frame_findings():
        silent = finding.key.startswith("silent-")  # no reply to an invalid frame
        unknown_tool = (finding.oracle, finding.key) == ("invalid-params", "result")  # isError, not -32602
        # RFC 8259 section 9: refusing deep nesting is allowed; dropping it silently is one low finding.
        too_deep = (finding.oracle, finding.key, finding.severity) == ("no-hang", "limit:nesting", Severity.LOW)
        assert silent or unknown_tool or too_deep, _show([finding])
    assert any(f.key == "silent-medium" for f in record.frame_findings())


# -- buggy servers: the right oracle, a minimal reproducer --------------------------------------------------------

ID_ZERO_PING = b'{"jsonrpc":"2.0","id":"0","method":"ping"}'
# Five bugs at once (2025-03-26, the batch revision), each caught by its own oracle.
LEGACY_BUGS = ("legacy-only", "id-coerce", "invalid-request-code", "parse-code", "crash-batch")
INVALID_ID_PING = re.compile(rb'\{"jsonrpc":"2\.0","id":(null|\[\]|\{\}|true|false|1\.5),"method":"ping"\}')


@pytest.fixture(scope="module")
def legacy_bugs(tmp_path_factory: pytest.TempPathFactory) -> tuple[FuzzRun, Path]:
    corpus = tmp_path_factory.mktemp("frames") / "corpus"
    return fuzz_run(fixture_command(*LEGACY_BUGS), examples=40, version="2025-03-26", corpus=corpus), corpus


def test_each_bug_is_caught_by_its_oracle_and_shrunk_to_one_small_frame(legacy_bugs: tuple[FuzzRun, Path]) -> None:
    """From the fuzz phase alone: each bug by its oracle, nothing else; each reproducer one frame after the
    handshake, minimal, and failing again on a fresh server."""
    record, _ = legacy_bugs
    _report("legacy bugs", record)
    assert {f.oracle for f in record.finished.findings} == \
        {"id-preserved", "invalid-request", "parse-error", "no-crash"}, _show(list(record.finished.findings))
    for finding in record.frame_findings():
        assert len(finding.frames) == 3 and finding.reproducible, _show([finding])  # initialize, initialized, it
    coerced = record.one("id-preserved")
    assert (coerced.target, coerced.severity, coerced.frames[-1]) == ("frames/id", Severity.HIGH, ID_ZERO_PING)
    assert record.one("parse-error").frames[-1] == b"{"
    assert record.one("no-crash").frames[-1] == b"[]"
    assert INVALID_ID_PING.fullmatch(record.one("invalid-request").frames[-1]), record.one("invalid-request").frames


def test_only_arrays_crash_it_so_no_dead_server_passed_for_a_failing_frame(legacy_bugs: tuple[FuzzRun, Path]) -> None:
    """crash-batch kills the server on arrays only: every crash was on an array and was followed by a restart,
    so shrinking never took a dead server's silence for a failure."""
    record, _ = legacy_bugs
    crashed = [case.exchange.case.data for _, case in record.cases if case.exchange.crash is not None]
    assert crashed and all(data.startswith(b"[") for data in crashed), [d[:40] for d in crashed]
    assert record.finished.stats.restarts >= len(crashed)


def test_frame_transcripts_replay_failed_on_the_bug_and_fixed_without_it(legacy_bugs: tuple[FuzzRun, Path]) -> None:
    """The corpus holds the shrunk frames; replayed on a fresh server they fail with the bug and pass without."""
    record, corpus = legacy_bugs
    replayables, broken = load_replayables([corpus])
    assert not broken
    frames = {r.case.target: r.case.data for r in replayables if r.case.target.startswith("frames/")}
    assert frames == {f.target: f.frames[-1] for f in record.frame_findings()}
    options = SessionOptions(timeout=2.0, grace=0.05)
    oracles = tuple(all_oracles())

    async def replay_all(command: list[str]) -> set[str]:
        return {(await replay_one(r, StdioTarget(tuple(command)), options, oracles)).status for r in replayables}

    assert anyio.run(replay_all, fixture_command(*LEGACY_BUGS)) == {FAILED}
    assert anyio.run(replay_all, fixture_command("legacy-only")) == {FIXED}


def test_silent_invalid_requests_are_found_by_invalid_request() -> None:
    """No reply to invalid requests: medium where the id was readable; nothing else above low."""
    record = fuzz_run(fixture_command("silent-invalid-request"), examples=20)
    _report("silent-invalid-request", record)
    silent = [f for f in record.frame_findings() if (f.oracle, f.severity) == ("invalid-request", Severity.MEDIUM)]
    assert len(silent) == 1 and len(silent[0].frames[-1]) < 120, _show(record.frame_findings())
    assert all(f.severity is Severity.LOW for f in record.finished.findings if f is not silent[0]), \
        _show(list(record.finished.findings))
