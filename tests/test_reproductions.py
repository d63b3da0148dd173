"""Printed reproductions reproduce: a curl line sends exactly the headers its case sent, run against a real server."""

from __future__ import annotations

import subprocess

from mcpfuzz.engine.events import Finding
from mcpfuzz.report.reproduce import finding_reproduction
from mcpfuzz.transport.http_target import HttpTarget
from tests.engine_runs import run_engine
from tests.http_servers import start_http_server

LEGACY = "2025-11-25"
FOREIGN_ORIGIN = "Origin: http://mcpfuzz-rebinding.example"


def _finding(url: str, oracle: str, target: str, version: str | None = None) -> Finding:
    finished = run_engine([], http=HttpTarget(url), protocol_version=version, phases=("probe", "catalogue"))
    assert not finished.error, finished.error
    found = [f for f in finished.findings if f.oracle == oracle and f.target == target]
    assert found, [f"{f.oracle} {f.target}" for f in finished.findings]
    return found[0]


def _run(script: str) -> str:
    """The printed reproduction, run by bash as a user pastes it."""
    done = subprocess.run(["bash", "-c", script], capture_output=True, text=True, timeout=60)
    return done.stdout + done.stderr


def test_the_curl_line_of_a_foreign_origin_case_sends_that_origin() -> None:
    with start_http_server("--bug", "no-origin-check") as url:
        finding = _finding(url, "origin-check", "http/origin-foreign")
        command, _ = finding_reproduction(HttpTarget(url), finding)
        assert FOREIGN_ORIGIN in command.splitlines()[0]
        assert "forbidden" not in _run(command)  # the bug: the foreign Origin is served
    with start_http_server() as fixed:
        command, _ = finding_reproduction(HttpTarget(fixed), finding)
        assert "forbidden: Origin not allowed" in _run(command)  # a correct server refuses the very same POST


def test_the_curl_line_of_a_case_without_the_session_id_leaves_it_out() -> None:
    """The case sent its ping without Mcp-Session-Id (the liveness request after it carries it again)."""
    with start_http_server("--bug", "lost-id-400") as url:
        finding = _finding(url, "id-preserved", "http/session-missing", LEGACY)
        command, _ = finding_reproduction(HttpTarget(url), finding)
        lines = command.splitlines()
        case_line = next(line for line in lines[1:] if '"method":"ping"' in line and "mcpfuzz-alive" not in line)
        assert "Mcp-Session-Id" not in case_line
        assert '"Mcp-Session-Id: $SID"' in lines[-1]
        out = _run(command)
    assert "missing Mcp-Session-Id" in out and '"id": null' in out.replace('"id":null', '"id": null'), out
