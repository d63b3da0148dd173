"""One finding per root cause: stdout noise by its line's template, a stopped server by its stderr line, one frame
judged by two oracles, one SDK behaviour on many targets; never merged because two messages read alike.

Pure tests on hand-built exchanges, and real servers (tests/servers) over real pipes.
"""

from __future__ import annotations

import json
import sys
from dataclasses import replace
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import anyio
import pytest
from rich.console import Console

from mcpfuzz.engine.baseline import Baseline, BaselineEntry
from mcpfuzz.engine.events import Finding, Occurrence, Upstream, fingerprint_of
from mcpfuzz.engine.judge import MAX_OCCURRENCES, FindingSet, group_by_upstream, group_under_tools
from mcpfuzz.engine.plan.finishing import apply_baseline
from mcpfuzz.engine.session.session import Session, SessionOptions
from mcpfuzz.jsonrpc import expectation as ex
from mcpfuzz.jsonrpc.exchange import Exchange, ProcessEnd
from mcpfuzz.jsonrpc.expectation import Expectation
from mcpfuzz.jsonrpc.frame import Case
from mcpfuzz.jsonrpc.oracle_ids import OracleId
from mcpfuzz.jsonrpc.parts.leniency import QuietOk
from mcpfuzz.jsonrpc.parts.tool_call import ToolCallCheck
from mcpfuzz.oracles.base import Severity, all_oracles
from mcpfuzz.oracles.crash_signature import crash_signature
from mcpfuzz.oracles.templates import line_template
from mcpfuzz.report.finding_console import FindingPrinter, occurrence_lines
from mcpfuzz.report.triage import causes
from mcpfuzz.transport.stdio_target import StdioTarget
from tests.conftest import run_cli
from tests.engine_runs import SERVERS
from tests.test_oracles_pure import exchange, result

pytestmark = pytest.mark.process

NOISY_SITES = [sys.executable, str(SERVERS / "noisy_sites_server.py")]
ONE_CAUSE = [sys.executable, str(SERVERS / "one_cause_server.py")]
DEAF_AFTER_MALFORMED = [sys.executable, str(SERVERS / "deaf_after_malformed.py")]
EVERY = tuple(all_oracles())


def at(target: str, built: Exchange) -> Exchange:
    """The same exchange as if its case had been another target (`family/id`)."""
    family, _, name = target.partition("/")
    built.case = replace(built.case, family=family, id=name)
    return built


def judged(*exchanges: Exchange) -> list[Finding]:
    findings = FindingSet()
    for one in exchanges:
        findings.judge(one, EVERY)
    return findings.all()


# ---- templates -------------------------------------------------------------------------------------------------


def test_a_line_template_masks_values_and_keeps_the_statement() -> None:
    assert line_template("Validating path: /tmp/a b/c.txt") == line_template("Validating path: /srv/x/y/z.json")
    assert line_template("req 550e8400-e29b-41d4-a716-446655440000 in 12ms (0x7f3a)") == \
        line_template("req 0f3c1a2b-0000-41d4-a716-000000000000 in 3ms (0xdead)")
    assert line_template("user 'alice' logged in") == line_template('user "bob" logged in')
    assert line_template("handled 7") == line_template("handled 'seven'")  # a value printed quoted or not
    assert line_template("Validating path: /x") != line_template("Allowed directories: /x")
    # A line whose only varying part is a number keeps the key earlier versions gave it.
    assert line_template("debug: listing 3 tools") == "debug: listing # tools"
    assert line_template("can't stop") == "can't stop"


def test_a_crash_signature_tells_two_dotnet_exceptions_apart() -> None:
    """Two .NET exceptions that end in the same outer frame are two causes (the stack is read, not the last line)."""
    first = ("Unhandled exception. System.InvalidOperationException: Sequence contains no elements\n"
             "   at System.Linq.ThrowHelper.ThrowNoElementsException()\n"
             "   at App.Tools.First(String s) in /src/Tools.cs:line 12\n"
             "   at Program.<Main>$(String[] args) in /src/Program.cs:line 5")
    second = ("Unhandled exception. System.ArgumentException: Value does not fall within the expected range.\n"
              "   at App.Tools.Second(Int32 n) in /src/Tools.cs:line 40\n"
              "   at Program.<Main>$(String[] args) in /src/Program.cs:line 5")
    assert crash_signature(first) != crash_signature(second)
    assert "App.Tools.First" in crash_signature(first) and "/src" not in crash_signature(first)
    java = 'Exception in thread "main" java.lang.IllegalStateException: boom\n\tat app.Tools.handler(Tools.java:12)'
    assert crash_signature(java).startswith("Exception in thread # java.lang.IllegalStateException: boom@app.Tools")


