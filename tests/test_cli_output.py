"""What a person sees from the command line: errors on stderr, counted words, exit statuses, a closed pipe."""

from __future__ import annotations

import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from tests.conftest import CLI, MCP_SERVER, cli_env, run_cli

pytestmark = pytest.mark.slow

CLEAN_COMMAND = [sys.executable, str(MCP_SERVER)]
ONE_BUG_COMMAND = [sys.executable, str(MCP_SERVER), "--bug", "id-coerce"]
PROTOCOL_ONLY = ["run", "--timeout", "1", "--budget", "30", "--phases", "catalogue,lifecycle"]
# The catalogue alone: a run with findings (or none), a summary and reports, without the lifecycle's fresh processes.
CATALOGUE_ONLY = ["run", "--timeout", "1", "--budget", "30", "--phases", "catalogue"]


def describe(result: subprocess.CompletedProcess[str]) -> str:
    return f"exit {result.returncode}\n--- stdout\n{result.stdout}\n--- stderr\n{result.stderr}"


def test_a_server_that_cannot_start_is_an_error_on_stderr_without_a_summary(tmp_path: Path) -> None:
    """No summary of zeros after a start error: the error and the verdict are on stderr, exit 2."""
    missing = tmp_path / "no_such_server.py"
    result = run_cli(["run", "--budget", "10", "--", sys.executable, str(missing)])
    assert result.returncode == 2, describe(result)
    assert "error: the server exited" in result.stderr, describe(result)
    assert "no_such_server.py" in result.stderr  # the server's own stderr tail, which says why
    assert "ERROR: the server could not be tested" in result.stderr
    assert "error" not in result.stdout.lower(), describe(result)
    assert "findings" not in result.stdout and "summary" not in result.stdout, describe(result)
    assert "Traceback" not in result.stdout + result.stderr


def test_a_missing_command_is_an_error_on_stderr(tmp_path: Path) -> None:
    result = run_cli(["run", "--budget", "10", "--", str(tmp_path / "no-such-command")])
    assert result.returncode == 2, describe(result)
    assert "error: command not found" in result.stderr, describe(result)
    assert "0 findings" not in result.stdout + result.stderr


def test_one_finding_is_counted_in_the_singular(tmp_path: Path) -> None:
    """A run with exactly one finding says "1 finding", "1 transcript" and "FAILED: 1 finding"."""
    result = run_cli([*CATALOGUE_ONLY, "--seed", "3", "--oracles", "id-preserved", "--no-replay",
                      "--corpus", str(tmp_path / "corpus"), "--", *ONE_BUG_COMMAND])
    assert result.returncode == 1, describe(result)
    summary = [line for line in result.stdout.splitlines() if line.startswith("1 finding ")]
    assert summary, describe(result)
    assert "1 findings" not in result.stdout
    assert "corpus: 1 transcript in" in result.stdout, describe(result)
    assert "FAILED: 1 finding at or above medium" in result.stdout


def test_no_word_is_counted_in_the_plural_after_one(tmp_path: Path) -> None:
    """Whatever the run counted once (a restart, a case, a finding) is written in the singular."""
    result = run_cli([*PROTOCOL_ONLY, "--seed", "3", "-v", "--", *ONE_BUG_COMMAND], cwd=tmp_path)
    for word in ("findings", "cases", "restarts", "frames", "transcripts", "tools", "calls", "tool calls"):
        assert f" 1 {word}" not in result.stdout and not result.stdout.startswith(f"1 {word}"), \
            f"'1 {word}' in:\n{result.stdout}"


def test_the_first_run_replays_no_regression(tmp_path: Path) -> None:
    """A first run into an empty corpus has nothing to replay: no regression phase, even once it saved a finding."""
    result = run_cli(["run", "--timeout", "1", "--budget", "20", "--seed", "5", "--phases", "catalogue",
                      "--", sys.executable, str(MCP_SERVER), "--bug", "stdout-noise"], cwd=tmp_path)
    assert result.returncode == 1, describe(result)
    assert "regression" not in result.stdout, describe(result)


def test_replay_of_an_empty_folder_is_an_error(tmp_path: Path) -> None:
    """Nothing replayed is not a pass: exit 2, with what a transcript is, on stderr."""
    empty = tmp_path / "empty"
    empty.mkdir()
    result = run_cli(["replay", str(empty)])
    assert result.returncode == 2, describe(result)
    assert "no transcript to replay in" in result.stderr and str(empty) in result.stderr
    assert result.stdout == ""


def test_replay_without_a_corpus_folder_is_a_usage_error(tmp_path: Path) -> None:
    result = run_cli(["replay"], cwd=tmp_path)
    assert result.returncode == 2, describe(result)
    assert "no ./corpus folder here" in result.stderr


