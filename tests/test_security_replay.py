"""--security findings replay: a transcript keeps `{workspace}`, and `mcpfuzz replay` plants a fresh workspace.

Each security run and replay gets TMPDIR of its own, so the folders mcpfuzz plants there (and must remove) are
told apart from any other process's.
"""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
from mcpfuzz.strategies.payloads.canaries import CanaryLayout

from mcpfuzz.engine.security.workspace import SecurityWorkspace
from mcpfuzz.jsonrpc.expectation import Expectation
from mcpfuzz.jsonrpc.frame import Case
from mcpfuzz.transport.http_target import HttpTarget
from mcpfuzz.transport.stdio_target import StdioTarget
from tests.conftest import SERVERS_DIR, run_cli

pytestmark = pytest.mark.slow

SANDBOX = [sys.executable, str(SERVERS_DIR / "sandbox_server.py"), "--root", "{workspace}"]
SHELL = [sys.executable, str(SERVERS_DIR / "shell_server.py"), "--root", "{workspace}"]
BUGS = {"sandbox-escape": (SANDBOX, "startswith"), "command-injection": (SHELL, "shell")}


@dataclass(frozen=True)
class SecurityCorpus:
    """A corpus one `run --security` wrote for a buggy server: its folder, its one transcript, its clean twin."""

    folder: Path
    transcript: Path
    clean: list[str]
    report: Path  # the run's JSON report


def planted(tmp: Path) -> list[str]:
    """The folders mcpfuzz planted under `tmp` and left there."""
    return sorted(path.name for path in tmp.iterdir() if path.name.startswith("mcpfuzz-"))


def private_tmp(root: Path) -> tuple[Path, dict[str, str]]:
    """A TMPDIR of one's own, and the environment that gives it to mcpfuzz."""
    tmp = root / "tmp"
    tmp.mkdir(exist_ok=True)
    return tmp, {"TMPDIR": str(tmp)}


