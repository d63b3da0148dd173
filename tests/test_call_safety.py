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


ANNOTATED = ROOT / "tests" / "servers" / "annotated_server.py"


def _run_all_risky(tmp_path: Path, *options: str) -> tuple[subprocess.CompletedProcess[str], dict]:
    report = tmp_path / "report.json"
    result = subprocess.run([*CLI, *options, "--budget", "20", "--phases", "coverage", "--max-examples", "3",
                             "--json", str(report), "--corpus", str(tmp_path / "corpus"), "--",
                             sys.executable, str(ANNOTATED), "--all-risky"],
                            capture_output=True, text=True, env=cli_env(), timeout=300, cwd=ROOT)
    return result, json.loads(report.read_text())


def test_a_run_that_calls_nothing_for_the_servers_risk_hints_is_untested(tmp_path: Path) -> None:
    """Every tool annotated openWorldHint: said at the start and in the verdict, with the option that calls them,
    and exit 2: the run could not test any target the server declares."""
    result, report = _run_all_risky(tmp_path, "-q")
    assert result.returncode == 2, result.stdout + result.stderr
    start, _, summary = result.stdout.partition("summary")
    assert "8 tools skipped for the server's risk hints: tool/list_notes (openWorldHint)" in start
    assert "nothing will be called" in start and "--include-tool NAME" in start
    assert "UNTESTED" in summary and "--include-tool NAME" in summary and "tool/delete_note" not in summary
    assert "each one not excluded by an option is annotated as risky" in report["untested"]
    assert report["stats"]["tool_calls"] == 0


def test_naming_one_risky_tool_tests_it_and_says_what_stayed_out(tmp_path: Path) -> None:
    result, report = _run_all_risky(tmp_path, "--include-tool", "get_tags")
    assert result.returncode in (0, 1), result.stdout + result.stderr
    assert report["untested"] is None and report["stats"]["tool_calls"] > 0
    summary = result.stdout.partition("summary")[2]
    assert "left out for their risk hints: tool/list_notes (openWorldHint)" in summary


def test_excluding_every_tool_by_name_is_the_users_choice(tmp_path: Path) -> None:
    """The user said which tools to leave out: the protocol-only run is what was asked for, not untested."""
    excluded = [word for name in ("list_notes", "get_note", "get_tags", "lookup", "stats", "add_note", "set_tag",
                                  "delete_note") for word in ("--exclude-tool", name)]
    result, report = _run_all_risky(tmp_path, *excluded)
    assert result.returncode in (0, 1), result.stdout + result.stderr
    assert report["untested"] is None and "risk hints" not in result.stdout
