"""The GitHub Action: action.yml and its script agree on the inputs, and the script runs a real mcpfuzz."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from mcpfuzz.cli.github_action import INPUTS, JOB_INDEX, JOB_TOTAL, PREFIX, ActionError, artifact_name, leg_name, plan
from tests.conftest import MCP_SERVER, REPO_ROOT, cli_env

pytestmark = pytest.mark.process

ACTION = (REPO_ROOT / "action.yml").read_text(encoding="utf-8")
QUICK = "--phases catalogue --timeout 1"


def action_inputs() -> set[str]:
    """The input names declared in action.yml (two-space keys of the `inputs:` block)."""
    block = ACTION.split("\ninputs:\n", 1)[1].split("\noutputs:\n", 1)[0]
    return set(re.findall(r"^  ([a-z-]+):$", block, re.MULTILINE))


def outputs_of(path: Path) -> dict[str, str]:
    return dict(line.split("=", 1) for line in path.read_text().splitlines())


def test_action_yml_and_the_script_agree_on_the_inputs() -> None:
    """Each input the script reads is declared and passed to it; each declared input is used somewhere."""
    declared = action_inputs()
    assert set(INPUTS) <= declared
    passed = set(re.findall(rf"{PREFIX}([A-Z_]+): \$\{{\{{ inputs\.([a-z-]+) \}}\}}", ACTION))
    assert passed == {(name.upper().replace("-", "_"), name) for name in INPUTS}
    for name in declared:
        assert f"inputs.{name}" in ACTION, f"input {name} is declared but never used"
    assert '"$MCPFUZZ_PYTHON" -m mcpfuzz.cli.github_action' in ACTION


def test_the_artifact_keeps_every_report_the_script_writes() -> None:
    """The artifact takes the reports' glob the script outputs and every transcript of the corpus, subfolders too."""
    upload = ACTION.split("uses: actions/upload-artifact@", 1)[1].split("\n    - name:", 1)[0]
    uploaded = set(re.findall(r"\$\{\{ steps\.fuzz\.outputs\.([a-z-]+) \}\}", upload))
    assert uploaded == {"reports", "artifact-name"}
    assert "${{ inputs.corpus }}/**/*.json" in upload
    assert "value: ${{ steps.fuzz.outputs.html }}" in ACTION


def test_artifact_names_differ_per_matrix_leg_and_are_valid() -> None:
    """Prefix and job, plus the leg in a matrix (the SARIF category too); a given name wins; bad characters go."""
    leg = {"GITHUB_JOB": "fuzz", JOB_INDEX: "2", JOB_TOTAL: "3"}
    assert artifact_name("", "mcpfuzz-run", leg) == "mcpfuzz-run-fuzz-2"
    assert artifact_name("", "mcpfuzz-soak", {**leg, JOB_INDEX: "0", JOB_TOTAL: "1"}) == "mcpfuzz-soak-fuzz"
    assert artifact_name("", "reports/mcpfuzz", {}) == "reports-mcpfuzz"
    assert artifact_name("fuzz: linux", "mcpfuzz-run", leg) == "fuzz- linux"
    assert leg_name("mcpfuzz-run", leg) == "mcpfuzz-run-fuzz-2"


def quick_plan(**given: str) -> list[str]:
    inputs = dict.fromkeys(INPUTS, "")
    inputs.update({key.replace("_", "-"): value for key, value in given.items()})
    return plan(inputs, "/tmp/s.md").argv


