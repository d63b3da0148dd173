"""Findings from what a call was seen doing are judged again as found: by `mcpfuzz replay` and by a later run's
corpus replay, which list no tools (the tool's annotations travel with the saved case), and never called fixed by a
replay that cannot see.

The server is tests/servers/blind_tools_server.py: each blind bug behind a flag, every tool honest without it.
"""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.conftest import SERVERS_DIR, run_cli

pytestmark = pytest.mark.slow  # whole runs and replays, as test_security_replay.py

SERVER = [sys.executable, str(SERVERS_DIR / "blind_tools_server.py")]
BUGS = ["--bug", "cache", "--bug", "egress", "--bug", "shell", "--bug", "outside"]
OBSERVED = "sandbox-escape,command-injection,network-egress,read-only-truthful"
FOUND = {("tool/lookup", "read-only-truthful"), ("tool/ping", "network-egress"), ("tool/count", "command-injection"),
         ("tool/save", "sandbox-escape")}
SHORT = ["--seed", "5", "--phases", "coverage", "--max-examples", "3", "--budget", "120", "--oracles", OBSERVED]


@dataclass(frozen=True)
class Corpus:
    folder: Path
    transcripts: dict[str, Path]  # oracle -> its transcript


def transcripts(folder: Path) -> dict[str, Path]:
    """Each saved finding by its oracle."""
    return {json.loads(path.read_text())["oracle"]: path for path in folder.glob("*.json")
            if path.name != "manifest.json"}


@pytest.fixture(scope="module")
def security_corpus(tmp_path_factory: pytest.TempPathFactory) -> Corpus:
    """A --security run of the server with every blind bug: one finding per bug, each re-checked, saved."""
    root = tmp_path_factory.mktemp("observed")
    report = root / "report.json"
    result = run_cli(["run", "--security", *SHORT, "--corpus", str(root / "corpus"), "--json", str(report), "--",
                      *SERVER, "--root", "{workspace}", *BUGS], timeout=240)
    assert result.returncode == 1, result.stdout + result.stderr
    findings = json.loads(report.read_text())["findings"]
    assert {(f["target"], f["oracle"]) for f in findings} == FOUND, result.stdout
    assert all(f["reproducible"] is True for f in findings), result.stdout
    return Corpus(root / "corpus", transcripts(root / "corpus"))


def test_each_saved_case_keeps_what_its_tool_declared(security_corpus: Corpus) -> None:
    saved = {oracle: json.loads(path.read_text())["case"]["expect"]["extra"]["observed"]
             for oracle, path in security_corpus.transcripts.items()}
    assert saved["read-only-truthful"] == {"read_only": True, "open_world": False, "allowed": []}
    assert saved["network-egress"]["open_world"] is False and saved["sandbox-escape"]["read_only"] is False


def test_replay_of_each_finding_fails_again(security_corpus: Corpus) -> None:
    result = run_cli(["replay", str(security_corpus.folder)], timeout=180)
    assert result.returncode == 1, result.stdout + result.stderr
    assert "replayed 4 transcripts: 0 fixed, 4 failed, 0 error" in result.stdout, result.stdout
    assert "annotated readOnlyHint: true, but the call changed a file: write(" in result.stdout


def test_replay_against_the_fixed_twin_is_fixed(security_corpus: Corpus) -> None:
    """The fixed server starts as the buggy one does (a temporary file made as it imports): start-up is not the
    call's, whatever the era (a modern-era replay has no handshake before the call)."""
    result = run_cli(["replay", str(security_corpus.folder), "--", *SERVER, "--root", "{workspace}"], timeout=180)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "replayed 4 transcripts: 4 fixed, 0 failed, 0 error" in result.stdout, result.stdout


def test_a_replay_that_cannot_see_is_an_error_not_fixed(security_corpus: Corpus) -> None:
    """Behind a shell the hook cannot be given to the server: the finding cannot be judged, so it is not FIXED."""
    script = f"exec {sys.executable} {SERVERS_DIR / 'blind_tools_server.py'} --root \"$0\""
    result = run_cli(["replay", str(security_corpus.transcripts["read-only-truthful"]), "--", "/bin/sh", "-c",
                      script, "{workspace}"], timeout=120)
    assert result.stdout.startswith("ERROR"), result.stdout + result.stderr
    assert "seen by the hook mcpfuzz loads into the server, and this server cannot be given it" in result.stdout


def test_a_later_run_judges_the_saved_read_only_call_again_only_when_it_observes(tmp_path: Path) -> None:
    """--observe alone (no workspace): the lie is saved; a later run without a hook skips it and says why; a later
    run with one, calling no tool itself (so it lists no tools' annotations), finds it again, and marks it fixed
    once the server is."""
    root = tmp_path / "root"
    root.mkdir()
    corpus = tmp_path / "corpus"
    server = [*SERVER, "--root", str(root)]
    first = run_cli(["run", "--observe", *SHORT, "--include-tool", "lookup", "--exclude-tool", "ping",
                     "--corpus", str(corpus), "--", *server, "--bug", "cache"], timeout=180)
    assert first.returncode == 1, first.stdout + first.stderr
    saved = transcripts(corpus)
    assert sorted(saved) == ["read-only-truthful"], first.stdout
    name = saved["read-only-truthful"].name
    later = ["run", "--phases", "catalogue", "--oracles", "read-only-truthful", "--budget", "60",
             "--corpus", str(corpus)]
    plain = run_cli([*later, "--", *server, "--bug", "cache"], timeout=180)
    assert plain.returncode == 0, plain.stdout + plain.stderr
    assert f"corpus: {name} skipped: it is a finding of what the server was seen doing" in plain.stdout
    report = tmp_path / "report.json"
    again = run_cli([*later, "--observe", "--json", str(report), "--", *server, "--bug", "cache"], timeout=180)
    assert again.returncode == 1, again.stdout + again.stderr
    assert [f["oracle"] for f in json.loads(report.read_text())["findings"]] == ["read-only-truthful"]
    fixed = run_cli([*later, "--observe", "--", *server], timeout=180)
    assert fixed.returncode == 0, fixed.stdout + fixed.stderr
    assert f"corpus: {name} is fixed" in fixed.stdout