# ---- stdout noise ----------------------------------------------------------------------------------------------


def noisy(target: str, *lines: bytes) -> Exchange:
    return at(target, exchange(ex.any_answer(1, "ping"), *lines, result(1)))


def test_stdout_noise_is_one_finding_per_writer_with_each_shape_sampled() -> None:
    """Two print statements on forty frames: one writer to fix, so one finding; each statement is a sample,
    counted, with its first line; every line is an occurrence."""
    built = [noisy(f"tool/t{n}", f"Validating path: /tmp/work/{n}/file-{n}.txt".encode(),
                   f"[debug] request {n} took {n * 7}ms".encode()) for n in range(40)]
    findings = judged(*built)
    assert [f.key for f in findings] == ["noise"]
    (noise,) = findings
    assert noise.where == "*" and noise.occurrence_count == 80 and len(noise.also_on) == 39
    assert noise.occurrences[2] == Occurrence("tool/t1", "Validating path: /tmp/work/1/file-1.txt")
    assert [(s.evidence, s.count, s.target, s.detail) for s in noise.samples] == [
        ("Validating", 40, "tool/t0", "Validating path: /tmp/work/0/file-0.txt"),
        ("[debug]", 40, "tool/t0", "[debug] request 0 took 0ms")]
    # A baseline written when each statement was a finding of its own still accepts the writer's finding.
    legacy = {fingerprint_of("stdout-clean", "*", "noise:" + line_template(line))
              for line in ("Validating path: /x", "[debug] request 1 took 2ms")}
    assert legacy <= set(noise.grouped)
    lines = occurrence_lines(noise, every=False)
    assert lines[0] == "40 like 'Validating path: /tmp/work/0/file-0.txt' (first on tool/t0)", lines
    assert lines[-1].startswith("80 lines in all on 40 targets"), lines


def test_occurrences_are_kept_up_to_the_bound_and_counted_beyond_it() -> None:
    findings = FindingSet()
    for n in range(MAX_OCCURRENCES + 25):
        findings.judge(noisy("tool/t", f"tick {n}".encode()), (OracleId.STDOUT_CLEAN.value,))
    (finding,) = findings.all()
    assert len(finding.occurrences) == MAX_OCCURRENCES
    assert finding.occurrence_count == MAX_OCCURRENCES + 25


# ---- a server that stopped answering ---------------------------------------------------------------------------


def stopped(target: str, stderr: str) -> Exchange:
    built = at(target, exchange(ex.parse_error(), frame=b'{"jsonrpc":', barrier=False))
    built.stderr_tail = stderr
    return built


def test_a_server_that_stops_the_same_way_on_every_malformed_frame_is_one_finding() -> None:
    said = "go-server: listening\nError running MCP server: invalid character {!r} looking for beginning of value"
    findings = judged(*(stopped(f"parse/p{n}", said.format(chr(97 + n))) for n in range(11)))
    hangs = [f for f in findings if f.oracle == "no-hang"]
    assert len(hangs) == 1, [f.key for f in hangs]
    assert len(hangs[0].also_on) == 10 and hangs[0].severity is Severity.CRITICAL
    assert "the server's stderr said: Error running MCP server" in hangs[0].message


def test_stops_with_other_stderr_lines_or_none_stay_apart() -> None:
    findings = judged(stopped("parse/a", "Error running MCP server: invalid character 'x'"),
                      stopped("parse/b", "panic: runtime error: index out of range [3]"),
                      stopped("parse/c", "listening on stdio"), stopped("parse/d", ""))
    hangs = sorted(f.target for f in findings if f.oracle == "no-hang")
    assert hangs == ["parse/a", "parse/b", "parse/c", "parse/d"]


# ---- one frame, two oracles ------------------------------------------------------------------------------------


