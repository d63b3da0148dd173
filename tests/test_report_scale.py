"""The end of a run with many findings: the same reports, written without the costs that grew with them; a cause's
identity kept through checkpoints, workers and old baselines. Pure tests (a temporary folder at most)."""

from __future__ import annotations

import io
import json
from dataclasses import replace
from pathlib import Path
from types import SimpleNamespace

import pytest
from rich.console import Console

from mcpfuzz.corpus.redact import Redactor
from mcpfuzz.corpus.store import CorpusStore
from mcpfuzz.engine.baseline import Baseline, BaselineEntry
from mcpfuzz.engine.config import RunConfig
from mcpfuzz.engine.events import Finding, RunFinished, Stats, fingerprint_of
from mcpfuzz.engine.judge import FindingSet, finding_key, name_the_share
from mcpfuzz.engine.plan.budget import Budget
from mcpfuzz.engine.plan.corpus_writer import CorpusWriter
from mcpfuzz.engine.plan.finishing import apply_baseline
from mcpfuzz.engine.soak.checkpoint import finding_from_json, finding_to_json
from mcpfuzz.jsonrpc import expectation as ex
from mcpfuzz.jsonrpc.frame import Case
from mcpfuzz.oracles.base import Severity, all_oracles
from mcpfuzz.report.console import MAX_FULL_FINDINGS, ConsoleReporter
from mcpfuzz.report.finding_console import Verbosity
from mcpfuzz.report.json_report import report_text
from mcpfuzz.transport.stdio_target import StdioTarget
from tests.test_cause_grouping import at
from tests.test_oracles_pure import exchange, result, tool_call

pytestmark = pytest.mark.unit


def many(count: int) -> tuple[Finding, ...]:
    """`count` distinct findings, each with a case and a frame, as a run leaves them."""
    made = []
    for number in range(count):
        frame = json.dumps({"jsonrpc": "2.0", "id": number, "method": "tools/call",
                            "params": {"name": f"t{number}", "arguments": {}}}).encode()
        case = Case(f"t{number}", "tool", f"t{number}: a call", frame, ex.any_answer(number, "tools/call"))
        made.append(Finding(oracle="slow-input", severity=Severity.MEDIUM, title="t", message=f"slow {number}",
                            target=f"tool/t{number}", case_title=case.title, expected="quick", frames=(frame,),
                            received=("<no reply>",), key="slow", case=case, era="legacy",
                            protocol_version="2025-11-25"))
    return tuple(made)


def test_the_json_report_is_the_same_data_with_a_finding_a_line() -> None:
    report = {"version": 1, "stats": {"cases": 3, "plan": {"phases": [{"name": "probe"}]}},
              "findings": [{"oracle": "x", "occurrences": [{"target": "a"}], "message": "é\nline"},
                           {"oracle": "y", "samples": []}]}
    text = report_text(report)
    assert json.loads(text) == report
    lines = text.splitlines()
    assert lines[0] == "{" and lines[-1] == "}" and '  "stats": {' in lines
    assert sum(1 for line in lines if line.startswith('    {"oracle"')) == 2
    assert json.loads(report_text({"version": 1, "findings": []})) == {"version": 1, "findings": []}


def test_the_console_prints_the_first_findings_in_full_and_counts_the_rest() -> None:
    findings = many(MAX_FULL_FINDINGS + 5)
    config = RunConfig(command=["server"], oracles=tuple(all_oracles()))
    finished = RunFinished(Stats(cases=100), findings, "2025-11-25", "legacy")
    for verbosity, full in ((Verbosity.NORMAL, MAX_FULL_FINDINGS), (Verbosity.VERBOSE, len(findings))):
        out = io.StringIO()
        ConsoleReporter(config, Console(file=out, width=200, highlight=False), verbosity=verbosity).handle(finished)
        text = out.getvalue()
        assert text.count("   expected: quick") == full, text
        assert f"{len(findings)}. MEDIUM slow-input · 1 target" in text  # every cause is a line of the opening
        assert ("5 more findings, each a line under \"causes\" above" in text) is (full < len(findings)), text