def read_first_line_then_close(args: list[str], cwd: Path) -> tuple[str, int, str]:
    """Run mcpfuzz with stdout into a pipe whose reader takes one line and goes (`| head -1`)."""
    with tempfile.TemporaryFile(mode="w+") as errors:
        process = subprocess.Popen([*CLI, *args], stdout=subprocess.PIPE, stderr=errors, stdin=subprocess.DEVNULL,
                                   text=True, env=cli_env(), cwd=cwd)
        assert process.stdout is not None
        first = process.stdout.readline()
        process.stdout.close()
        status = process.wait(timeout=120)
        errors.seek(0)
        return first, status, errors.read()


def test_a_closed_pipe_keeps_the_exit_status_of_a_clean_run(tmp_path: Path) -> None:
    """`mcpfuzz run ... | head -1` of a clean server: exit 0, no traceback, the reports still written."""
    report = tmp_path / "report.json"
    first, status, errors = read_first_line_then_close(
        [*CATALOGUE_ONLY, "--seed", "1", "--json", str(report), "--", *CLEAN_COMMAND], tmp_path)
    assert first.startswith("mcpfuzz "), first
    assert status == 0, errors
    assert "Traceback" not in errors and "BrokenPipe" not in errors, errors
    assert report.is_file()


def test_a_closed_pipe_keeps_the_exit_status_of_findings(tmp_path: Path) -> None:
    first, status, errors = read_first_line_then_close(
        [*CATALOGUE_ONLY, "--seed", "1", "--", *ONE_BUG_COMMAND], tmp_path)
    assert first.startswith("mcpfuzz ")
    assert status == 1, errors
    assert "Traceback" not in errors, errors


def test_a_closed_pipe_after_a_listing_exits_0(tmp_path: Path) -> None:
    first, status, errors = read_first_line_then_close(["oracles"], tmp_path)
    assert first.split()[0] == "parse-error"
    assert status == 0, errors
    assert errors == ""


def test_python_dash_m_mcpfuzz_runs_the_command() -> None:
    """`python -m mcpfuzz` is the `mcpfuzz` command (for a venv whose scripts are not on PATH)."""
    result = subprocess.run([sys.executable, "-m", "mcpfuzz", "--version"], capture_output=True, text=True,
                            env=cli_env(), timeout=60, check=False)
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("mcpfuzz, version ")
    listing = subprocess.run([sys.executable, "-m", "mcpfuzz", "oracles"], capture_output=True, text=True,
                             env=cli_env(), timeout=60, check=False)
    assert listing.returncode == 0 and "no-crash" in listing.stdout


def test_lint_of_a_server_that_cannot_start_is_an_error_on_stderr(tmp_path: Path) -> None:
    result = run_cli(["lint", "--", sys.executable, str(tmp_path / "no_such_server.py")])
    assert result.returncode == 2, describe(result)
    assert "error: the server could not be linted" in result.stderr and result.stdout == "", describe(result)


def test_lint_of_a_clean_server_counts_in_words(tmp_path: Path) -> None:
    result = run_cli(["lint", "--", *CLEAN_COMMAND])
    assert result.returncode == 0, describe(result)
    assert "0 errors, 0 warnings" in result.stdout, describe(result)


def test_control_bytes_a_server_writes_are_shown_escaped_never_sent_to_the_terminal(tmp_path: Path) -> None:
    """A server whose name, stdout noise and stderr hold NUL, BEL, ESC sequences (clear screen, a window title),
    a C1 control and a right-to-left override: the console shows each as an escape, in the probe line, the
    `got:` lines and the stderr tail, and writes none of them raw."""
    server = [sys.executable, str(MCP_SERVER.parent / "control_bytes_server.py")]
    result = run_cli(["run", "--timeout", "1", "--budget", "30", "--phases", "catalogue", "--seed", "3", "-v",
                      "--no-replay", "--corpus", str(tmp_path / "corpus"), "--", *server], cwd=tmp_path)
    assert result.returncode == 1, describe(result)
    output = result.stdout + result.stderr
    raw = sorted({f"U+{ord(ch):04X}" for ch in output if ord(ch) < 0x20 and ch not in "\n\t"
                  or 0x7F <= ord(ch) <= 0x9F or ch in "\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"})
    assert raw == [], raw
    lines = result.stdout.splitlines()
    assert any(line.strip().startswith("got:") and "INFO\\x00\\x07\\x1b[2J\\x1b[31m\\x9b\\u202e listing" in line
               for line in lines), result.stdout
    assert any("fatal\\x00\\x07\\x1b[2J" in line for line in lines), result.stdout  # the stderr tail
    assert "server bytes\\x1b]0;pwned\\x07" in result.stdout