def test_a_fractional_id_served_as_an_integer_is_one_finding_naming_the_other_oracle() -> None:
    expect = Expectation(judge=OracleId.INVALID_REQUEST, id=1.5, id_recoverable=True, null_id_ok=True,
                         codes=frozenset({ex.INVALID_REQUEST}), parts=(QuietOk(),))
    built = at("id/fraction", exchange(expect, result(1), frame=b'{"jsonrpc":"2.0","id":1.5,"method":"ping"}'))
    (finding,) = judged(built)
    assert finding.oracle == "invalid-request" and finding.also_judged == ("id-preserved",)
    assert "id-preserved judged the same frame: request id 1.5" in finding.message
    # The id-preserved identity it stands for is kept, so a baseline that accepted it still finds it.
    alone = FindingSet().judge(built, (OracleId.ID_PRESERVED.value,))
    assert finding.grouped == (alone[0].fingerprint,)


def test_a_changed_id_on_a_frame_whose_own_rule_holds_stays_its_own_finding() -> None:
    built = at("id/string-digits", exchange(ex.any_answer("7", "ping"), result(7)))
    assert [f.oracle for f in judged(built)] == ["id-preserved"]


# ---- identity is the cause, never the message ------------------------------------------------------------------


def test_two_result_problems_that_share_their_first_words_are_two_findings() -> None:
    """The declared result schema broken at two places: the same words up to the place, two causes."""
    schema = {"type": "object", "properties": {"alpha": {"type": "object", "properties": {
        "first": {"type": "integer"}, "second": {"type": "integer"}}}}}
    call = ToolCallCheck("m", valid=True, result_schema=schema)

    def answered(target: str, value: dict[str, Any]) -> Exchange:
        expect = ex.result(1, "math/add").with_part(call)
        return at(target, exchange(expect, result(1, value)))

    findings = judged(answered("method/a", {"alpha": {"first": "x"}}), answered("method/b", {"alpha": {"second": "y"}}),
                      answered("method/c", {"alpha": {"first": "z"}}))
    shapes = [f for f in findings if f.oracle == "response-schema"]
    assert len(shapes) == 2, [f.key for f in shapes]
    assert {f.target for f in shapes} == {"method/a", "method/b"}


def finding(target: str, oracle: str = "invalid-params", upstream: Upstream | None = None, key: str = "code:-32602",
            message: str = "answered error -32602") -> Finding:
    return Finding(oracle=oracle, severity=Severity.MEDIUM, title="t", message=message, target=target,
                   case_title="c", expected="e", frames=(b"{}",), received=(), key=key, upstream=upstream,
                   occurrences=(Occurrence(target),), occurrence_count=1)


ZOD = Upstream("the TypeScript SDK 1.17.0", "zod strips an argument additionalProperties forbids", "https://x/1")


def test_one_sdk_behaviour_on_many_targets_is_one_finding_with_the_others_in_also_on() -> None:
    tools = [finding(f"tool/t{n}", upstream=ZOD) for n in range(8)]
    other = finding("tool/own", message="answered error -32602")  # the same words, the server's own code
    grouped = group_by_upstream((*tools, other))
    assert len(grouped) == 2
    sdk, own = grouped
    assert sdk.target == "tool/t0" and sdk.also_on == tuple(f"tool/t{n}" for n in range(1, 8))
    assert sdk.fingerprint == tools[0].fingerprint  # the cause kept its first target's fingerprint
    assert set(sdk.grouped) == {f.fingerprint for f in tools[1:]}
    assert sdk.occurrence_count == 8 and own == other


def test_findings_with_the_same_message_but_other_keys_stay_apart() -> None:
    """Three causes whose messages read alike (one SDK row aside) are three findings: identity is the key."""
    findings = FindingSet()
    for key in ("code:-32603", "code:-32000", "result"):
        findings.add_observed(finding("server", key=key, message="the server failed"))
    assert len(findings.all()) == 3
    assert len(group_by_upstream(tuple(findings.all()))) == 3


def test_a_tools_failure_seen_again_through_a_mutated_frame_is_the_tools_one_finding() -> None:
    """mcp-go's time server accepted invalid arguments on `tool/current_time` and again on a `frames/envelope`
    frame calling current_time: one cause, led by the tool's own target; another tool's frame stays apart."""
    def call(name: str) -> tuple[bytes, ...]:
        return (json.dumps({"jsonrpc": "2.0", "id": 7, "method": "tools/call",
                            "params": {"name": name, "arguments": {"timezone": [1]}}}).encode(),)

    frame = replace(finding("frames/envelope", key="accepted"), frames=call("current_time"))
    tool = replace(finding("tool/current_time", key="accepted"), tool="current_time")
    other_tool = replace(finding("frames/bytes", key="accepted"), frames=call("compare_time"))
    other_key = replace(finding("frames/nesting", key="code:-32600"), frames=call("current_time"))
    grouped = group_under_tools((frame, tool, other_tool, other_key))
    assert [f.target for f in grouped] == ["tool/current_time", "frames/bytes", "frames/nesting"]
    assert grouped[0].also_on == ("frames/envelope",) and grouped[0].grouped == (frame.fingerprint,)