@pytest.fixture(scope="module", params=sorted(BUGS))
def security_corpus(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> SecurityCorpus:
    oracle = request.param
    command, bug = BUGS[oracle]
    root = tmp_path_factory.mktemp(oracle)
    tmp, env = private_tmp(root)
    corpus = root / "corpus"
    report = root / "report.json"
    result = run_cli(["run", "--security", "--phases", "coverage", "--budget", "120", "--seed", "3", "--corpus",
                      str(corpus), "--json", str(report), "--", *command, "--bug", bug], timeout=240, env=env)
    assert result.returncode == 1, result.stdout + result.stderr
    saved = [path for path in corpus.glob("*.json") if path.name != "manifest.json" and oracle in path.name]
    assert len(saved) == 1, sorted(corpus.iterdir())
    assert planted(tmp) == []
    return SecurityCorpus(corpus, saved[0], command, report)


def test_the_transcript_keeps_the_placeholder_and_the_old_folders(security_corpus: SecurityCorpus) -> None:
    data = json.loads(security_corpus.transcript.read_text())
    assert data["server"]["command"][2:4] == ["--root", "{workspace}"]
    assert "cwd" not in data["server"]  # the server ran in the workspace: the replay's own, then
    assert "mcpfuzz-workspace-" in data["security"]["root"] and "mcpfuzz-canary-" in data["security"]["hits"]
    assert not Path(data["security"]["root"]).exists()
    assert data["reproducible"] is True  # the run's own re-run, in its own workspace, failed again


def test_replay_of_the_file_fails_again_and_removes_its_workspace(security_corpus: SecurityCorpus,
                                                                  tmp_path: Path) -> None:
    tmp, env = private_tmp(tmp_path)
    result = run_cli(["replay", str(security_corpus.transcript)], env=env)
    assert result.returncode == 1, result.stdout + result.stderr
    assert result.stdout.startswith("FAILED"), result.stdout
    assert "{workspace} was the run's temporary workspace" in result.stdout
    assert planted(tmp) == []


def test_replay_of_the_folder_against_the_clean_twin_is_fixed(security_corpus: SecurityCorpus,
                                                              tmp_path: Path) -> None:
    tmp, env = private_tmp(tmp_path)
    result = run_cli(["replay", str(security_corpus.folder), "--", *security_corpus.clean], env=env)
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.startswith("FIXED"), result.stdout
    assert planted(tmp) == []


def test_a_plain_run_skips_a_security_transcript_and_says_why(security_corpus: SecurityCorpus,
                                                              tmp_path: Path) -> None:
    folder = tmp_path / "root"
    folder.mkdir()
    command = [word.replace("{workspace}", str(folder)) for word in security_corpus.clean]
    result = run_cli(["run", "--budget", "10", "--phases", "coverage", "--corpus", str(security_corpus.folder),
                      "--", *command], timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr
    assert f"{security_corpus.transcript.name} skipped: it is a --security finding" in result.stdout
    assert json.loads(security_corpus.transcript.read_text())["status"] == "failing"


def test_a_later_security_run_replays_it_in_its_own_workspace(security_corpus: SecurityCorpus,
                                                              tmp_path: Path) -> None:
    tmp, env = private_tmp(tmp_path)
    copy = tmp_path / "corpus"
    copy.mkdir()
    for path in security_corpus.folder.iterdir():
        (copy / path.name).write_bytes(path.read_bytes())
    name = security_corpus.transcript.name
    oracle = json.loads(security_corpus.transcript.read_text())["oracle"]
    command, bug = BUGS[oracle]
    # No call phase: only the corpus replay (the regression phase) sends the payload.
    args = ["run", "--security", "--phases", "lifecycle", "--budget", "30", "--corpus", str(copy)]
    report = tmp_path / "report.json"
    again = run_cli([*args, "--json", str(report), "--", *command, "--bug", bug], timeout=240, env=env)
    assert again.returncode == 1, again.stdout + again.stderr
    assert [f["oracle"] for f in json.loads(report.read_text())["findings"]] == [oracle]
    fixed = run_cli([*args, "--", *security_corpus.clean], timeout=240, env=env)
    assert fixed.returncode == 0, fixed.stdout + fixed.stderr
    assert f"corpus: {name} is fixed" in fixed.stdout
    assert json.loads((copy / name).read_text())["status"] == "fixed"
    assert planted(tmp) == []


def test_a_baseline_entry_is_replayed_in_the_run_s_own_workspace(security_corpus: SecurityCorpus,
                                                                 tmp_path: Path) -> None:
    tmp, env = private_tmp(tmp_path)
    baseline = tmp_path / "baseline.json"
    wrote = run_cli(["baseline", str(security_corpus.report), "-o", str(baseline), "--reason", "known"])
    assert wrote.returncode == 0 and "1 with a transcript" in wrote.stdout, wrote.stdout + wrote.stderr
    oracle = json.loads(security_corpus.transcript.read_text())["oracle"]
    command, bug = BUGS[oracle]
    # Only the baseline's replay sends the payload: it must fail again there, or the entry would be stale.
    accepted = run_cli(["run", "--security", "--phases", "lifecycle", "--budget", "30", "--no-replay",
                        "--baseline", str(baseline), "--", *command, "--bug", bug], timeout=240, env=env)
    assert accepted.returncode == 0, accepted.stdout + accepted.stderr
    assert "accepted in the baseline" in accepted.stdout
    assert planted(tmp) == []


def test_a_missing_working_directory_is_named(security_corpus: SecurityCorpus, tmp_path: Path) -> None:
    data = json.loads(security_corpus.transcript.read_text())
    missing = tmp_path / "gone"
    data.pop("security")
    data["server"] = {"command": [word.replace("{workspace}", str(tmp_path)) for word in security_corpus.clean],
                      "cwd": str(missing)}
    transcript = tmp_path / "moved.json"
    transcript.write_text(json.dumps(data))
    result = run_cli(["replay", str(transcript)])
    assert result.returncode == 2, result.stdout + result.stderr
    assert f"the working directory {str(missing)!r} does not exist" in result.stdout
    assert "command not found" not in result.stdout
    # Only a --security transcript has a workspace to put in a command.
    placeholder = run_cli(["replay", str(transcript), "--", *security_corpus.clean])
    assert placeholder.returncode == 2, placeholder.stdout + placeholder.stderr
    assert "this transcript is not one" in placeholder.stdout


def test_a_saved_server_and_case_are_moved_into_a_fresh_workspace() -> None:
    saved = CanaryLayout("/tmp/mcpfuzz-workspace-aaaaaaaa", "/tmp/mcpfuzz-canary-bbbbbbbb", "0" * 16)
    workspace = SecurityWorkspace.create()
    try:
        new = workspace.layout
        assert workspace.place(StdioTarget(("srv", "{workspace}"))) == StdioTarget(("srv", workspace.folder),
                                                                                    workspace.folder)
        assert workspace.place(StdioTarget(("srv",), "{workspace}/sub")).cwd == f"{workspace.folder}/sub"
        launched = workspace.place(HttpTarget("http://127.0.0.1:{port}/mcp", launch=("srv", "{workspace}")))
        assert isinstance(launched, HttpTarget) and launched.launch == ("srv", workspace.folder)
        case = Case("c", "corpus", "", f'{{"a":"{saved.hits}/hit-x","b":"{saved.root}/outside.txt"}}'.encode(),
                    Expectation(judge="sandbox-escape"), setup=(saved.root.encode(),))
        moved = workspace.relocate(case, saved)
        assert moved.data == f'{{"a":"{new.hits}/hit-x","b":"{new.root}/outside.txt"}}'.encode()
        assert moved.setup == (new.root.encode(),)
    finally:
        workspace.remove()
    assert not Path(new.root).exists() and not Path(new.hits).exists()
