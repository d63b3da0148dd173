"""mcpfuzz over HTTP: streamable HTTP in both eras, legacy HTTP+SSE, HTTP oracles, CLI, replay, SDK servers."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from mcpfuzz.engine.events import CaseDone
from mcpfuzz.transport.base import TransportKind
from mcpfuzz.transport.http_target import HttpTarget
from tests.conftest import run_cli
from tests.engine_runs import run_engine
from tests.http_servers import HTTP_SERVER, free_port, start_http_server, start_sdk_server

pytestmark = pytest.mark.slow

LEGACY = "2025-11-25"


def _findings(url: str, *, version: str | None = None, transport: TransportKind | None = None,
              phases: tuple[str, ...] = ("probe", "catalogue", "lifecycle"), budget: float = 60.0) -> list:
    finished = run_engine([], http=HttpTarget(url, transport=transport), protocol_version=version, phases=phases,
                          budget=budget)
    assert not finished.error, finished.error
    return list(finished.findings)


def _show(findings: list) -> list[str]:
    return [f"{f.oracle} {f.target}: {f.message}" for f in findings]


@pytest.mark.parametrize(("args", "version"), [
    ((), None),                              # modern era (stateless POSTs)
    ((), LEGACY),                            # legacy sessions: Mcp-Session-Id, GET stream, DELETE
    (("--sse-responses",), LEGACY),          # answers as SSE streams instead of JSON bodies
    (("--sse-responses",), None),
    (("--mode", "sse"), LEGACY),             # 2024-11-05 HTTP+SSE, endpoint event as a URI
    (("--mode", "sse", "--endpoint-json"), LEGACY),  # endpoint event as JSON {url, sessionId}
])
def test_clean_http_server_gives_no_findings(args: tuple[str, ...], version: str | None) -> None:
    with start_http_server(*args) as url:
        findings = _findings(url, version=version)
    assert findings == [], _show(findings)


@pytest.mark.parametrize(("bug", "version", "oracle", "target"), [
    ("lost-id-400", LEGACY, "id-preserved", "http/session-missing"),
    ("status-200-notification", LEGACY, "http-status", None),
    ("session-on-406", LEGACY, "session-leak", "http/initialize-bad-accept"),
    ("no-origin-check", None, "origin-check", "http/origin-foreign"),
    ("ignore-headers", None, "http-status", "http/header-method-mismatch"),
])
def test_each_http_bug_is_found_by_its_oracle(bug: str, version: str | None, oracle: str, target: str | None) -> None:
    with start_http_server("--bug", bug) as url:
        findings = _findings(url, version=version)
    assert {f.oracle for f in findings} == {oracle}, _show(findings)
    if target is not None:
        assert target in {f.target for f in findings}, _show(findings)


def test_json_rpc_bugs_are_found_over_http_as_on_stdio() -> None:
    with start_http_server("--server-bug", "parse-code", "--server-bug", "id-coerce") as url:
        findings = _findings(url)
    assert {"parse-error", "id-preserved"} <= {f.oracle for f in findings}, _show(findings)
    coerced = next(f for f in findings if f.oracle == "id-preserved")
    assert "came back as" in coerced.message


def test_tool_phases_run_over_http_without_false_positives() -> None:
    with start_http_server() as url:
        # Ended by its examples (20 per search), not by a budget a fast machine spends at full speed.
        finished = run_engine([], http=HttpTarget(url), phases=("probe", "coverage", "fuzz"), budget=240,
                              max_examples=20)
    assert finished.findings == (), _show(list(finished.findings))
    assert finished.stats.tool_calls > 0 and finished.stats.phases["fuzz"] > 0


def test_cli_run_with_launch_saves_replayable_transcripts_and_prints_curl(tmp_path: Path) -> None:
    port = free_port()
    url = f"http://127.0.0.1:{port}/mcp"
    launch = f"{sys.executable} {HTTP_SERVER} --port {port} --bug no-origin-check"
    result = run_cli(["run", url, "--launch", launch, "--phases", "catalogue,lifecycle", "--budget", "40",
                      "--header", "Authorization: Bearer sk-test-abcdefghijklmnop1234", "--json", "report.json"],
                     cwd=tmp_path, timeout=90)
    assert result.returncode == 1, result.stdout + result.stderr
    assert "curl -sS --max-time 10 -X POST" in result.stdout
    assert "Origin: http://mcpfuzz-rebinding.example" in result.stdout
    report = json.loads((tmp_path / "report.json").read_text())
    assert [f["oracle"] for f in report["findings"]] == ["origin-check"]
    saved = list((tmp_path / "corpus").glob("http-origin-foreign_origin-check_*.json"))
    assert len(saved) == 1
    text = saved[0].read_text()
    assert "sk-test-abcdefghijklmnop1234" not in text and "sk-test" not in result.stdout
    assert json.loads(text)["server"]["url"] == url
    # The transcript names the URL and the launch command: replay restarts the buggy server itself...
    replayed = run_cli(["replay", str(saved[0])], cwd=tmp_path, timeout=60)
    assert replayed.returncode == 1, replayed.stdout + replayed.stderr
    assert "FAILED" in replayed.stdout
    # ...and against a fixed server given after `--`, the same transcript is FIXED.
    with start_http_server() as fixed_url:
        fixed = run_cli(["replay", str(saved[0]), "--", fixed_url], cwd=tmp_path, timeout=60)
    assert fixed.returncode == 0, fixed.stdout + fixed.stderr
    assert "FIXED" in fixed.stdout


def test_unreachable_url_is_a_clear_error_not_a_traceback(tmp_path: Path) -> None:
    result = run_cli(["run", f"http://127.0.0.1:{free_port()}/mcp", "--budget", "10"], cwd=tmp_path)
    assert result.returncode == 2
    assert "cannot connect to" in result.stdout + result.stderr
    assert "Traceback" not in result.stdout + result.stderr


def test_http_only_options_are_refused_for_stdio_servers(tmp_path: Path) -> None:
    result = run_cli(["run", "--header", "A: b", "--", sys.executable, "-c", "pass"], cwd=tmp_path)
    assert result.returncode == 2
    assert "--header only applies to an HTTP URL" in result.stderr


@pytest.mark.sdk
@pytest.mark.parametrize(("name", "expected"), [
    # mcp 2.x (modern era): no -32020 for a version header that disagrees with the body.
    ("sdk2", {"http-status"}),
    # mcp 1.x streamable HTTP: errors carry the id "server-error" instead of the request id.
    ("sdk1", {"id-preserved"}),
    ("sdk1-sse", set()),
])
def test_sdk_http_servers(name: str, expected: set[str]) -> None:
    with start_sdk_server(name) as url:
        findings = _findings(url)
    oracles = {f.oracle for f in findings}
    assert expected <= oracles, _show(findings)
    # Dropping a frame nested past the parser's limit is the SDK's low refusal (RFC 8259 section 9), no hang.
    serious = {f.oracle for f in findings if f.key != "limit:nesting"}
    assert not serious & {"no-crash", "no-hang"}, _show(findings)


def test_compare_lists_frames_whose_outcome_differs_between_stdio_and_http(tmp_path: Path) -> None:
    stdio = f"{sys.executable} {Path(__file__).parent / 'servers' / 'mcp_server.py'}"
    with start_http_server("--server-bug", "id-coerce") as url:
        differing = run_cli(["run", url, "--compare", stdio, "--timeout", "2"], cwd=tmp_path, timeout=120)
    assert differing.returncode == 1, differing.stdout + differing.stderr
    assert "id/string-digits" in differing.stdout and "a result with id 1" in differing.stdout
    with start_http_server() as url:
        same = run_cli(["run", url, "--compare", url, "--timeout", "2"], cwd=tmp_path, timeout=120)
    assert same.returncode == 0, same.stdout + same.stderr
    assert "same outcome for every frame" in same.stdout


@pytest.mark.parametrize("version", [None, LEGACY])
def test_refusals_with_plain_text_and_html_bodies_are_judged_by_status_only(version: str | None) -> None:
    """A server that refuses as a proxy does (403 and 404 in plain text, 413 as an HTML page, no JSON-RPC error):
    the body of such a refusal is free, so none of them is a finding, and a 413 says it refused the request as too
    large (never that a client waits)."""
    events: list = []
    with start_http_server("--plain-refusals", "--max-body", str(256 * 1024)) as url:
        finished = run_engine([], http=HttpTarget(url), protocol_version=version,
                              phases=("probe", "catalogue", "lifecycle"), budget=60, events=events)
    assert not finished.error, finished.error
    replies = {event.exchange.http.status: event.exchange.http for event in events
               if isinstance(event, CaseDone) and event.exchange.http is not None}
    assert replies[403].content_type.startswith("text/plain") and replies[403].messages == 0
    assert replies[413].content_type.startswith("text/html") and replies[413].messages == 0
    assert replies[413].describe().startswith("HTTP 413 (refused as too large), text/html")
    if version == LEGACY:
        assert replies[404].content_type.startswith("text/plain")
    assert list(finished.findings) == [], _show(list(finished.findings))
