"""Servers built on the real `mcp` package from PyPI: the right era, and only true findings.

Every finding pinned here was checked by hand once against the raw server (see
tests/sdk_servers/SURVEY.md): the SDKs stay silent on invalid requests whose id is readable,
drop a request nested 256 deep, answer an unknown tool with an isError result instead of -32602,
and (1.x) answer unknown methods with -32602.
"""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

import pytest

from mcpfuzz.engine.attribution.detect import Sdk
from mcpfuzz.engine.attribution.known import known_behaviours
from mcpfuzz.engine.events import RunFinished
from mcpfuzz.transport.http_target import HttpTarget
from tests.engine_runs import run_engine
from tests.test_sdk_rows_census import CHECKED_HERE

ROOT = Path(__file__).resolve().parent.parent
SDK_SERVERS = ROOT / "tests" / "sdk_servers"
TS_SERVER = SDK_SERVERS / "ts" / "server.mjs"
TS_HTTP_SERVER = SDK_SERVERS / "ts" / "http_server.mjs"

# The SDK drops every message its schema refuses: the unreadable-id `{}` is grouped under the readable-id case
# (one SDK row, one finding; see _grouped_under).
SILENT_ON_BAD_FRAMES = {
    ("parse-error", "parse/truncated", "low"),
    ("invalid-request", "envelope/jsonrpc-missing", "medium"),
    ("invalid-params", "params/string", "medium"),
    ("invalid-params", "params/call-unknown-tool", "low"),  # an isError result: SEP-2145 is open
    ("no-hang", "size/nested-256", "low"),
}


def _mcp1_python() -> str | None:
    """The interpreter of the mcp 1.x virtual environment that .ci/run creates."""
    candidate = os.environ.get("MCPFUZZ_MCP1_PYTHON") or str(ROOT / ".venv-mcp1" / "bin" / "python")
    return candidate if Path(candidate).exists() else None


def _pinned(finished: object) -> set[tuple[str, str, str]]:
    return {(f.oracle, f.target, str(f.severity)) for f in finished.findings}  # type: ignore[attr-defined]


def _grouped_under(finished: RunFinished, oracle: str, target: str) -> tuple[str, ...]:
    """The other targets listed under the finding of `oracle` on `target`."""
    return next(f.also_on for f in finished.findings if (f.oracle, f.target) == (oracle, target))


pytestmark = [pytest.mark.slow, pytest.mark.sdk]


@pytest.fixture(scope="module")
def sdk2_run() -> RunFinished:
    """mcp 2.3.0 (the test environment's own), stdio, the protocol phases."""
    pytest.importorskip("mcp.server.mcpserver")
    return run_engine([sys.executable, str(SDK_SERVERS / "sdk2_server.py")], timeout=5)


@pytest.fixture(scope="module")
def sdk1_run() -> RunFinished:
    """mcp 1.30.0 from .venv-mcp1, stdio, the protocol phases."""
    python = _mcp1_python()
    if python is None:
        pytest.skip("no mcp 1.x environment: .ci/run creates .venv-mcp1 (or set MCPFUZZ_MCP1_PYTHON)")
    return run_engine([python, str(SDK_SERVERS / "sdk1_server.py")], timeout=5)


@pytest.fixture(scope="module")
def ts_run() -> RunFinished:
    """The TypeScript SDK 1.32.2 (.ci/run installs it under tests/sdk_servers/ts), stdio, the protocol phases."""
    if shutil.which("node") is None or not (TS_SERVER.parent / "node_modules" / "@modelcontextprotocol").is_dir():
        pytest.skip("no TypeScript SDK server: .ci/run installs it (npm install in tests/sdk_servers/ts)")
    return run_engine(["node", str(TS_SERVER)], timeout=5)


@pytest.fixture(scope="module")
def ts_tasks_run() -> RunFinished:
    """The TypeScript SDK 1.32.2's experimental tasks (2025-11-25), stdio, coverage then the tasks phase."""
    if shutil.which("node") is None or not (TS_SERVER.parent / "node_modules" / "@modelcontextprotocol").is_dir():
        pytest.skip("no TypeScript SDK server: .ci/run installs it (npm install in tests/sdk_servers/ts)")
    return run_engine(["node", str(TS_SERVER.parent / "tasks_server.mjs")], timeout=5, budget=30,
                      phases=("probe", "coverage"))


