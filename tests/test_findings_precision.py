"""Behaviours the specifications allow are no findings, and a finding is rated by what the client really suffers.

Each test runs a real server (tests/servers) over real pipes or real HTTP on 127.0.0.1.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from mcpfuzz.oracles.base import Severity
from mcpfuzz.transport.http_target import HttpTarget
from tests.conftest import run_cli
from tests.engine_runs import SERVERS, fixture_command, run_engine
from tests.http_servers import start_http_server

pytestmark = pytest.mark.process

LEGACY = "2025-11-25"
ARRAY_OUTPUT_SERVER = [sys.executable, str(SERVERS / "array_output_server.py")]


def _show(findings: object) -> list[str]:
    return [f"{f.severity} {f.oracle} {f.target}: {f.message}" for f in findings]  # type: ignore[attr-defined]


def test_a_request_without_a_session_served_by_a_server_that_does_not_require_one_is_no_finding() -> None:
    """Streamable HTTP: the 400 for a missing Mcp-Session-Id is for servers that require a session; one that
    serves the request on a temporary session (it hands ids out, but does not require them) is right."""
    with start_http_server("--bug", "session-optional") as url:
        finished = run_engine([], http=HttpTarget(url), protocol_version=LEGACY, phases=("probe", "catalogue"))
    assert not finished.error, finished.error
    assert finished.findings == (), _show(finished.findings)


def test_an_http_refusal_whose_error_lacks_the_id_is_low_never_a_client_waiting_forever() -> None:
    """A 400 whose JSON-RPC error carries no id came at once: the client has its answer; the lost id is low."""
    with start_http_server("--bug", "error-without-id") as url:
        finished = run_engine([], http=HttpTarget(url), phases=("probe", "catalogue"))
    assert not finished.error, finished.error
    refused = [f for f in finished.findings if "refused at once with HTTP 400 and an error without an id" in f.message]
    assert refused, _show(finished.findings)
    assert all(f.severity == Severity.LOW for f in refused), _show(refused)
    assert not [f for f in finished.findings if "forever" in f.message], _show(finished.findings)


def test_an_unknown_tool_answered_with_method_not_found_is_no_finding() -> None:
    """MCP: an unknown tool is a protocol error; the spec's example says -32602, and no MUST fixes the code."""
    finished = run_engine(fixture_command("unknown-tool-32601"), phases=("probe", "catalogue"))
    assert not finished.error, finished.error
    assert finished.findings == (), _show(finished.findings)


def test_an_unknown_tool_answered_with_an_is_error_result_is_low() -> None:
    """MCP asks for a protocol error; SEP-2145 (open) would make an isError result the rule: at most low."""
    finished = run_engine(fixture_command("unknown-tool-is-error"), phases=("probe", "catalogue"))
    assert not finished.error, finished.error
    assert [(f.oracle, f.target, f.severity) for f in finished.findings] == [
        ("invalid-params", "params/call-unknown-tool", Severity.LOW)], _show(finished.findings)


def test_a_plain_json_rpc_server_may_answer_a_response_object_with_invalid_request(tmp_path: Path) -> None:
    """JSON-RPC 2.0: a server receives only requests, so a response sent to it is an invalid request (-32600)."""
    server = SERVERS / "jsonrpc_server.py"
    result = run_cli(["run", "--jsonrpc", "--openrpc", str(server.with_suffix(".openrpc.json")), "--phases",
                      "catalogue", "--budget", "30", "--json", "report.json", "--", sys.executable, str(server),
                      "--answer-responses"], cwd=tmp_path, timeout=90)
    report = json.loads((tmp_path / "report.json").read_text())
    assert report["findings"] == [], result.stdout
    assert result.returncode == 0, result.stdout + result.stderr


def test_an_array_structured_result_is_right_in_2026_07_28() -> None:
    """SEP-2106: from 2026-07-28 structuredContent may be any JSON value and outputSchema any JSON Schema."""
    finished = run_engine(ARRAY_OUTPUT_SERVER, phases=("probe", "lint", "catalogue", "coverage"))
    assert not finished.error, finished.error
    assert finished.findings == (), _show(finished.findings)


def test_an_array_structured_result_is_still_wrong_up_to_2025_11_25() -> None:
    """Up to 2025-11-25 both are objects: the same server asked for that version is found out, twice."""
    finished = run_engine(ARRAY_OUTPUT_SERVER, protocol_version=LEGACY, phases=("probe", "lint", "catalogue",
                                                                                  "coverage"))
    assert not finished.error, finished.error
    found = {(f.oracle, f.rule) for f in finished.findings}
    assert found == {("response-schema", None), ("lint", "SCHEMA-002")}, _show(finished.findings)


def test_a_finding_that_did_not_fail_again_is_a_note_that_never_fails_the_run(tmp_path: Path) -> None:
    """The flaky server's wrong code shows in its first process only: re-run on a fresh server it passes. The JSON
    report keeps it (`reproducible: false`, its severity); the console lists it as a NOTE; --fail-on ignores it."""
    marker = tmp_path / "first-process-was-here"
    result = run_cli(["run", "--phases", "catalogue", "--budget", "30", "--fail-on", "low", "--json", "r.json",
                      "--summary-md", "s.md", "--junit-xml", "r.xml", "--sarif", "r.sarif", "--", sys.executable,
                      str(SERVERS / "flaky_server.py"), str(marker)], cwd=tmp_path, timeout=90)
    report = json.loads((tmp_path / "r.json").read_text())
    assert [(f["oracle"], f["severity"], f["reproducible"]) for f in report["findings"]] == [
        ("method-not-found", "medium", False)]
    assert result.returncode == 0, result.stdout + result.stderr
    assert "NOTE method-not-found on method/unknown" in result.stdout
    assert "MEDIUM method-not-found" not in result.stdout
    assert "0 findings (0 critical, 0 high, 0 medium, 0 low) · 1 note " in result.stdout
    assert (tmp_path / "s.md").read_text().startswith("## mcpfuzz: passed")
    assert "<failure" not in (tmp_path / "r.xml").read_text()
    (result_entry,) = json.loads((tmp_path / "r.sarif").read_text())["runs"][0]["results"]
    assert result_entry["level"] == "note"
