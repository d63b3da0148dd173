"""Each test server bug is caught by the right oracle, and by no unrelated one; the clean server gives none."""

from __future__ import annotations

import pytest

from mcpfuzz.engine.events import RunFinished
from mcpfuzz.oracles.base import Severity
from tests.engine_runs import fixture_command, run_engine

pytestmark = pytest.mark.slow

# bug switch of tests/servers/mcp_server.py -> the only oracles that may fire
EXPECTED = {
    "silent-parse": {"parse-error"},
    "parse-code": {"parse-error"},
    "invalid-request-code": {"invalid-request"},
    "silent-invalid-request": {"invalid-request"},
    "method-not-found-code": {"method-not-found"},
    "invalid-params-code": {"invalid-params"},
    "id-coerce": {"id-preserved"},
    "id-float": {"id-preserved"},
    "crash-batch": {"no-crash"},
    "crash-pre-init": {"no-crash"},
    "crash-discover": {"no-crash"},
    "notify-reply": {"notification-silent"},
    "double-reply": {"single-response"},
    "stdout-noise": {"stdout-clean"},
    "hang-method": {"no-hang"},
    "version-echo": {"version-negotiation"},
    "version-code": {"version-negotiation"},
    "bad-shape": {"response-schema"},
    "no-result-type": {"response-schema"},
    "id-null-invalid": {"id-preserved"},
    "drop-deep": {"no-hang"},
    "drop-big-id": {"no-hang"},
    "invalid-as-parse": {"invalid-request"},
    # No id member is the envelope's fault alone: the -32700 is still the frame's answer (not silence, no wrong id).
    "error-without-id": {"response-schema"},
    # The reply to notifications/initialized is charged to no frame sent after the handshake.
    "answer-notifications-without-id": {"notification-silent", "response-schema"},
}


@pytest.mark.parametrize("version", [None, "2025-11-25", "2025-03-26", "2024-11-05", "2026-07-28"])
def test_clean_server_gives_zero_findings(version: str | None) -> None:
    """A spec-correct server gives zero findings of any oracle, in every era and version."""
    finished = run_engine(fixture_command(), protocol_version=version)
    assert not finished.error
    assert [(f.oracle, f.target, f.message) for f in finished.findings] == []
    # Six lifecycle cases; in 2026-07-28 also tools/list on three fresh connections (list-identity).
    lifecycle = 6 + (3 if finished.era == "modern" else 0)
    assert finished.stats.phases["catalogue"] >= 50 and finished.stats.phases["lifecycle"] == lifecycle


@pytest.mark.parametrize("bug", ["modern-only", "legacy-only"])
def test_single_era_servers_give_zero_findings(bug: str) -> None:
    """Serving one era only is allowed by the spec: no finding."""
    finished = run_engine(fixture_command(bug))
    assert [(f.oracle, f.target, f.message) for f in finished.findings] == []
    assert finished.era == ("modern" if bug == "modern-only" else "legacy")


# The bugs a test below looks at in detail: that test's run checks the oracles too, so none is run twice.
DETAILED = {"crash-batch", "id-coerce", "id-float", "version-code", "silent-invalid-request", "hang-method",
            "crash-pre-init", "crash-discover", "drop-deep", "drop-big-id", "id-null-invalid", "invalid-as-parse"}


def caught(bug: str) -> RunFinished:
    """The run with `bug` switched on, after checking that the bug's oracle fires and no unrelated oracle does."""
    finished = run_engine(fixture_command(bug))
    assert not finished.error, finished.error
    fired = {f.oracle for f in finished.findings}
    assert fired == EXPECTED[bug], [(f.oracle, f.target, f.message[:120]) for f in finished.findings]
    return finished


@pytest.mark.parametrize("bug", sorted(set(EXPECTED) - DETAILED))
def test_bug_is_caught_by_its_oracle_only(bug: str) -> None:
    """The bug's oracle fires and no unrelated oracle does."""
    caught(bug)


def test_every_detailed_bug_is_a_known_bug() -> None:
    """The detailed tests cover what the parametrised one leaves out."""
    assert set(EXPECTED) >= DETAILED


def test_one_crash_reached_from_several_frames_is_one_finding_with_also_on() -> None:
    """One root cause (the same exception raised at the same place): one finding naming the other frames."""
    finished = caught("crash-batch")
    (finding,) = finished.findings
    assert finding.oracle == "no-crash" and finding.severity is Severity.CRITICAL
    assert finding.target == "envelope/empty-array" and finding.frames[-1] == b"[]"
    assert "envelope/batch" in finding.also_on and "also on envelope/batch" in finding.message
    assert "exited with status 1" in finding.message and "RuntimeError" in finding.message
    assert finished.stats.phases["lifecycle"] == 6 + (3 if finished.era == "modern" else 0)  # restarted, carried on
    # Each crash forced a restart (the frames it was also on crashed it too), besides the lifecycle's planned ones.
    assert finished.stats.restarts >= 1 + len(finding.also_on)