@pytest.fixture(scope="module")
def ts_http_run() -> RunFinished:
    """The TypeScript SDK 1.32.2 over streamable HTTP (stateless, --launch), the protocol phases and coverage (where
    a missing resource is read)."""
    if shutil.which("node") is None or not (TS_SERVER.parent / "node_modules" / "@modelcontextprotocol").is_dir():
        pytest.skip("no TypeScript SDK server: .ci/run installs it (npm install in tests/sdk_servers/ts)")
    target = HttpTarget("http://127.0.0.1:{port}/mcp", launch=("node", str(TS_HTTP_SERVER), "--port", "{port}"))
    return run_engine([], http=target, timeout=5, budget=40,
                      phases=("probe", "catalogue", "lifecycle", "coverage"))


def test_the_typescript_sdk_over_http_calls_every_invalid_message_unparseable_once(ts_http_run: RunFinished) -> None:
    """Its HTTP transport answers -32700 to bad envelopes and to params that are not an object alike: one
    finding (invalid-request), marked as the SDK's, never a second one under invalid-params."""
    assert not ts_http_run.error
    parse_codes = [f for f in ts_http_run.findings if f.key == "code:-32700"]
    assert [(f.oracle, str(f.severity)) for f in parse_codes] == [("invalid-request", "medium")]
    assert "params/string" in parse_codes[0].also_on
    upstream = parse_codes[0].upstream
    assert upstream is not None and upstream.link.endswith("/typescript-sdk/pull/2000")
    assert upstream.sdk == "the TypeScript SDK 1.32.2"


def test_a_node_servers_heap_warming_up_under_refusals_is_no_session_leak(ts_http_run: RunFinished) -> None:
    """The stateless server keeps nothing per refused request, but V8 grows its heap by tens of MB over the
    first thousand requests: no session-leak (nor memory-growth) finding from that."""
    assert [f.oracle for f in ts_http_run.findings if f.oracle in ("session-leak", "memory-growth")] == []


def test_mcp_2x_server_runs_in_the_modern_era_with_true_findings_only(sdk2_run: RunFinished) -> None:
    """mcp 2.3.0 negotiates 2026-07-28 through server/discover."""
    assert not sdk2_run.error
    assert (sdk2_run.era, sdk2_run.protocol_version) == ("modern", "2026-07-28")
    assert _pinned(sdk2_run) == SILENT_ON_BAD_FRAMES
    assert "envelope/empty-object" in _grouped_under(sdk2_run, "invalid-request", "envelope/jsonrpc-missing")


def test_mcp_1x_server_runs_in_the_legacy_era_with_true_findings_only(sdk1_run: RunFinished) -> None:
    """mcp 1.30.0 refuses server/discover, so the run falls back to initialize (2025-11-25)."""
    assert not sdk1_run.error
    assert (sdk1_run.era, sdk1_run.protocol_version) == ("legacy", "2025-11-25")
    assert _pinned(sdk1_run) == SILENT_ON_BAD_FRAMES | {
        ("invalid-request", "envelope/method-empty", "medium"),
        ("method-not-found", "method/unknown", "medium"),
    }
    assert "envelope/empty-object" in _grouped_under(sdk1_run, "invalid-request", "envelope/jsonrpc-missing")


def test_every_finding_on_an_sdk_server_is_marked_as_the_sdks(sdk2_run: RunFinished, sdk1_run: RunFinished,
                                                              ts_run: RunFinished) -> None:
    """These servers have no code of their own worth a finding: each finding names its SDK version and link."""
    for finished, sdk in ((sdk2_run, "Python SDK (mcp) 2.3.0"), (sdk1_run, "Python SDK (mcp) 1.30.0"),
                          (ts_run, "TypeScript SDK 1.32.2")):
        assert finished.findings
        for finding in finished.findings:
            assert finding.upstream is not None, (sdk, finding.oracle, finding.target, finding.key)
            assert sdk in finding.upstream.sdk and finding.upstream.link.startswith("https://github.com/")


