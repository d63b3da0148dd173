"""The GitHub Action run the way a runner runs it: its composite steps on this machine, two legs of a matrix.

The job has a user's venv first on PATH whose `python` alone can import the server's dependency, as after a
workflow's own `pip install -e .`; the action installs mcpfuzz from a clean copy of this repository (what a
runner downloads for `uses: OWNER/REPO@SHA`) into a venv of its own, for real, and fuzzes `python server.py`.
Leg 0 is a push with a server that has a bug; leg 1 is a pull request from a fork with a clean server, where
code scanning refuses the SARIF upload (a fork's token is read-only).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.action_expressions import Scope, UnsupportedExpression, condition, render
from tests.action_runner import ActionRun, FakeActions, Job, Outcome, parse_command_file, run_action
from tests.conftest import MCP_SERVER, REPO_ROOT

pytestmark = pytest.mark.slow

QUICK = "--phases catalogue --timeout 1"
DEPENDENCY = "mcpfuzz_action_user_dependency"
# The server imports a package only the user's venv has, and notes which interpreter ran it.
SERVER = f"""\
import runpy
import sys
from pathlib import Path

import {DEPENDENCY}

Path("server-python.txt").write_text(sys.executable + "\\n")
sys.argv[0] = {str(MCP_SERVER)!r}
runpy.run_path({str(MCP_SERVER)!r}, run_name="__main__")
"""
# What a runner checks out for `uses: OWNER/REPO@SHA`: the sources, none of this work tree's venvs or builds.
NOT_IN_THE_ACTION = shutil.ignore_patterns(".git", ".venv*", "build", "dist", "__pycache__", "*.egg-info",
                                           ".pytest_cache", ".ruff_cache", ".mypy_cache", ".hypothesis",
                                           "node_modules")
SARIF = "github/codeql-action/upload-sarif"
# A transcript in a subfolder, as `--all-servers` writes them, restored from the cache before the run.
RESTORED = "corpus/notes/tool-search_id-preserved_0123456789ab.json"


@dataclass(frozen=True)
class Stage:
    """What both legs share: the action's copy, the user's venv, the runner's temp folder."""

    root: Path
    action_dir: Path
    base_python: Path
    user_python: Path
    runner_temp: Path

    def user_files(self) -> list[str]:
        """Every file of the user's venv but the bytecode its python writes, to show the action left it alone."""
        venv = self.user_python.parent.parent
        return sorted(str(path.relative_to(venv)) for path in venv.rglob("*") if "__pycache__" not in path.parts)


def base_python() -> Path:
    """A plain interpreter (no venv, no mcpfuzz): what setup-python names in its python-path output."""
    for name in (f"python{sys.version_info.major}.{sys.version_info.minor}", "python3"):
        candidate = Path(sys.base_prefix, "bin", name)
        if candidate.is_file():
            return candidate
    pytest.skip(f"no base interpreter under {sys.base_prefix}")


def job_env(stage: Stage) -> dict[str, str]:
    """The job's environment: the user's venv first on PATH, and this machine's pip settings and home."""
    keep = {name: value for name, value in os.environ.items()
            if name.startswith("PIP_") or name in ("HOME", "LANG", "LC_ALL", "TMPDIR", "SSL_CERT_FILE")}
    return {**keep, "PATH": os.pathsep.join([str(stage.user_python.parent), "/usr/local/bin", "/usr/bin", "/bin"])}