def test_transcripts_unchanged_since_this_run_wrote_them_are_not_written_again(tmp_path: Path) -> None:
    writer = CorpusWriter.open(RunConfig(command=["server"], corpus=tmp_path), Redactor(), lambda event: None)
    findings = many(4)
    first = writer.save(findings)
    # A write replaces the file (a temporary one renamed over it): a file written again is another inode.
    inodes = {path: Path(path).stat().st_ino for path in first.values()}
    changed = replace(findings[0], reproducible=True)
    again = writer.save((changed, *findings[1:]))
    assert again == first
    rewritten = {path for path in again.values() if Path(path).stat().st_ino != inodes[path]}
    assert rewritten == {first[changed.fingerprint]}
    assert json.loads(Path(first[changed.fingerprint]).read_text())["reproducible"] is True
    assert all(json.loads(Path(p).read_text())["seen"] == 1 for p in again.values())


def test_one_fingerprint_keeps_one_transcript_when_it_moves_to_another_target(tmp_path: Path) -> None:
    store = CorpusStore(tmp_path)
    base = {"oracle": "invalid-params", "fingerprint": "abc123abc123", "frames": []}
    store.save({**base, "target": "tool/a"})
    saved = store.save_many([({**base, "target": "tool/b"}, True), ({"oracle": "o", "fingerprint": "ffff",
                                                                      "target": "tool/c"}, True)])
    names = sorted(p.name for p in tmp_path.glob("*.json") if p.name != "manifest.json")
    assert names == ["tool-b_invalid-params_abc123abc123.json", "tool-c_o_ffff.json"]
    assert json.loads(saved[0][0].read_text())["seen"] == 2  # the cause's count carried over from tool/a


def test_verification_leaves_the_reports_of_many_findings_their_time() -> None:
    budget = Budget(60.0, started=1000.0)
    assert budget.verify_until_for(0) == budget.verify_until
    assert budget.verify_until - budget.verify_until_for(1000) == pytest.approx(3.0)  # capped at 5% of the run
    assert budget.verify_until_for(100) > budget.verify_until_for(1000)


def unvalidated(*tools: str) -> FindingSet:
    """The findings of tools that serve arguments their schema forbids."""
    findings = FindingSet()
    for number, tool in enumerate(tools, 1):
        findings.judge(at(f"tool/{tool}", exchange(tool_call(number, valid=False), result(number, {
            "content": [{"type": "text", "text": f"done {number}"}], "isError": False}))),
                       ("invalid-params",))
    return findings


def test_a_kind_wide_finding_keeps_its_identity_through_a_checkpoint_and_another_worker() -> None:
    (finding,) = unvalidated("a", "b").all()
    assert finding.where == "tool/*" and finding.also_on == ("tool/b",)
    key, back = finding_from_json(finding_to_json(finding_key(finding), finding, StdioTarget(("server",)), 1,
                                                  Redactor()))
    assert key == finding_key(back) == finding_key(finding) and back.fingerprint == finding.fingerprint
    assert set(back.grouped) == set(finding.grouped)
    merged = FindingSet()
    for worker in (unvalidated("a", "b"), unvalidated("c")):
        for one in worker.all():
            merged.merge(one)
    (together,) = merged.all()
    assert {s.target for s in together.samples} == {"tool/a", "tool/b", "tool/c"}
    assert {together.target, *together.also_on} == {"tool/a", "tool/b", "tool/c"}  # each worker's targets named
    (named,) = name_the_share(name_the_share((together,), ()), ["tool/a", "tool/b", "tool/c", "tool/d"])
    assert named.message.startswith("3 of 4 tools: invalid arguments were accepted"), named.message


def test_a_baseline_written_when_each_tool_was_a_finding_accepts_the_kind_wide_one() -> None:
    (finding,) = unvalidated("a", "b", "c").all()
    legacy = fingerprint_of("invalid-params", "tool/b", "accepted")  # what an earlier version called tool/b's
    assert legacy in finding.grouped
    entry = BaselineEntry(legacy, "invalid-params", "tool/b", "medium", "accepted", transcript={"frames": []})
    context = SimpleNamespace(config=SimpleNamespace(baseline=Baseline((entry,))), probe=object(), stopped=False,
                              stale=(), emit=lambda event: None)
    (marked,) = apply_baseline(context, (finding,))  # type: ignore[arg-type]
    assert marked.baselined and context.stale == ()
    gone = BaselineEntry(fingerprint_of("invalid-params", "tool/z", "accepted"), "invalid-params", "tool/z",
                         "medium", "accepted", transcript={"frames": []})
    context.config.baseline = Baseline((gone,))
    (kept,) = apply_baseline(context, (finding,))  # type: ignore[arg-type]
    assert not kept.baselined and context.stale == (gone.describe(),)  # stale, said, never an error
