"""The corpus from real runs: transcripts, replay FIXED/FAILED/ERROR, no secrets, same seed same bytes."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

from mcpfuzz.corpus.store import CorpusStore
from tests.conftest import CLI, cli_env, kill_leftovers, private_copy, run_cli
from tests.diffs import assert_same_lines
from tests.engine_runs import MCP_SERVER, SERVERS, run_engine

pytestmark = pytest.mark.slow

BUGGY = [sys.executable, str(MCP_SERVER), "--bug", "crash-batch", "--bug", "id-coerce"]
CLEAN = [sys.executable, str(MCP_SERVER)]
PROTOCOL_RUN = ["run", "--timeout", "1", "--budget", "30", "--phases", "catalogue,lifecycle", "--seed", "3"]


def _transcripts(folder: Path) -> list[dict]:
    good, broken = CorpusStore(folder).load_all()
    assert not broken, broken
    return [data for _, data in good]


@dataclass(frozen=True)
class Recorded:
    """A protocol run of the buggy server: its output, JSON report and corpus (replays only read the corpus)."""

    result: subprocess.CompletedProcess[str]
    report: Path
    corpus: Path


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> Recorded:
    folder = tmp_path_factory.mktemp("recorded")
    corpus, report = folder / "corpus", folder / "report.json"
    result = run_cli([*PROTOCOL_RUN, "--corpus", str(corpus), "--json", str(report), "--", *BUGGY])
    return Recorded(result, report, corpus)


def test_run_writes_one_transcript_per_finding_and_replay_judges_them(recorded: Recorded) -> None:
    result, report, corpus = recorded.result, recorded.report, recorded.corpus
    assert result.returncode == 1, result.stdout + result.stderr
    findings = json.loads(report.read_text())["findings"]
    transcripts = _transcripts(corpus)
    assert len(transcripts) == len(findings) >= 2
    assert all(f["corpus_path"] and Path(f["corpus_path"]).is_file() for f in findings)
    assert (corpus / "manifest.json").is_file()
    # Printed as invoked (here `python -m mcpfuzz.cli`), so that it works when pasted without a venv.
    assert f"{sys.executable} -m mcpfuzz.cli replay " in result.stdout
    crash = next(t for t in transcripts if t["oracle"] == "no-crash")
    # The reproducer is the handshake plus the one frame: nothing else is needed.
    assert len(crash["frames"]) <= 2 + 3 and crash["frames"][-1].startswith("[")

    still_buggy = run_cli(["replay", str(corpus), "--timeout", "1", "--", *BUGGY])
    assert still_buggy.returncode == 1, still_buggy.stdout
    assert still_buggy.stdout.count("FAILED") >= len(transcripts)
    fixed = run_cli(["replay", str(corpus), "--timeout", "1", "--", *CLEAN])
    assert fixed.returncode == 0, fixed.stdout
    assert f"{len(transcripts)} fixed" in fixed.stdout

    one = next(corpus.glob("*no-crash*.json"))
    single = run_cli(["replay", str(one), "--timeout", "1", "--", *BUGGY])
    assert single.returncode == 1 and "FAILED" in single.stdout and "printf" in single.stdout


def test_a_second_run_updates_the_same_files_and_replays_the_corpus_first(tmp_path: Path) -> None:
    corpus = tmp_path / "corpus"
    run_cli([*PROTOCOL_RUN, "--corpus", str(corpus), "--", *BUGGY])
    before = sorted(p.name for p in corpus.glob("*.json"))
    run_cli([*PROTOCOL_RUN, "--corpus", str(corpus), "--", *BUGGY])
    after = sorted(p.name for p in corpus.glob("*.json"))
    assert before == after
    assert all(t["seen"] == 2 for t in _transcripts(corpus))
    # The fixed server: the regression phase marks every transcript fixed.
    clean = run_cli([*PROTOCOL_RUN, "--corpus", str(corpus), "--", *CLEAN])
    assert clean.returncode == 0, clean.stdout
    assert {t.get("status") for t in _transcripts(corpus)} == {"fixed"}


def test_replay_reports_error_for_a_broken_transcript_and_a_missing_server(tmp_path: Path) -> None:
    broken = tmp_path / "broken.json"
    broken.write_text("{not json")
    result = run_cli(["replay", str(broken)])
    assert result.returncode == 2 and "ERROR" in result.stdout
    assert "Traceback" not in result.stdout + result.stderr
    corpus = tmp_path / "corpus"
    run_cli([*PROTOCOL_RUN, "--corpus", str(corpus), "--", *BUGGY])
    gone = run_cli(["replay", str(corpus), "--", "/nonexistent/server-binary"])
    assert gone.returncode == 2 and "ERROR" in gone.stdout


def test_transcripts_carry_no_secret_from_env(tmp_path: Path) -> None:
    """The secret reaches the server's stderr and argv; the transcript must not keep it."""
    secret = "s3cr3t-value-4242"
    corpus = tmp_path / "corpus"
    script = f'echo "starting with token $TOKEN" >&2; exec {sys.executable} {MCP_SERVER} --bug crash-batch'
    run_cli([*PROTOCOL_RUN, "--corpus", str(corpus), "--env", f"TOKEN={secret}", "--", "sh", "-c", script,
             secret])
    files = list(corpus.glob("*.json"))
    assert any("no-crash" in p.name for p in files)
    for path in files:
        assert secret not in path.read_text(encoding="utf-8"), path.name


