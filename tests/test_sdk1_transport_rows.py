"""The Python SDK 1.x's own answers that the 2026-12-08 census charged to servers, each marked as the SDK's on a
real mcp 1.30.0 server: its code 0 for a cancelled request, its crash when a cancelled handler responds anyway, and
its streamable HTTP transport's refusals (id "server-error", -32602 for an invalid envelope, -32603 with HTTP 500
for a body that is not UTF-8, 202 for a request whose id is null)."""

from __future__ import annotations

import json
import subprocess
import threading
import time
from pathlib import Path
from types import SimpleNamespace
from typing import IO

import pytest

from mcpfuzz.engine.attribution.known import explain, known_behaviours
from mcpfuzz.engine.attribution.sdks import Sdk, SdkInfo
from mcpfuzz.engine.events import RunFinished
from mcpfuzz.transport.http_target import HttpTarget
from tests.engine_runs import run_engine
from tests.http_servers import mcp1_python

pytestmark = [pytest.mark.slow, pytest.mark.sdk]

SDK_SERVERS = Path(__file__).resolve().parent / "sdk_servers"
HTTP_ROWS = {"python-cancelled-request-code-0", "python-http-errors-id-server-error",
             "python-http-invalid-envelope-invalid-params", "python-http-post-exception-internal-error",
             "python-http-invalid-id-accepted"}


def _python() -> str:
    python = mcp1_python()
    if python is None:
        pytest.skip("no mcp 1.x environment: .ci/run creates .venv-mcp1 (or set MCPFUZZ_MCP1_PYTHON)")
    return python


def _rows_shown(finished: RunFinished) -> set[str]:
    by_text = {(row.link, row.behaviour): row.id for row in known_behaviours()}
    return {by_text[(f.upstream.link, f.upstream.behaviour)] for f in finished.findings if f.upstream is not None}


@pytest.fixture(scope="module")
def http_run() -> RunFinished:
    """mcp 1.30.0's FastMCP over streamable HTTP (a one-second tool, so a cancel meets it running)."""
    python = _python()
    target = HttpTarget("http://127.0.0.1:{port}/mcp",
                        launch=(python, str(SDK_SERVERS / "sdk1_slow_server.py"), "{port}"))
    return run_engine([], http=target, timeout=5, budget=90, phases=("probe", "catalogue", "coverage", "flight"))


def test_every_finding_on_the_sdk_1x_over_http_is_marked_as_the_sdks(http_run: RunFinished) -> None:
    assert not http_run.error, http_run.error
    unmarked = [(f.oracle, f.target, f.key, f.received[:2]) for f in http_run.findings if f.upstream is None]
    assert unmarked == []
    assert _rows_shown(http_run) >= HTTP_ROWS


def test_the_sdk_1x_http_500_is_one_finding_of_the_parse_rule(http_run: RunFinished) -> None:
    """Its -32603 with HTTP 500 for a body that is not UTF-8: one cause, so no http-status finding beside it."""
    utf8 = next(f for f in http_run.findings if f.oracle == "parse-error" and f.key == "code:-32603")
    assert "http-status" in utf8.also_judged
    assert [f.target for f in http_run.findings if f.oracle == "http-status"] == []


def test_the_sdk_1x_over_stdio_answers_a_cancelled_call_with_code_0_marked() -> None:
    finished = run_engine([_python(), str(SDK_SERVERS / "sdk1_slow_server.py")], timeout=5, budget=60,
                          phases=("probe", "coverage", "flight"))
    assert not finished.error, finished.error
    cancelled = [f for f in finished.findings if f.oracle == "cancel-respected"]
    assert [f.key for f in cancelled] == ["answered-code-0"]
    assert "python-cancelled-request-code-0" in _rows_shown(finished)


def _crash_after_cancel(python: str) -> tuple[str, str]:
    """Call the thread-bound tool, cancel it while it runs: the SDK's answer to the call and its stderr as it ends."""
    server = subprocess.Popen([python, str(SDK_SERVERS / "sdk1_thread_server.py")], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert server.stdin is not None and server.stdout is not None and server.stderr is not None
    said: list[str] = []

    def read_stderr(stream: IO[str]) -> None:
        said.extend(stream)

    reader = threading.Thread(target=read_stderr, args=(server.stderr,), daemon=True)
    reader.start()
    watchdog = threading.Timer(120, server.kill)  # a server that never answers ends the read, not the suite
    watchdog.start()
    try:
        for frame in ({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
                "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}},
                {"jsonrpc": "2.0", "method": "notifications/initialized"},
                {"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": {"name": "report", "arguments": {}}}):
            server.stdin.write(json.dumps(frame) + "\n")
            server.stdin.flush()
        assert json.loads(server.stdout.readline())["id"] == 1
        time.sleep(0.3)  # the call is on its worker thread (it takes a second): the cancel meets it running
        server.stdin.write(json.dumps({"jsonrpc": "2.0", "method": "notifications/cancelled",
                                       "params": {"requestId": 5}}) + "\n")
        server.stdin.flush()
        answer = server.stdout.readline().strip()
        server.stdin.close()  # the end of input: the session ends once the call's thread has returned
        server.wait(timeout=60)
        reader.join(timeout=60)
    finally:
        watchdog.cancel()
        server.kill()
        server.wait(timeout=10)
    return answer, "".join(said)


def test_the_sdk_1x_exiting_when_a_cancelled_handler_responds_is_the_sdks() -> None:
    python = _python()
    answer, stderr = _crash_after_cancel(python)
    assert '"code":0' in answer, answer
    assert "AssertionError: Request already responded to" in stderr, stderr[-2000:]
    tail = "\n".join(stderr.splitlines()[-30:])
    crash = SimpleNamespace(oracle="no-crash", key="crash:x", target="in-flight/report", received=(
        "<the server exited with status 1>",), message=f"the server exited with status 1 after this frame\n{tail}",
        stderr_tail=tail)
    row = explain(SdkInfo(Sdk.PYTHON, "1.30.0", "test"), "stdio", crash)
    assert row is not None and row.id == "python-respond-after-cancel-crash"
    assert explain(SdkInfo(Sdk.PYTHON, "2.3.0", "test"), "stdio", crash) is None  # 2.x answers no cancel
    own = SimpleNamespace(**{**vars(crash), "message": "AssertionError: bad state", "stderr_tail": "AssertionError"})
    assert explain(SdkInfo(Sdk.PYTHON, "1.30.0", "test"), "stdio", own) is None