@pytest.fixture(scope="module")
def stage(tmp_path_factory: pytest.TempPathFactory) -> Stage:
    root = tmp_path_factory.mktemp("action")
    action_dir = root / "action"
    shutil.copytree(REPO_ROOT, action_dir, ignore=NOT_IN_THE_ACTION, symlinks=True)
    base = base_python()
    venv = root / "user-venv"
    subprocess.run([str(base), "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
    user_python = venv / "bin" / "python"
    purelib = subprocess.run([str(user_python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                             capture_output=True, text=True, check=True, timeout=60).stdout.strip()
    package = Path(purelib, DEPENDENCY)
    package.mkdir()
    (package / "__init__.py").write_text('"""Installed in the user\'s venv only."""\n')
    runner_temp = root / "runner-temp"
    runner_temp.mkdir()
    return Stage(root, action_dir, base, user_python, runner_temp)


def leg(stage: Stage, index: int, github: dict[str, object], inputs: dict[str, str],
        fakes: FakeActions, files: dict[str, str] | None = None) -> tuple[ActionRun, Path]:
    """One leg of a two-leg matrix of the job `fuzz`, in a workspace of its own holding the server and `files`."""
    workspace = stage.root / f"leg{index}"
    for name, text in {"server.py": SERVER, **(files or {})}.items():
        (workspace / name).parent.mkdir(parents=True, exist_ok=True)
        (workspace / name).write_text(text)
    # The runner's temp folder is shared: the second leg reuses the action's venv, as a second use of the action
    # in one job does, which keeps this test to one install.
    job = Job(workspace, stage.runner_temp, job_env(stage), {"job": "fuzz", "repository": "owner/server",
                                                               "run_id": "4242", **github},
              strategy={"job-index": index, "job-total": 2}, matrix={"leg": index})
    setup_python = {"actions/setup-python": {"python-path": str(stage.base_python), "python-version": "3"}}
    run = run_action(stage.action_dir, inputs, job, FakeActions({**setup_python, **fakes.outputs}, fakes.failing))
    return run, workspace


@pytest.fixture(scope="module")
def push_leg(stage: Stage) -> tuple[ActionRun, Path, list[str]]:
    """Leg 0: a push; the server has a bug; a corpus subfolder (as --all-servers writes) came from the cache."""
    before = stage.user_files()
    github = {"event_name": "push", "ref_name": "main", "event": {"repository": {"default_branch": "main"}}}
    run, workspace = leg(stage, 0, github, {"command": "python server.py --bug id-coerce", "budget": "10",
                                            "args": QUICK}, FakeActions(), {RESTORED: "{}\n"})
    return run, workspace, before


@pytest.fixture(scope="module")
def fork_leg(stage: Stage, push_leg: tuple[ActionRun, Path, list[str]]) -> tuple[ActionRun, Path]:
    """Leg 1: a pull request from a fork; a clean server; code scanning refuses the SARIF upload."""
    event = {"repository": {"default_branch": "main"},
             "pull_request": {"number": 7, "head": {"repo": {"fork": True, "full_name": "someone/server"}}}}
    github = {"event_name": "pull_request", "ref_name": "7/merge", "event": event}
    return leg(stage, 1, github, {"command": "python server.py", "budget": "10", "args": QUICK},
               FakeActions(failing=frozenset({SARIF})))


def test_expressions_evaluate_as_a_runner_does_and_unknown_forms_are_refused() -> None:
    """Loose `==`, null for a missing property, an implicit success() in if:, and no guessing at other forms."""
    contexts = {"inputs": {"upload-sarif": "true"}, "steps": {"fuzz": {"outputs": {"sarif": ""}}},
                "github": {"event": {"pull_request": {"head": {"repo": {"fork": True}}}}, "run_id": 7}}
    ok = Scope(contexts, {"success": True, "failure": False, "always": True, "cancelled": False}.__getitem__)
    failed = Scope(contexts, {"success": False, "failure": True, "always": True, "cancelled": False}.__getitem__)
    assert condition("${{ inputs.upload-sarif == 'TRUE' }}", ok) and not condition("inputs.upload-sarif", failed)
    assert condition("${{ !cancelled() && steps.fuzz.outputs.sarif == '' }}", failed)
    assert not condition("${{ always() && steps.fuzz.outputs.sarif != '' }}", ok)
    assert render("${{ github.event.pull_request.head.repo.fork }}-${{ github.run_id }}-${{ github.no.such }}",
                  ok) == "true-7-"
    for unknown in ("contains(inputs.args, 'x')", "inputs['args']", "github.run_id < 2", "vars.name", "inputs."):
        with pytest.raises(UnsupportedExpression):
            render("${{ " + unknown + " }}", ok)


def test_command_files_are_read_in_both_forms() -> None:
    """GITHUB_OUTPUT and GITHUB_ENV: `name=value` (the value may hold '=') and the `name<<DELIMITER` block."""
    assert parse_command_file("a=1\nlines<<EOF\nx=1\ny\nEOF\nc=d=e\n") == {"a": "1", "lines": "x=1\ny", "c": "d=e"}


def test_every_uses_is_pinned_to_a_commit_with_its_release_named() -> None:
    """Each `uses:` in action.yml names a full commit SHA and, in a comment, the release it was."""
    text = (REPO_ROOT / "action.yml").read_text()
    lines = re.findall(r"^ +(?:- )?(uses:.*)$", text, re.MULTILINE)
    assert len(lines) == 5, lines
    for line in lines:
        assert re.fullmatch(r"uses: [\w.-]+/[\w./-]+@[0-9a-f]{40} # v\d+\.\d+\.\d+", line), line


def test_the_users_python_runs_the_server_and_stays_theirs(stage: Stage,
                                                          push_leg: tuple[ActionRun, Path, list[str]]) -> None:
    """`python server.py` is the user's python (its packages import); mcpfuzz runs from its own venv."""
    run, workspace, before = push_leg
    alone = subprocess.run([str(stage.base_python), "-c", f"import {DEPENDENCY}"], capture_output=True, timeout=60)
    assert alone.returncode != 0, "the server's dependency must be importable by the user's python only"
    assert run.outputs["exit-code"] == "1", run.log()  # a finding: the server ran (2 would be unusable)
    assert (workspace / "server-python.txt").is_file(), run.log()
    assert (workspace / "server-python.txt").read_text().strip() == str(stage.user_python)
    assert f"the server's program: {stage.user_python}" in run.step("fuzz").log
    mcpfuzz_python = run.step("install").outputs["python"]
    assert Path(mcpfuzz_python).is_relative_to(stage.runner_temp), mcpfuzz_python
    assert "installing" in run.step("install").log and "mcpfuzz, version" in run.step("install").log
    assert shutil.which("python", path=run.env["PATH"]) == str(stage.user_python)
    assert run.env == job_env(stage)  # nothing added to GITHUB_ENV or GITHUB_PATH for the later steps
    assert stage.user_files() == before
    assert shutil.which("mcpfuzz", path=run.env["PATH"]) is None


def test_the_outputs_name_the_reports_and_the_artifact_keeps_them(
        push_leg: tuple[ActionRun, Path, list[str]]) -> None:
    """exit-code, findings and the report paths are set and exist; the artifact globs find reports and transcripts."""
    run, workspace, _ = push_leg
    assert run.outputs["findings"] == "1"
    for name in ("json", "sarif", "junit-xml", "html"):
        assert run.outputs[name] and (workspace / run.outputs[name]).is_file(), name
    assert "id-preserved" in run.summary
    upload = run.step("Keep the reports and the transcripts")
    assert upload.outcome is Outcome.SUCCESS and upload.inputs["name"] == run.outputs["artifact-name"]
    reports, corpus = upload.globbed.values()
    assert sorted(reports) == sorted(run.outputs[name] for name in ("json", "sarif", "junit-xml", "html"))
    assert RESTORED in corpus and [path for path in corpus if path != RESTORED and "_id-preserved_" in path], corpus
    sarif = run.step("sarif")
    assert sarif.outcome is Outcome.SUCCESS and sarif.globbed == {run.outputs["sarif"]: [run.outputs["sarif"]]}
    assert run.step("Save the corpus").globbed == {"corpus": ["corpus"]}
    # Findings fail the action in its last step only, after the corpus, SARIF and artifact steps ran.
    outcomes = {step.name: step.outcome.value for step in run.steps}
    assert list(outcomes.values()) == ["success"] * 6 + ["skipped", "success", "failure"], run.log()
    assert outcomes["Say why the SARIF report was not uploaded"] == "skipped" and run.result is Outcome.FAILURE


def test_two_matrix_legs_keep_their_own_artifact_and_corpus(
        push_leg: tuple[ActionRun, Path, list[str]], fork_leg: tuple[ActionRun, Path]) -> None:
    """The legs' artifact names, corpus cache keys and SARIF categories differ (a name used twice is refused)."""
    first, second = push_leg[0], fork_leg[0]
    names = [run.step("Keep the reports and the transcripts").inputs["name"] for run in (first, second)]
    assert names == ["mcpfuzz-run-fuzz-0", "mcpfuzz-run-fuzz-1"]
    keys = [run.step("Save the corpus").inputs["key"] for run in (first, second)]
    assert keys[0] != keys[1] and all(key.endswith("-4242") for key in keys), keys
    categories = [run.step("sarif").inputs["category"] for run in (first, second)]
    assert categories == ["mcpfuzz-run-fuzz-0", "mcpfuzz-run-fuzz-1"]


def test_a_refused_sarif_upload_on_a_fork_is_a_warning(fork_leg: tuple[ActionRun, Path]) -> None:
    """On a fork's pull request the refused upload warns and says why; the clean run still passes."""
    run, _ = fork_leg
    assert run.outputs["exit-code"] == "0", run.log()
    sarif = run.step("sarif")
    assert sarif.outcome is Outcome.FAILURE and sarif.conclusion is Outcome.SUCCESS
    warnings = run.annotations("warning")
    assert any("pull request comes from a fork" in warning for warning in warnings), run.log()
    assert run.result is Outcome.SUCCESS, run.log()
    assert "installing" not in run.step("install").log  # the first leg's venv, reused
