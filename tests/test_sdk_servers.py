"""Servers built on the real `mcp` package from PyPI: the right era, and only true findings.

Every finding pinned here was checked by hand once against the raw server (see
tests/sdk_servers/SURVEY.md): the SDKs stay silent on invalid requests whose id is readable,
drop a request nested 256 deep, answer an unknown tool with an isError result instead of -32602,
and (1.x) answer unknown methods with -32602.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from tests.engine_runs import run_engine

ROOT = Path(__file__).resolve().parent.parent
SDK_SERVERS = ROOT / "tests" / "sdk_servers"

SILENT_ON_BAD_FRAMES = {
    ("parse-error", "parse/truncated", "low"),
    ("invalid-request", "envelope/empty-object", "low"),
    ("invalid-request", "envelope/jsonrpc-missing", "medium"),
    ("invalid-params", "params/string", "medium"),
    ("invalid-params", "params/call-unknown-tool", "medium"),
    ("no-hang", "size/nested-256", "low"),
}


def _mcp1_python() -> str | None:
    """The interpreter of the mcp 1.x virtual environment that .ci/run creates."""
    candidate = os.environ.get("MCPFUZZ_MCP1_PYTHON") or str(ROOT / ".venv-mcp1" / "bin" / "python")
    return candidate if Path(candidate).exists() else None


def _pinned(finished: object) -> set[tuple[str, str, str]]:
    return {(f.oracle, f.target, str(f.severity)) for f in finished.findings}  # type: ignore[attr-defined]


pytestmark = pytest.mark.sdk


def test_mcp_2x_server_runs_in_the_modern_era_with_true_findings_only() -> None:
    """mcp 2.3.0 negotiates 2026-07-28 through server/discover."""
    pytest.importorskip("mcp.server.mcpserver")
    finished = run_engine([sys.executable, str(SDK_SERVERS / "sdk2_server.py")], timeout=5)
    assert not finished.error
    assert (finished.era, finished.protocol_version) == ("modern", "2026-07-28")
    assert _pinned(finished) == SILENT_ON_BAD_FRAMES


def test_mcp_1x_server_runs_in_the_legacy_era_with_true_findings_only() -> None:
    """mcp 1.30.0 refuses server/discover, so the run falls back to initialize (2025-11-25)."""
    python = _mcp1_python()
    if python is None:
        pytest.skip("no mcp 1.x environment: .ci/run creates .venv-mcp1 (or set MCPFUZZ_MCP1_PYTHON)")
    finished = run_engine([python, str(SDK_SERVERS / "sdk1_server.py")], timeout=5)
    assert not finished.error
    assert (finished.era, finished.protocol_version) == ("legacy", "2025-11-25")
    assert _pinned(finished) == SILENT_ON_BAD_FRAMES | {
        ("invalid-request", "envelope/method-empty", "medium"),
        ("method-not-found", "method/unknown", "medium"),
    }


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
    assert finished.stats.phases["coverage"] > 50 and finished.stats.tool_calls > 150
    assert _tool_findings(finished) == []


def test_typed_tools_on_mcp_1x_are_fuzzed_without_false_positives() -> None:
    python = _mcp1_python()
    if python is None:
        pytest.skip("no mcp 1.x environment: .ci/run creates .venv-mcp1 (or set MCPFUZZ_MCP1_PYTHON)")
    finished = run_engine([python, str(SDK_SERVERS / "sdk1_typed_server.py")], timeout=5, budget=25,
                          phases=("probe", "coverage", "fuzz", "stateful"))
    assert not finished.error
    assert finished.stats.phases["coverage"] > 50
    assert _tool_findings(finished) == []