# ---- real servers ----------------------------------------------------------------------------------------------


def test_a_server_printing_from_two_sites_gives_one_finding_on_one_screen(tmp_path: Path) -> None:
    """Lines that differ on every frame (ids, numbers, paths, hex) from two print statements: one writer, one
    cause, the two statements its samples."""
    # One run read twice: the finding as the engine filed it (the JSON report holds its fingerprint, made of its
    # oracle, scope and key) and the console's screen.
    result = run_cli(["run", "--phases", "catalogue,coverage", "--json", "report.json", "--", *NOISY_SITES],
                     cwd=tmp_path, timeout=120)
    report = json.loads((tmp_path / "report.json").read_text())
    assert report["error"] is None, report["error"]
    (entry,) = report["findings"]  # the noise is the only finding
    assert entry["oracle"] == "stdout-clean" and entry["fingerprint"] == fingerprint_of("stdout-clean", "*", "noise")
    assert sorted(s["evidence"] for s in entry["samples"]) == ["Validating", "[debug]"], entry["samples"]
    assert all(s["count"] > 1 for s in entry["samples"]), entry["samples"]
    # The console: one screen per cause, the lines summarised; the JSON report: every occurrence, each shape.
    assert len(entry["occurrences"]) == entry["occurrence_count"] > 1, result.stdout
    assert all(o["detail"] for o in entry["occurrences"])
    assert entry["scope"] == "*" and entry["sample_count"] == 2
    assert all(s["frames"] and s["detail"] for s in entry["samples"])
    assert " lines in all on " in result.stdout, result.stdout
    assert len(result.stdout.splitlines()) < 60, result.stdout


def test_a_server_whose_transport_dies_on_the_first_malformed_line_is_one_cause() -> None:
    """The process stays alive and answers nothing after a line it cannot decode (as the Go SDK's stdio
    transport does): every malformed frame shows the same stderr line, so it is one no-hang finding."""
    frames = [b'{"jsonrpc":"2.0","id":', b"xx{", b"}{", b'{"jsonrpc":"2.0","id":1,"method":"ping"', b"@@@"]

    async def main() -> list[Finding]:
        findings = FindingSet()
        async with Session(StdioTarget(tuple(DEAF_AFTER_MALFORMED)), SessionOptions(timeout=1.0, grace=0.05)) \
                as session:
            for number, frame in enumerate(frames):
                await session.ensure_ready()
                built = await session.run_case(Case(f"f{number}", "parse", "malformed", frame, ex.parse_error()))
                assert built.barrier_answered is False and built.crash is None  # alive, and deaf
                findings.judge(built, EVERY)
        return findings.all()

    findings = anyio.run(main)
    assert [f.oracle for f in findings] == ["no-hang"], [f"{f.oracle} {f.target} {f.key}" for f in findings]
    (hang,) = findings
    assert hang.key == "stuck-after:Error running MCP server: invalid character # looking for beginning of value " \
                       "(offset #)"
    assert len(hang.also_on) == len(frames) - 1 and hang.occurrence_count == len(frames)


def test_the_console_summarises_the_occurrences_of_a_cause() -> None:
    """The console at normal verbosity: the first lines of a cause and a count of the rest."""
    end = ProcessEnd(1, "Traceback (most recent call last):\n  File \"/srv/a.py\", line 3, in handler\nValueError: 3")
    crash = [at(f"tool/t{n}", exchange(ex.any_answer(1, "ping"), crash=end)) for n in range(3)]
    built = [noisy(f"tool/t{n}", f"GET /items/{n} 200".encode()) for n in range(30)]
    console = Console(record=True, width=200)
    printer = FindingPrinter(console, StdioTarget(("server",)), "mcpfuzz", 1)
    for number, found in enumerate(judged(*crash, *built), 1):
        printer.full(number, found, None)
    text = console.export_text()
    assert "GET /items/0 200" in text and "GET /items/1 200" not in text, text  # one line per shape, the rest counted
    assert "30 like 'GET /items/0 200'" in text and "30 lines in all on 30 targets" in text, text