def test_every_row_of_the_known_behaviour_table_shows_on_a_real_server(
        sdk2_run: RunFinished, sdk1_run: RunFinished, ts_run: RunFinished, ts_http_run: RunFinished,
        ts_tasks_run: RunFinished) -> None:
    """A row nothing matches is a claim about an SDK nobody checked: each must explain a finding on its SDK."""
    shown = set()
    for finished in (sdk2_run, sdk1_run, ts_run, ts_http_run, ts_tasks_run):
        shown |= {(f.upstream.link, f.upstream.behaviour) for f in finished.findings if f.upstream is not None}
    # The Go, Rust and C# rows are checked on their own servers (tests/test_sdk_attribution_real.py).
    # The rows written from the census are checked in tests/test_sdk_rows_census.py (CHECKED_HERE).
    missing = [row.id for row in known_behaviours()
               if row.sdk in (Sdk.PYTHON, Sdk.TYPESCRIPT) and (row.link, row.behaviour) not in shown
               and row.id not in CHECKED_HERE]
    assert missing == []


def _tool_findings(finished: object) -> list[tuple[str, str, str]]:
    """Tool findings, except the SDKs' documented habit: a lone surrogate is dropped silently (low)."""
    return [(f.oracle, f.target, f.message) for f in finished.findings  # type: ignore[attr-defined]
            if f.target.startswith("tool/") and not (f.oracle == "parse-error" and str(f.severity) == "low")]


def test_typed_tools_on_mcp_2x_are_fuzzed_without_false_positives() -> None:
    """Literal enums, Field bounds, nested models, outputSchemas from return annotations: no tool finding."""
    pytest.importorskip("mcp.server.mcpserver")
    finished = run_engine([sys.executable, str(SDK_SERVERS / "sdk2_typed_server.py")], timeout=5, budget=25,
                          phases=("probe", "coverage", "fuzz", "stateful"))
    assert not finished.error
    assert finished.stats.phases["coverage"] > 0  # that it ran, not how much got done in the time
    assert _tool_findings(finished) == []


def test_typed_tools_on_mcp_1x_are_fuzzed_without_false_positives() -> None:
    python = _mcp1_python()
    if python is None:
        pytest.skip("no mcp 1.x environment: .ci/run creates .venv-mcp1 (or set MCPFUZZ_MCP1_PYTHON)")
    finished = run_engine([python, str(SDK_SERVERS / "sdk1_typed_server.py")], timeout=5, budget=25,
                          phases=("probe", "coverage", "fuzz", "stateful"))
    assert not finished.error
    assert finished.stats.phases["coverage"] > 0
    assert _tool_findings(finished) == []


def test_the_docs_list_every_known_behaviour_with_its_link() -> None:
    """docs/sdk-behaviours.md's table and the shipped table are one list: every row, with its upstream link."""
    page = (ROOT / "docs" / "sdk-behaviours.md").read_text(encoding="utf-8")
    for row in known_behaviours():
        assert f"]({row.link})" in page and row.behaviour in page, row.id


def test_zod_coercion_on_the_typescript_sdk_is_no_finding_unless_strict_types() -> None:
    """z.coerce.number() takes [3] for 3 (JavaScript's Number()): lax coercion, so no tool finding by default; the
    type changes still sent ("text", an object, [1, 2]) are refused by it, as they should be. (Which values are sent
    is pinned in test_argument_strategies; this checks the real SDK agrees.)"""
    if shutil.which("node") is None or not (TS_SERVER.parent / "node_modules" / "@modelcontextprotocol").is_dir():
        pytest.skip("no TypeScript SDK server: .ci/run installs it (npm install in tests/sdk_servers/ts)")
    finished = run_engine(["node", str(TS_SERVER)], timeout=5, budget=20, phases=("probe", "coverage", "fuzz"))
    assert not finished.error
    assert finished.stats.phases["coverage"] > 0
    assert [(f.oracle, f.target, f.message) for f in finished.findings if f.target == "tool/step"] == []