def test_coerced_id_is_reported_with_both_types() -> None:
    """A string id answered as a number is one high finding that says what became what."""
    finished = caught("id-coerce")
    (finding,) = finished.findings
    assert finding.severity is Severity.HIGH
    assert 'request id "1" (string) came back as 1 (integer)' in finding.message
    assert "id/leading-zeros" in finding.message  # the same bug, seen on another frame


def test_big_id_turned_float_is_reported() -> None:
    """An integer id above 2**53 must come back as the same integer, not a float."""
    finished = caught("id-float")
    assert any("9007199254740993 (integer) came back as 9007199254740992.0 (number)" in f.message
               for f in finished.findings)


def test_release_candidate_version_code_is_low() -> None:
    """-32004 instead of -32022 is the release candidate's code: low severity only."""
    finished = caught("version-code")
    (finding,) = finished.findings
    assert finding.severity is Severity.LOW and finding.target == "modern/unsupported-version"


def test_silence_on_readable_id_is_medium_and_on_unreadable_id_low() -> None:
    """Severity model: a MUST broken only on malformed input is medium (the id was readable, a client waits);
    silence where no id could be read is low."""
    finished = caught("silent-invalid-request")
    severities = {f.severity for f in finished.findings}
    assert severities == {Severity.MEDIUM, Severity.LOW}
    medium = next(f for f in finished.findings if f.severity is Severity.MEDIUM)
    assert "was readable" in medium.message


def test_hang_is_told_apart_from_a_stuck_server() -> None:
    """A dropped request: later requests are still answered, so the server is not restarted."""
    finished = caught("hang-method")
    (finding,) = finished.findings
    assert finding.target == "method/resources-list" and "dropped" in finding.message
    # The server forced no restart; mcpfuzz's own plan made the fresh processes (recycles, the lifecycle phase's six
    # cases) and (2026-07-28) of list-identity's three: planned, never counted as the server's.
    assert finished.stats.restarts == 0
    assert finished.stats.planned_restarts >= 6 + (3 if finished.era == "modern" else 0)


def test_pre_initialize_crash_is_a_lifecycle_finding() -> None:
    """A server that dies on a request before initialize is caught on a fresh process."""
    finished = caught("crash-pre-init")
    # In the modern era a request without _meta is a legacy request before initialize, too: one root cause.
    assert [(f.target, f.also_on) for f in finished.findings] == [
        ("modern/no-meta", ("lifecycle/request-before-initialize",))]
    legacy = run_engine(fixture_command("crash-pre-init"), protocol_version="2025-11-25")
    assert [f.target for f in legacy.findings] == ["lifecycle/request-before-initialize"]


def test_crash_on_discover_falls_back_to_legacy() -> None:
    """A legacy server that dies on server/discover: one finding, restart, legacy era."""
    finished = caught("crash-discover")
    assert finished.era == "legacy" and finished.protocol_version == "2025-11-25"
    assert [f.target for f in finished.findings] == ["lifecycle/discover-first"]


@pytest.mark.parametrize(("bug", "said"), [("drop-deep", "nested deeper"), ("drop-big-id", "2**53")])
def test_silence_past_a_reader_limit_is_one_low_finding(bug: str, said: str) -> None:
    """RFC 8259 lets a reader refuse deep nesting and inexact integers: dropping such frames is one low finding."""
    finished = caught(bug)
    assert [(f.oracle, f.severity) for f in finished.findings] == [("no-hang", Severity.LOW)], \
        [(f.oracle, f.target, f.message[:120]) for f in finished.findings]
    assert "RFC 8259" in finished.findings[0].message and said in finished.findings[0].message


def test_an_id_null_answer_is_a_changed_id_not_silence() -> None:
    """-32600 with id null to a request whose id was readable: id-preserved says what came back, not 'no reply'."""
    finished = caught("id-null-invalid")
    assert {(f.oracle, f.severity) for f in finished.findings} == {("id-preserved", Severity.MEDIUM)}
    (finding,) = finished.findings
    assert "came back as null" in finding.message and "no reply" not in finding.message


def test_minus_32700_for_every_invalid_message_is_one_finding() -> None:
    """-32700 for bad envelopes and for params that are not an object is one root cause (the TypeScript SDK's
    HTTP transport), so one invalid-request finding naming the params frames too, not one per oracle."""
    finished = caught("invalid-as-parse")
    (finding,) = finished.findings
    assert (finding.oracle, finding.key, finding.severity) == ("invalid-request", "code:-32700", Severity.MEDIUM)
    assert "answered error -32700" in finding.message
    assert {"params/string", "params/array"} <= set(finding.also_on) | {finding.target}