# ---- triage: the report opens with one line per cause ----------------------------------------------------------


def test_each_cause_is_one_triage_line_saying_where_the_fix_belongs() -> None:
    sdk = replace(finding("tool/t0", upstream=ZOD), also_on=("tool/t1", "tool/t2"))
    own = replace(finding("tool/own", oracle="no-crash", key="crash:x"), severity=Severity.CRITICAL,
                  message="the server exited with status 1 after this frame\nstderr tail:\n...",
                  stderr_tail="Traceback (most recent call last):\n  File \"a.py\", line 1, in f\nKeyError: 'x'")
    first, second = causes([own, sdk])
    assert first.describe() == "CRITICAL no-crash · 1 target · fix: server · the server exited with status 1 " \
                               "after this frame: KeyError: 'x'"
    assert second.fix == "SDK TypeScript SDK 1.17.0" and second.link == ZOD.link and second.targets == 3


def test_a_server_with_three_causes_on_many_frames_gives_three_findings(tmp_path: Path) -> None:
    """Path tools logging their argument to stdout as a free tail, validating no arguments, and a dispatcher
    answering unknown notifications: a real run finds exactly three causes, each naming where it showed; the
    console and the HTML report open with them, and the footer counts them."""
    result = run_cli(["run", "--phases", "catalogue,coverage", "--json", "report.json", "--html", "report.html",
                      "--", *ONE_CAUSE], cwd=tmp_path, timeout=150)
    report = json.loads((tmp_path / "report.json").read_text())
    found = {entry["oracle"]: entry for entry in report["findings"]}
    assert sorted(found) == ["invalid-params", "notification-silent", "stdout-clean"], result.stdout
    assert len(report["findings"]) == 3, result.stdout
    noise, unvalidated, replied = found["stdout-clean"], found["invalid-params"], found["notification-silent"]
    assert noise["scope"] == "*" and noise["occurrence_count"] > 20
    assert {"requestedPath", "parentDir", "allowedDirectories"} <= {s["evidence"] for s in noise["samples"]}
    tools = {"tool/read_file", "tool/list_directory", "tool/file_info", "tool/search_files", "tool/tail_file"}
    assert unvalidated["scope"] == "tool/*" and {unvalidated["target"], *unvalidated["also_on"]} == tools
    assert unvalidated["message"].startswith("5 of 5 tools: "), unvalidated["message"]
    assert {s["target"] for s in unvalidated["samples"]} == tools and all(s["frames"] for s in unvalidated["samples"])
    assert replied["scope"] == "*" and replied["target"].startswith("method/") and replied["also_on"]
    lines = result.stdout.splitlines()
    opening = lines.index(next(line for line in lines if " causes " in line))
    assert [line.split(" · ")[0] for line in lines[opening + 1:opening + 4]] == [
        "1. HIGH stdout-clean", "2. MEDIUM notification-silent", "3. MEDIUM invalid-params"], result.stdout
    assert any(line.startswith("one finding per root cause: 3 causes seen ") for line in lines), result.stdout
    page = (tmp_path / "report.html").read_text(encoding="utf-8")
    assert page.index("Root causes (3)") < page.index("Findings by root cause (3)")
    assert page.count("<th>samples (") == 1 and " like requestedPath " in page  # the writer's card, its shapes


def test_a_baseline_that_accepted_a_grouped_finding_still_accepts_its_cause_and_does_not_call_it_stale() -> None:
    tools = [finding(f"tool/t{n}", upstream=ZOD) for n in range(3)]
    accepted = tools[2]  # a baseline written before grouping named this target's finding
    entry = BaselineEntry(accepted.fingerprint, accepted.oracle, accepted.target, "medium", accepted.message,
                          transcript={"frames": []})
    notices: list[object] = []
    context = SimpleNamespace(config=SimpleNamespace(baseline=Baseline((entry,))), probe=object(), stopped=False,
                              stale=(), emit=notices.append)
    (marked,) = apply_baseline(context, group_by_upstream(tuple(tools)))  # type: ignore[arg-type]
    assert marked.baselined and marked.target == "tool/t0"
    assert context.stale == () and notices == []
