"""One finding per planted cause, whatever the flood: Hypothesis draws the servers' misbehaviour (log statements
with any free tail, any number of tools failing alike with any message, replies to any notification) and the
exchanges the engine would record are judged by every oracle and grouped as a run groups them."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mcpfuzz.engine.events import Finding
from mcpfuzz.engine.judge import MAX_SAMPLES, FindingSet, group_by_upstream, group_under_tools
from mcpfuzz.jsonrpc import expectation as ex
from mcpfuzz.jsonrpc.exchange import Exchange
from mcpfuzz.jsonrpc.expectation import Expectation
from mcpfuzz.jsonrpc.oracle_ids import OracleId
from mcpfuzz.oracles.base import all_oracles
from tests.test_cause_grouping import at
from tests.test_oracles_pure import error, exchange, result, tool_call

pytestmark = pytest.mark.unit

EVERY = tuple(all_oracles())
FLOODS = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])

# A line's free tail: what a server prints after its label (a path, a number, quoted text, any Unicode).
_TEXT = st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\r\n"), max_size=40)
_PATH = st.lists(st.from_regex(r"[\w .'\"()-]{1,12}", fullmatch=True), min_size=1, max_size=5).map(
    lambda parts: "/" + "/".join(parts))
TAILS = st.one_of(_TEXT, _PATH, st.integers().map(str), st.floats(allow_nan=False).map(str),
                  _TEXT.map(lambda text: json.dumps(text)), _TEXT.map(lambda text: f"'{text}'"),
                  st.lists(_PATH, max_size=3).map(str))
# A log statement's label: `requestedPath`, as `console.log("requestedPath", path)` prints it.
LABELS = st.from_regex(r"[a-z]{2,9}[A-Z][a-z]{1,8}", fullmatch=True)
TOOL_NAMES = st.from_regex(r"[a-z][a-z_]{0,14}", fullmatch=True)


def grouped(exchanges: list[Exchange]) -> list[Finding]:
    """The findings a run reports for these exchanges: judged by every oracle, then grouped as finishing does."""
    findings = FindingSet()
    for built in exchanges:
        findings.judge(built, EVERY)
    return list(group_by_upstream(group_under_tools(tuple(findings.all()))))


def call_result(text: str) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": text}], "isError": False}


@dataclass(frozen=True)
class Flood:
    """What one drawn server did: each exchange, and the causes planted in it as (oracle, targets it showed on)."""

    exchanges: list[Exchange]
    causes: dict[str, set[str]]


@st.composite
def noise_floods(draw: st.DrawFn) -> Flood:
    """Any number of log statements, each printing its label and any tail, on any calls of any targets."""
    labels = draw(st.lists(LABELS, min_size=1, max_size=8, unique=True))
    calls = draw(st.lists(st.tuples(TOOL_NAMES, st.lists(st.tuples(st.sampled_from(labels), TAILS), min_size=1,
                                                           max_size=4)), min_size=1, max_size=25))
    built, targets = [], set()
    for number, (tool, lines) in enumerate(calls):
        printed = [f"{label} {tail}".encode() for label, tail in lines]
        built.append(at(f"tool/{tool}", exchange(ex.any_answer(number, "ping"), *printed, result(number))))
        targets.add(f"tool/{tool}")
    return Flood(built, {OracleId.STDOUT_CLEAN.value: targets})


@st.composite
def tool_floods(draw: st.DrawFn) -> Flood:
    """Any number of tools; some accept arguments their schema forbids, some refuse valid ones with -32602, each
    answer with a text of its own."""
    tools = draw(st.lists(TOOL_NAMES, min_size=1, max_size=20, unique=True))
    built: list[Exchange] = []
    causes: dict[str, set[str]] = {}
    for tool in tools:
        target = f"tool/{tool}"
        for message in draw(st.lists(TAILS, max_size=3)):  # invalid arguments served
            rid = len(built) + 1
            built.append(at(target, exchange(tool_call(rid, valid=False), result(rid, call_result(message)))))
            causes.setdefault(OracleId.INVALID_PARAMS.value, set()).add(target)
        for message in draw(st.lists(TAILS, max_size=3)):  # valid arguments refused
            rid = len(built) + 1
            built.append(at(target, exchange(tool_call(rid), error(rid, -32602, message))))
            causes.setdefault(OracleId.VALID_INPUT_ACCEPTED.value, set()).add(target)
    return Flood(built, causes)


RESPONSE = Expectation(judge=OracleId.NOTIFICATION_SILENT, reply=False, id_recoverable=False)


@st.composite
def reply_floods(draw: st.DrawFn) -> Flood:
    """Notifications of any method, and responses sent to the server, each answered with an error."""
    built: list[Exchange] = []
    kinds: set[str] = set()
    for number, (kind, method) in enumerate(draw(st.lists(
            st.tuples(st.sampled_from(("notification", "response")), _TEXT), min_size=1, max_size=15))):
        if kind == "notification":
            frame, expect = json.dumps({"jsonrpc": "2.0", "method": method}).encode(), ex.no_reply()
        else:
            frame, expect = json.dumps({"jsonrpc": "2.0", "id": 900 + number, "result": {}}).encode(), RESPONSE
        built.append(at(f"notification/n{number}", exchange(expect, error(None, -32601, method), frame=frame)))
        kinds.add(kind)
    return Flood(built, {f"{OracleId.NOTIFICATION_SILENT.value}:{kind}": set() for kind in kinds})


def by_cause(findings: list[Finding]) -> dict[str, Finding]:
    """The findings by oracle (and, for replies to frames that want none, the kind of frame)."""
    named: dict[str, Finding] = {}
    for finding in findings:
        name = finding.oracle
        if name == OracleId.NOTIFICATION_SILENT.value:
            name += ":" + finding.key.rsplit(":", 1)[1]
        assert name not in named, f"two findings for one cause: {name} ({named[name].key!r}, {finding.key!r})"
        named[name] = finding
    return named


@FLOODS
@given(noise_floods())
def test_any_flood_of_log_lines_is_one_finding_naming_every_target(flood: Flood) -> None:
    (finding,) = grouped(flood.exchanges)
    assert finding.oracle == OracleId.STDOUT_CLEAN.value and finding.where == "*"
    assert {finding.target, *finding.also_on} == flood.causes[finding.oracle]
    assert 1 <= len(finding.samples) <= MAX_SAMPLES and finding.sample_count >= len(finding.samples)
    assert all(sample.detail and sample.frames for sample in finding.samples)


@FLOODS
@given(tool_floods())
def test_any_number_of_tools_failing_alike_is_one_finding_per_cause(flood: Flood) -> None:
    found = by_cause(grouped(flood.exchanges))
    assert set(found) == set(flood.causes), [f"{f.oracle} {f.where} {f.key}" for f in found.values()]
    for name, finding in found.items():
        assert {finding.target, *finding.also_on} == flood.causes[name]
        assert finding.where == "tool/*"
        assert {sample.target for sample in finding.samples} <= flood.causes[name]


@FLOODS
@given(reply_floods())
def test_replies_to_frames_that_want_none_are_one_finding_per_kind_of_frame(flood: Flood) -> None:
    found = by_cause(grouped(flood.exchanges))
    assert set(found) == set(flood.causes)


@FLOODS
@given(noise_floods(), tool_floods(), reply_floods(), st.randoms(use_true_random=False))
def test_floods_together_in_any_order_give_one_finding_per_planted_cause(noise: Flood, tools: Flood,
                                                                         replies: Flood, order: Any) -> None:
    exchanges = [*noise.exchanges, *tools.exchanges, *replies.exchanges]
    order.shuffle(exchanges)
    found = by_cause(grouped(exchanges))
    assert set(found) == {*noise.causes, *tools.causes, *replies.causes}