def test_a_corpus_recorded_with_a_folder_in_env_replays(tmp_path: Path) -> None:
    """`--env DATA_DIR=FOLDER`, the server's own folder: a path is no secret, so the transcripts keep the command
    as it ran and replay it (the bug fixed: the folder cut out of the command, a replay of a server that never
    started). A value under a credential's name is still hidden."""
    server = private_copy(MCP_SERVER, tmp_path)
    folder, secret = str(server.parent), "s3cr3t-value-4242"
    corpus = tmp_path / "corpus"
    recorded = run_cli([*PROTOCOL_RUN, "--corpus", str(corpus), "--env", f"DATA_DIR={folder}", "--env",
                        f"API_TOKEN={secret}", "--", sys.executable, str(server), "--bug", "crash-batch", "--bug",
                        "id-coerce"])
    try:
        assert recorded.returncode == 1, recorded.stdout + recorded.stderr
        transcripts = _transcripts(corpus)
        assert len(transcripts) >= 2
        assert all(t["server"]["command"][1] == str(server) for t in transcripts), transcripts[0]["server"]
        assert all(t["server"]["env"] == ["DATA_DIR", "API_TOKEN"] for t in transcripts)
        assert not [p.name for p in corpus.glob("*.json") if secret in p.read_text(encoding="utf-8")]
        assert f"{folder}/" in recorded.stdout and secret not in recorded.stdout  # the printed reproduction too
        replayed = run_cli(["replay", str(corpus), "--timeout", "1"], env={"DATA_DIR": folder})
        assert replayed.returncode == 1, replayed.stdout + replayed.stderr
        assert f"0 fixed, {len(transcripts)} failed, 0 error" in replayed.stdout, replayed.stdout
    finally:
        kill_leftovers(str(server))


def test_a_replay_whose_server_never_starts_is_an_error_never_fixed_nor_failed(tmp_path: Path,
                                                                                recorded: Recorded) -> None:
    """A command that starts no server (an interpreter given a script that is not there: it exits at once)
    answers nothing: that says nothing about any transcript, the crash one included."""
    corpus = recorded.corpus
    assert recorded.result.returncode == 1, recorded.result.stdout + recorded.result.stderr
    count = len(_transcripts(corpus))
    assert "no-crash" in {t["oracle"] for t in _transcripts(corpus)}
    missing = tmp_path / "gone" / "server.py"
    replayed = run_cli(["replay", str(corpus), "--timeout", "1", "--", sys.executable, str(missing)])
    assert replayed.returncode == 2, replayed.stdout + replayed.stderr
    assert f"0 fixed, 0 failed, {count} error" in replayed.stdout, replayed.stdout
    assert replayed.stdout.count("the server never started") == count, replayed.stdout


