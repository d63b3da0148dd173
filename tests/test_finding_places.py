"""Where a finding says its cause showed: a frame reader's finding names frames, never the tools a mutated frame
called; a family of catalogue frames is no kind of target ("1 of 1 paramss"); counts of a kind read as words."""

from __future__ import annotations

from dataclasses import replace

import pytest

from mcpfuzz.engine.causes import claims, kind_noun, kind_scope
from mcpfuzz.engine.judge import FindingSet, name_the_share
from mcpfuzz.jsonrpc import expectation as ex
from mcpfuzz.jsonrpc.exchange import Exchange
from mcpfuzz.jsonrpc.oracle_ids import OracleId
from mcpfuzz.jsonrpc.parts.leniency import Lenient
from mcpfuzz.jsonrpc.parts.tool_call import ToolCallCheck
from mcpfuzz.oracles.base import all_oracles
from tests.test_cause_grouping import at
from tests.test_oracles_pure import exchange, result, tool_call

pytestmark = pytest.mark.unit

EVERY = tuple(all_oracles())


def silent_on(target: str) -> Exchange:
    """A frame a parser may refuse, left unanswered while the next request was answered."""
    return at(target, exchange(ex.parse_error().with_part(Lenient()), frame=b'\xef\xbb\xbf{"jsonrpc":"2.0"}'))


def test_a_frame_readers_finding_never_names_a_tool() -> None:
    """The same silence on a BOM frame and on byte-mutated tool calls: one finding, on the frame, naming frames."""
    findings = FindingSet()
    for target in ("tool/get_spec", "parse/utf8-bom", "tool/update_spec", "parse/two-on-one-line", "frames/bytes"):
        findings.judge(silent_on(target), EVERY)
    (finding,) = [f for f in findings.all() if f.oracle == OracleId.PARSE_ERROR.value]
    assert finding.target == "parse/utf8-bom"
    assert finding.also_on == ("parse/two-on-one-line", "frames/bytes")
    assert "tool/" not in finding.message
    assert not [o for o in finding.occurrences if o.target.startswith("tool/")]


def test_only_frame_oracles_leave_tools_out() -> None:
    assert not claims(OracleId.PARSE_ERROR.value, "tool/x") and not claims(OracleId.INVALID_REQUEST.value, "prompt/p")
    assert claims(OracleId.PARSE_ERROR.value, "frames/bytes")
    assert claims(OracleId.NO_CRASH.value, "tool/x")  # a crash reached through a tool's frame is the tool's to show


def test_a_catalogue_family_is_no_kind_of_target() -> None:
    """`params/call-arguments-string` is its own scope: a shared cause is for targets a server declares."""
    assert kind_scope("tool/search") == "tool/*" and kind_scope("prompt/p") == "prompt/*"
    assert kind_scope("params/call-arguments-string") == "params/call-arguments-string"
    findings = FindingSet()
    call = at("params/call-arguments-string", exchange(tool_call(5, valid=False), result(5, {"content": []})))
    findings.judge(call, EVERY)
    (finding,) = [f for f in findings.all() if f.oracle == OracleId.INVALID_PARAMS.value]
    (named,) = name_the_share((finding,), ["params/call-arguments-string", "tool/echo"])
    assert named.where == "params/call-arguments-string"
    assert not named.message.startswith("1 of 1"), named.message


def test_a_shared_cause_counts_its_kind_in_words() -> None:
    findings = FindingSet()
    for rid, tool in enumerate(("tool/a", "tool/b"), start=1):
        findings.judge(at(tool, exchange(tool_call(rid, valid=False), result(rid, {"content": []}))), EVERY)
    (finding,) = [f for f in findings.all() if f.oracle == OracleId.INVALID_PARAMS.value]
    (named,) = name_the_share((finding,), ["tool/a", "tool/b", "tool/c"])
    assert named.message.startswith("2 of 3 tools: "), named.message
    assert kind_noun("tool", 1) == "tool" and kind_noun("params", 2) == "params"


def test_a_frame_readers_finding_seen_only_through_tools_names_no_tool() -> None:
    """Silence on a lenient frame seen through tools' calls only: the finding is the frames', not a tool's; a frame
    of its own leads once one shows the same cause."""
    findings = FindingSet()
    through_tool = silent_on("tool/get_dependencies")
    through_tool.case = replace(through_tool.case, expect=through_tool.case.expect.with_part(
        ToolCallCheck(tool="get_dependencies", valid=True)))
    (new,) = [f for f in findings.judge(through_tool, EVERY) if f.oracle == OracleId.PARSE_ERROR.value]
    assert (new.target, new.tool) == ("frames/tool-calls", None)
    findings.judge(silent_on("tool/update_spec"), EVERY)
    (finding,) = [f for f in findings.all() if f.oracle == OracleId.PARSE_ERROR.value]
    assert finding.target == "frames/tool-calls" and not finding.also_on
    assert not [f for f in findings.judge(silent_on("parse/utf8-bom"), EVERY) if f.oracle == OracleId.PARSE_ERROR.value]
    (finding,) = [f for f in findings.all() if f.oracle == OracleId.PARSE_ERROR.value]
    assert finding.target == "parse/utf8-bom"
