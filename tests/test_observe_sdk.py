"""Blind bugs found by what a call does, on servers built on the real SDKs (Python mcp 2.x, TypeScript), and their
clean twins at zero.

Each blind tool answers nothing about its bug (a write answers "saved", an exists check answers true or false, a
shell answers a number): only the hook mcpfuzz loads into the server sees it. Every finding must be reproducible,
that is seen again alone on a fresh process in a newly planted workspace.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from mcpfuzz.engine.coverage.launch import PythonServer
from mcpfuzz.engine.observe.records import RecordFile
from mcpfuzz.engine.observe.setup import ObserveSetup
from tests.conftest import REPO_ROOT, run_cli

pytestmark = pytest.mark.slow

OBSERVED = "sandbox-escape,command-injection,network-egress,read-only-truthful"
PYTHON_SERVER = [sys.executable, str(REPO_ROOT / "tests" / "sdk_servers" / "sdk2_blind_server.py")]
TS_SERVER = [shutil.which("node") or "node", str(REPO_ROOT / "tests" / "sdk_servers" / "ts" / "blind_server.mjs")]
# What each blind tool does, and the oracle and effect that must show it.
EXPECTED = {
    "tool/write_note": ("sandbox-escape", "write("),
    "tool/exists": ("sandbox-escape", "stat("),
    "tool/read_size": ("sandbox-escape", "read("),
    "tool/count_lines": ("command-injection", "exec("),
    "tool/lookup": ("read-only-truthful", "write("),
    "tool/ping": ("network-egress", "connect("),
    "tool/delete_file": ("sandbox-escape", "delete("),
}
needs_node = pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")


def observed_run(tmp_path: Path, *args: str) -> tuple[int, str, list[dict]]:
    """`mcpfuzz run` of the coverage phase with the observation oracles only; status, output, findings."""
    report = tmp_path / "report.json"
    result = run_cli(["run", "--json", str(report), "--seed", "5", "--phases", "coverage", "--max-examples", "3",
                      "--budget", "300", "--oracles", OBSERVED, *args], timeout=420)
    return result.returncode, result.stdout, json.loads(report.read_text())["findings"]


def assert_every_blind_bug_found(status: int, out: str, findings: list[dict]) -> None:
    by_target: dict[str, list[dict]] = {}
    for finding in findings:
        by_target.setdefault(finding["target"], []).append(finding)
    assert status == 1, out
    for target, (oracle, effect) in EXPECTED.items():
        shown = [f for f in by_target.get(target, []) if f["oracle"] == oracle and effect in f["message"]]
        assert shown, f"{target}: no {oracle} showing {effect}\n{out}"
        assert any(f["reproducible"] is True for f in shown), f"{target}: not re-checked\n{out}"
    outside_the_bugs = [f for f in findings if EXPECTED.get(f["target"], ("",))[0] != f["oracle"]]
    assert outside_the_bugs == [], out


@pytest.mark.parametrize("server", [PYTHON_SERVER, pytest.param(TS_SERVER, marks=needs_node)],
                         ids=["python-sdk", "typescript-sdk"])
def test_every_blind_bug_is_seen_and_re_checked(tmp_path: Path, server: list[str]) -> None:
    status, out, findings = observed_run(tmp_path, "--security", "--", *server, "{workspace}")
    assert_every_blind_bug_found(status, out, findings)


@pytest.mark.parametrize("server", [PYTHON_SERVER, pytest.param(TS_SERVER, marks=needs_node)],
                         ids=["python-sdk", "typescript-sdk"])
def test_the_clean_twin_has_no_finding(tmp_path: Path, server: list[str]) -> None:
    status, out, findings = observed_run(tmp_path, "--security", "--", *server, "{workspace}", "--clean")
    assert findings == [], out
    assert status == 0, out


@needs_node
def test_observe_alone_sends_no_security_payload_and_still_sees_the_lies(tmp_path: Path) -> None:
    """--observe without --security: no canaries, no workspace, yet the read-only tool's write and the closed-world
    tool's connection (to a loopback URL payload) are seen."""
    root = tmp_path / "root"
    root.mkdir()
    status, out, findings = observed_run(tmp_path, "--observe", "--cwd", str(root), "--", *TS_SERVER, str(root))
    found = {(f["target"], f["oracle"]) for f in findings}
    assert {("tool/lookup", "read-only-truthful"), ("tool/ping", "network-egress")} <= found, out
    assert "mcpfuzz-canary" not in out and "mcpfuzz-workspace" not in out  # nothing planted, no canary sent


def _mcp1_python() -> str | None:
    """The interpreter of the mcp 1.x virtual environment."""
    candidate = os.environ.get("MCPFUZZ_MCP1_PYTHON") or str(REPO_ROOT / ".venv-mcp1" / "bin" / "python")
    return candidate if Path(candidate).is_file() else None


def test_on_the_mcp1_sdk_a_record_names_its_request(tmp_path: Path) -> None:
    """The mcp 1.x SDK keeps the request each task serves in a context variable: the hook tags the call's records
    with its id, so they find their case even when other requests are in flight."""
    python = _mcp1_python()
    if python is None:
        pytest.skip("no mcp 1.x environment: .ci/run creates .venv-mcp1 (or set MCPFUZZ_MCP1_PYTHON)")
    server = tmp_path / "server.py"
    server.write_text(textwrap.dedent("""
        from mcp.server.fastmcp import FastMCP

        app = FastMCP("tagged")

        @app.tool()
        def touch(name: str) -> str:
            \"\"\"Create a file.\"\"\"
            open(name, "w").close()
            return "done"

        app.run()
    """))
    setup = ObserveSetup.create(PythonServer(python, (str(tmp_path),)), env={})
    frames = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 7, "method": "tools/call",
         "params": {"name": "touch", "arguments": {"name": "f.txt"}}},
    ]
    try:
        process = subprocess.Popen([python, str(server)], cwd=tmp_path, env={**os.environ, **setup.env},
                                   stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        assert process.stdin is not None and process.stdout is not None
        for frame in frames:
            process.stdin.write(json.dumps(frame).encode() + b"\n")
            process.stdin.flush()
            if "id" in frame:
                process.stdout.readline()  # its answer: the records are written before it
        process.stdin.close()
        process.wait(timeout=60)
        records = RecordFile(str(setup.log)).read()
    finally:
        setup.remove()
    written = [r for r in records if r.effect is not None and r.effect.path == str(tmp_path.resolve() / "f.txt")]
    assert [r.request for r in written] == ["7"]
