"""Replies to frames that want none, on the test server: a server answering notifications and response objects
alike is one finding with both kinds' frames as evidence; one kind answered, or the two answered differently, are
findings of their own."""

from __future__ import annotations

import pytest

from mcpfuzz.engine.events import Finding, fingerprint_of
from mcpfuzz.jsonrpc.oracle_ids import OracleId
from tests.engine_runs import fixture_command, run_engine

pytestmark = pytest.mark.process

PHASES = ("probe", "catalogue")
SILENT = OracleId.NOTIFICATION_SILENT.value


def replies(*bugs: str) -> list[Finding]:
    """The notification-silent findings of a protocol run with the bugs on."""
    finished = run_engine(fixture_command(*bugs), phases=PHASES)
    assert not finished.error, finished.error
    return [f for f in finished.findings if f.oracle == SILENT]


def test_a_server_answering_every_message_without_id_gets_one_finding_with_both_frames() -> None:
    """Notifications and response objects answered with the same `{"result": null}`: one cause, filed under the
    notifications' identity, naming the response frames too and answering for the response finding's identity."""
    [finding] = replies("answer-anything-without-id")
    assert finding.key == "replied:notification"
    assert "a notification got a reply" in finding.message
    assert "a response object sent to the server got a reply" in finding.message
    sampled = {sample.target for sample in finding.samples}
    assert "notification/response-result" in sampled and "method/unknown-notification" in sampled
    assert any(b'"result":{}' in frame for s in finding.samples for frame in s.frames[-1:])
    assert "notification/response-result" in finding.also_on
    assert fingerprint_of(SILENT, "*", "replied:response") in finding.grouped


def test_a_server_answering_only_response_objects_keeps_that_finding() -> None:
    """Notifications left unanswered: the reply to a response object is its own finding."""
    [finding] = replies("answer-responses-without-id")
    assert finding.key == "replied:response"
    assert "a notification" not in finding.message


def test_notifications_and_responses_answered_differently_stay_two_findings() -> None:
    """Unknown notifications answered -32601 and response objects a result: two dispatch paths, two findings."""
    found = replies("answer-responses-without-id", "notify-reply")
    assert sorted(f.key for f in found) == ["replied:notification", "replied:response"]