def test_same_seed_sends_identical_frames_and_another_seed_does_not(tmp_path: Path) -> None:
    """Every phase, counted by examples instead of time (the stateful phase needs a server whose results
    do not vary: the tool server's random item ids would flow into later frames)."""
    logs = []
    for run_number, seed in enumerate(("5", "5", "6")):
        log = tmp_path / f"frames-{run_number}.log"
        result = run_cli(["run", "--seed", seed, "--budget", "60", "--timeout", "1", "--max-examples", "15",
                          "--corpus", str(tmp_path / f"c{run_number}"), "--log-frames", str(log), "--", *CLEAN],
                         timeout=120)
        assert result.returncode == 0, result.stdout + result.stderr
        logs.append(log.read_bytes())
    assert_same_lines(logs[0], logs[1], what="frames")
    assert logs[0] != logs[2]
    assert logs[0].count(b"\n") > 200


def test_sigkill_during_a_run_leaves_a_readable_corpus(tmp_path: Path) -> None:
    """Kill -9 mcpfuzz while it writes transcripts: every file left is whole, and replay reads them."""
    corpus = tmp_path / "corpus"
    for attempt in range(4):
        process = subprocess.Popen(
            [sys.executable, "-m", "mcpfuzz.cli", *PROTOCOL_RUN, "--corpus", str(corpus), "--", *BUGGY],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
        time.sleep(0.8 + 0.4 * attempt)
        os.kill(process.pid, signal.SIGKILL)
        process.wait(10)
        os.killpg(process.pid, signal.SIGKILL) if _group_alive(process.pid) else None
    run_cli([*PROTOCOL_RUN, "--corpus", str(corpus), "--", *BUGGY])
    good, broken = CorpusStore(corpus).load_all()
    assert good and not broken
    replayed = run_cli(["replay", str(corpus), "--timeout", "1", "--", *BUGGY])
    assert replayed.returncode == 1 and "ERROR" not in replayed.stdout


def _group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    return True


def test_a_finding_that_does_not_fail_again_is_saved_as_not_reproducible(tmp_path: Path) -> None:
    marker = tmp_path / "first-process-was-here"
    command = [sys.executable, str(SERVERS / "flaky_server.py"), str(marker)]
    finished = run_engine(command, corpus=tmp_path / "corpus", budget=40)
    wrong_code = [f for f in finished.findings if f.oracle == "method-not-found"]
    assert wrong_code and all(f.reproducible is False for f in wrong_code), finished.findings
    saved = json.loads(Path(finished.corpus_paths[wrong_code[0].fingerprint]).read_text())
    assert saved["reproducible"] is False
    assert "-32600" in " ".join(saved["received"])  # what was observed is kept


def test_kill_9_keeps_every_finding_already_made(tmp_path: Path) -> None:
    """Transcripts are written as findings are made: SIGKILL mid-run leaves them whole, and they replay."""

    server = private_copy(MCP_SERVER, tmp_path)
    corpus = tmp_path / "corpus"
    process = subprocess.Popen([*CLI, "run", "--budget", "300", "--timeout", "1", "--corpus", str(corpus), "--",
                                sys.executable, str(server), "--bug", "crash-batch"], cwd=tmp_path, env=cli_env(),
                               stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and not list(corpus.glob("*no-crash*.json")):
            time.sleep(0.2)
        process.send_signal(signal.SIGKILL)
        process.wait(timeout=30)
    finally:
        if process.poll() is None:
            process.kill()
        kill_leftovers(str(server))
    saved = list(corpus.glob("*no-crash*.json"))
    assert saved, "no transcript was written before the kill"
    assert all(json.loads(path.read_text())["seen"] == 1 for path in saved)
    assert not list(corpus.glob(".tmp-*"))
    replayed = run_cli(["replay", str(saved[0]), "--timeout", "1", "--", sys.executable, str(MCP_SERVER), "--bug",
                        "crash-batch"])
    assert replayed.returncode == 1 and "FAILED" in replayed.stdout, replayed.stdout + replayed.stderr
