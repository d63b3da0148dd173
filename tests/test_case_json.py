"""Transcripts keep their JSON shape: what earlier versions wrote reads back into the typed expectation and
is written again key for key, so existing corpora replay."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest
from mcpfuzz.strategies import catalogue, http_cases, lifecycle
from mcpfuzz.strategies.arguments.call import NEGATIVE, POSITIVE, ArgumentCall
from mcpfuzz.strategies.arguments.tool_calls import tool_call_case
from mcpfuzz.strategies.cancellation import cancel_case
from mcpfuzz.strategies.concurrency import concurrent_case
from mcpfuzz.strategies.messages import FrameBuilder

from mcpfuzz.jsonrpc.case_json import CaseFormatError, case_from_json, case_to_json, expectation_from_json
from mcpfuzz.jsonrpc.frame import Posting
from mcpfuzz.jsonrpc.ids import ABSENT
from mcpfuzz.jsonrpc.oracle_ids import OracleId
from mcpfuzz.jsonrpc.parts.concurrency import AloneAnswers, ConcurrencyCheck
from mcpfuzz.jsonrpc.parts.http_rule import HttpRule
from mcpfuzz.jsonrpc.parts.leniency import IsErrorResultOk, Lenient, QuietOk
from mcpfuzz.jsonrpc.parts.tool_call import ToolCallCheck
from mcpfuzz.jsonrpc.parts.version_check import VersionCheck
from mcpfuzz.jsonrpc.versions import LATEST_LEGACY, MODERN_VERSIONS, Era

pytestmark = pytest.mark.unit

SCHEMA = {"type": "object", "properties": {"a": {"type": "integer"}}}

# Expectations as transcripts written before the expectation was typed hold them (the `extra` dict),
# one per kind of oracle-specific part.
OLD_FORMAT = [
    {"judge": "parse-error", "reply": True, "id": 111, "id_recoverable": True, "codes": [-32700, -32602],
     "error_ok": True, "result_ok": True, "null_id_ok": True, "well_formed": False, "method": "tools/call",
     "batch_ids": [], "batch_replies_ok": False, "note": "",
     "extra": {"tool": "echo", "arguments": "positive", "rule": "", "output_schema": SCHEMA, "lenient": True,
               "unicode_unsafe": True}},
    {"judge": "invalid-params", "reply": True, "id": 9, "id_recoverable": True, "codes": [-32602],
     "error_ok": True, "result_ok": True, "null_id_ok": False, "well_formed": True, "method": "tools/call",
     "batch_ids": [], "batch_replies_ok": False, "note": "or an isError result",
     "extra": {"tool": "echo", "arguments": "negative", "rule": "type", "output_schema": None,
               "is_error_result_ok": True}},
    {"judge": "http-status", "reply": False, "id": 102, "id_recoverable": True, "codes": [], "error_ok": True,
     "result_ok": False, "null_id_ok": False, "well_formed": False, "method": None, "batch_ids": [],
     "batch_replies_ok": False, "note": "a header that disagrees with the body MUST get 400 with error -32020",
     "extra": {"http_status": [400], "http_severity": "medium", "codes": [-32020]}},
    {"judge": "version-negotiation", "reply": True, "id": 504, "id_recoverable": True, "codes": [],
     "error_ok": True, "result_ok": True, "null_id_ok": False, "well_formed": True, "method": "initialize",
     "batch_ids": [], "batch_replies_ok": False, "note": "",
     "extra": {"initialize_version": "1999-01-01", "refusal_ok": False}},
    {"judge": "invalid-request", "reply": True, "id": {"$absent": True}, "id_recoverable": False, "codes": [-32600],
     "error_ok": True, "result_ok": False, "null_id_ok": True, "well_formed": False, "method": None,
     "batch_ids": [1, {"$absent": True}], "batch_replies_ok": False, "note": "", "extra": {"quiet_ok": True}},
]


@pytest.mark.parametrize("old", OLD_FORMAT, ids=lambda e: e["judge"])
def test_an_old_transcript_round_trips(old: dict) -> None:
    """Read and written again, an earlier transcript's case is the same JSON, member order included."""
    data = {"id": "x", "family": "tool", "title": "t", "fresh": True, "patient": False, "era": None,
            "expect": old, "http_headers": []}
    again = case_to_json(case_from_json(data, [b"{}"]))
    assert json.dumps(again) == json.dumps(data)


