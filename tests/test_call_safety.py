"""--read-only calls only tools annotated read-only; --cwd runs a stdio server elsewhere, reproductions included."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import cli_env
from tests.engine_runs import MCP_SERVER, TOOL_SERVER

pytestmark = pytest.mark.process

ROOT = Path(__file__).resolve().parent.parent
CLI = [sys.executable, "-m", "mcpfuzz.cli", "run", "--seed", "1", "--timeout", "2"]


def test_read_only_calls_only_tools_annotated_read_only(tmp_path: Path) -> None:
    """The header names the tools to call; every other tool is skipped with the reason, and never called."""
    result = subprocess.run([*CLI, "--read-only", "--budget", "20", "--phases", "coverage", "--max-examples", "5",
                             "--corpus", str(tmp_path / "corpus"), "--", sys.executable, str(TOOL_SERVER)],
                            capture_output=True, text=True, env=cli_env(), timeout=300, cwd=ROOT)
    assert result.returncode in (0, 1), result.stdout + result.stderr
    tools = json.loads(subprocess.run([sys.executable, "-c", (
        "import sys; sys.path.insert(0, 'tests/servers'); import json, tool_server; "
        "print(json.dumps(tool_server.TOOLS))")], capture_output=True, text=True, cwd=ROOT, check=True).stdout)
    hints = {t["name"]: t.get("annotations") or {} for t in tools}
    # Read-only and nothing riskier: a tool that also reaches the open world stays skipped.
    read_only = {name for name, h in hints.items() if h.get("readOnlyHint") is True and not h.get("openWorldHint")
                 and not h.get("destructiveHint")}
    others = {t["name"] for t in tools} - read_only
    assert read_only and others
    header = next(line for line in result.stdout.splitlines() if line.startswith("tools: "))
    assert all(name in header for name in read_only) and not any(f" {name}" in header for name in others), header
    for name in others:
        assert f"skipped {name}: --read-only" in result.stdout


def test_cwd_runs_the_server_there_and_keeps_relative_command_paths_valid(tmp_path: Path) -> None:
    """A relative server path still works; the transcript and the reproduction carry the folder."""
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    report = tmp_path / "report.json"
    relative = MCP_SERVER.relative_to(ROOT)
    result = subprocess.run([*CLI, "--cwd", str(scratch), "--budget", "20", "--phases", "catalogue",
                             "--json", str(report), "--corpus", str(tmp_path / "corpus"),
                             "--", sys.executable, str(relative), "--bug", "method-not-found-code"],
                            capture_output=True, text=True, env=cli_env(), timeout=300, cwd=ROOT)
    assert result.returncode == 1, result.stdout + result.stderr
    finding = json.loads(report.read_text())["findings"][0]
    assert finding["reproducer"]["shell"].startswith(f"cd {scratch} && ")
    transcript = json.loads(Path(finding["corpus_path"]).read_text())
    assert transcript["server"]["cwd"] == str(scratch)
    assert transcript["server"]["command"][1] == str(MCP_SERVER)