def test_inputs_become_one_command_line() -> None:
    """run with a command, soak with a URL, a servers-file entry, none (a config file's); contradictions refused."""
    assert quick_plan(command="python server.py --x 'a b'", fail_on="high", args="--exclude-tool rm") == [
        "mcpfuzz", "run", "--fail-on", "high", "--json", "mcpfuzz-run.json", "--sarif", "mcpfuzz-run.sarif",
        "--junit-xml", "mcpfuzz-run.xml", "--html", "mcpfuzz-run.html", "--summary-md", "/tmp/s.md",
        "--exclude-tool", "rm",
        "--", "python", "server.py", "--x", "a b"]
    soak = quick_plan(mode="soak", url="http://127.0.0.1:8000/mcp", duration="2h", budget="120")
    assert soak[:4] == ["mcpfuzz", "soak", "--duration", "2h"] and "--budget" not in soak
    assert soak[-1] == "http://127.0.0.1:8000/mcp"
    named = quick_plan(servers_file=".vscode/mcp.json", server="notes", baseline="b.json")
    assert named[named.index("--servers-file"):][:2] == ["--servers-file", ".vscode/mcp.json"]
    assert named[named.index("--server"):][:2] == ["--server", "notes"] and "--baseline" in named
    assert quick_plan()[-2:] == ["--summary-md", "/tmp/s.md"]  # the server then comes from [tool.mcpfuzz]
    for bad, message in (({"command": "x", "url": "http://h/mcp"}, "not command and url"),
                         ({"server": "x", "command": "y"}, "give servers-file too"),
                         ({"command": "x", "mode": "fuzz"}, "use run or soak")):
        with pytest.raises(ActionError, match=message):
            quick_plan(**bad)


def run_action(tmp_path: Path, **inputs: str) -> tuple[subprocess.CompletedProcess[str], dict[str, str], str]:
    """The action's script as the composite step runs it: inputs in the environment, GitHub's files given."""
    output, summary = tmp_path / "github_output", tmp_path / "step_summary.md"
    summary.write_text("earlier step\n")
    env = cli_env({"GITHUB_OUTPUT": str(output), "GITHUB_STEP_SUMMARY": str(summary), "GITHUB_JOB": "fuzz",
                   **{PREFIX + name.upper(): value for name, value in inputs.items()}})
    result = subprocess.run([sys.executable, "-m", "mcpfuzz.cli.github_action"], capture_output=True, text=True,
                            env=env, cwd=tmp_path, timeout=120, stdin=subprocess.DEVNULL)
    return result, outputs_of(output), summary.read_text()


def test_script_runs_mcpfuzz_and_reports_for_the_later_steps(tmp_path: Path) -> None:
    """Findings: the step still succeeds (later steps run), outputs carry exit status 1, the summary is appended."""
    result, outputs, summary = run_action(tmp_path, command=f"{sys.executable} {MCP_SERVER} --bug id-coerce",
                                          budget="30", args=QUICK)
    assert result.returncode == 0, result.stdout + result.stderr
    assert outputs["exit-code"] == "1" and outputs["findings"] == "1"
    assert (tmp_path / outputs["sarif"]).is_file() and (tmp_path / outputs["json"]).is_file()
    assert (tmp_path / outputs["junit-xml"]).is_file()
    assert sorted(path.name for path in tmp_path.glob(outputs["reports"])) == sorted(
        outputs[name] for name in ("json", "sarif", "junit-xml", "html"))
    assert outputs["artifact-name"] == outputs["sarif-category"] == "mcpfuzz-run-fuzz"
    page = (tmp_path / outputs["html"]).read_text()
    assert page.startswith("<!DOCTYPE html>") and "id-preserved" in page
    assert summary.startswith("earlier step\n") and "id-preserved" in summary
    assert list((tmp_path / "corpus").glob("*_id-preserved_*.json"))


def test_script_on_a_clean_server_and_on_bad_inputs(tmp_path: Path) -> None:
    """A clean server gives exit-code 0; contradicting inputs give an error annotation and exit-code 2."""
    _, outputs, _ = run_action(tmp_path, command=f"{sys.executable} {MCP_SERVER}", budget="30", args=QUICK)
    assert outputs["exit-code"] == "0" and outputs["findings"] == "0"
    bad = tmp_path / "bad"
    bad.mkdir()
    result, outputs, _ = run_action(bad, command="x", url="http://127.0.0.1:9/mcp")
    assert result.returncode == 0 and outputs["exit-code"] == "2"
    assert "::error title=mcpfuzz action::give one of command, url and servers-file" in result.stdout


def test_the_snapshot_input_is_checked_by_the_run() -> None:
    """`snapshot: mcp-surface.json` is `run --snapshot mcp-surface.json`; a soak does not take it."""
    argv = quick_plan(command="python server.py", snapshot="mcp-surface.json")
    assert argv[argv.index("--snapshot") + 1] == "mcp-surface.json" and argv[-2:] == ["python", "server.py"]
    with pytest.raises(ActionError, match="mode: run"):
        quick_plan(mode="soak", url="http://127.0.0.1:1/mcp", snapshot="mcp-surface.json")