def test_old_extra_becomes_typed_parts() -> None:
    """Each `extra` key lands in the part its oracle reads."""
    call, bad, http, version, quiet = (expectation_from_json(old) for old in OLD_FORMAT)
    assert call.judge is OracleId.PARSE_ERROR and call.has(Lenient)
    assert call.part(ToolCallCheck) == ToolCallCheck("echo", valid=True, output_schema=SCHEMA, unicode_unsafe=True)
    assert bad.has(IsErrorResultOk) and bad.part(ToolCallCheck) == ToolCallCheck("echo", valid=False, rule="type")
    assert http.part(HttpRule) == HttpRule((400,), "medium", (-32020,))
    assert http.describe() == "HTTP 400 with error -32020"
    assert version.part(VersionCheck) == VersionCheck(initialize="1999-01-01", refusal_ok=False)
    assert quiet.has(QuietOk) and quiet.id is ABSENT and quiet.batch_ids == (1, ABSENT)


def test_an_unknown_judge_is_a_format_error() -> None:
    """A transcript naming no oracle cannot be replayed; it says so instead of raising elsewhere."""
    with pytest.raises(CaseFormatError):
        expectation_from_json({**OLD_FORMAT[0], "judge": "no-such-oracle"})


def built_cases() -> list:
    """Every deterministic case the strategies build, in both eras."""
    cases = []
    tool = {"name": "echo", "inputSchema": {"type": "object"}, "outputSchema": SCHEMA}
    for era, version in ((Era.LEGACY, LATEST_LEGACY), (Era.MODERN, sorted(MODERN_VERSIONS)[-1])):
        cases += catalogue.catalogue(catalogue.CatalogueContext(era, version, tool="echo"))
        cases += lifecycle.lifecycle(era)
        builder = FrameBuilder(era, version)
        cases += http_cases.http_cases(builder, tool="echo", has_session=True)
        for call in (ArgumentCall(POSITIVE, {"a": 1}, "valid"), ArgumentCall(NEGATIVE, {"a": "x"}, "bad", "type"),
                     ArgumentCall(POSITIVE, {"a": "\ud800"}, "a lone surrogate")):
            cases.append(tool_call_case(builder, tool, call))
    cases.append(lifecycle.initialize_case(LATEST_LEGACY, 1, discover_failed=True))
    return cases


def test_every_built_case_round_trips() -> None:
    """What the strategies build is written and read back to the same JSON and the same expectation."""
    for case in built_cases():
        data = case_to_json(case)
        frames = [*case.setup, case.data]
        back = case_from_json(json.loads(json.dumps(data)), frames)
        assert case_to_json(back)["expect"] == data["expect"], case.target
        assert back.expect == case.expect, case.target


def test_cases_of_several_requests_keep_how_they_are_posted_and_never_their_answers_alone() -> None:
    """The cancel case is POSTed in order, the concurrency case at once; the answers alone the engine adds to
    a concurrency case are observations, asked again on every run, so a transcript does not keep them."""
    builder = FrameBuilder(Era.MODERN, MODERN_VERSIONS[0])
    cancel = cancel_case(builder, {"tools": {}})
    at_once = concurrent_case(builder, ["tools/list"], ["mem://a"], [("lookup", {"q": "x"})])
    assert cancel is not None and at_once is not None and at_once.expect.part(ConcurrencyCheck) is not None
    observed = replace(at_once, expect=at_once.expect.with_part(replace(
        at_once.expect.part(ConcurrencyCheck), alone=(AloneAnswers(1, {"tools": []}, {"tools": []}),))))
    for case, posts in ((cancel, Posting.IN_ORDER), (observed, Posting.AT_ONCE)):
        back = case_from_json(json.loads(json.dumps(case_to_json(case))), [case.data])
        assert back.posts is posts and back.data == case.data
    back = case_from_json(json.loads(json.dumps(case_to_json(observed))), [observed.data])
    assert back.expect.part(ConcurrencyCheck) == at_once.expect.part(ConcurrencyCheck)  # requests kept, alone dropped
    check = at_once.expect.part(ConcurrencyCheck)
    assert check is not None
    assert [method for _, method, _ in check.requests] == ["tools/list", "resources/read", "tools/call"]


def test_a_concurrency_case_that_may_change_state_says_so_in_its_transcript() -> None:
    """A burst with a tool not annotated read-only is read back as one: a replay never compares its answers with
    answers alone (and a transcript written before the flag existed reads as read-only, as it was)."""
    builder = FrameBuilder(Era.MODERN, MODERN_VERSIONS[0])
    changing = concurrent_case(builder, [], [], [("note", {"text": "a"}), ("note", {"text": "b"})],
                               changes_state=True)
    assert changing is not None and changing.id == "requests-at-once"
    check = changing.expect.part(ConcurrencyCheck)
    assert check is not None and check.changes_state
    data = json.loads(json.dumps(case_to_json(changing)))
    back = case_from_json(data, [changing.data])
    assert back.expect.part(ConcurrencyCheck) == changing.expect.part(ConcurrencyCheck)
    data["expect"]["extra"].pop("concurrent_changes_state")
    old = case_from_json(data, [changing.data])
    assert old.expect.part(ConcurrencyCheck) == ConcurrencyCheck(check.requests)
