"""The tests' forked CLI runs (tests/cli_fork.py) behave as fresh `python -m mcpfuzz.cli` processes: the same
output, exit status and findings, no process left, and a timeout that ends the run."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.cli_fork import PRELOAD, run_forked_cli
from tests.conftest import CLI, MCP_SERVER, SERVERS_DIR, cli_env, kill_leftovers, leftover_processes, private_copy

pytestmark = pytest.mark.process


def cold(args: list[str], cwd: Path, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    """`mcpfuzz ARGS` as a fresh interpreter."""
    return subprocess.run([*CLI, *args], capture_output=True, text=True, timeout=timeout, env=cli_env(), cwd=cwd,
                          stdin=subprocess.DEVNULL)


def forked(args: list[str], cwd: Path, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    """`mcpfuzz ARGS` forked from the preloaded server."""
    return run_forked_cli(args, cli_env(), cwd, timeout)


def test_every_preloaded_module_exists() -> None:
    """The fork server skips a module it cannot import without a word: a renamed module must fail here."""
    for name in PRELOAD:
        __import__(name)


@pytest.mark.parametrize("args", [["run", "--no-such-option"], ["run", "--phases", "nonsense", "--", "x"],
                                  ["--help"]], ids=["unknown-option", "bad-phase", "help"])
def test_a_forked_command_prints_and_exits_as_a_fresh_one(args: list[str], tmp_path: Path) -> None:
    """Usage errors and help: the same stdout, stderr and exit status, byte for byte."""
    fresh, fork = cold(args, tmp_path), forked(args, tmp_path)
    assert (fork.returncode, fork.stdout, fork.stderr) == (fresh.returncode, fresh.stdout, fresh.stderr)


def test_a_forked_run_finds_what_a_fresh_one_finds_and_leaves_nothing(tmp_path: Path) -> None:
    """A run with two planted protocol bugs, catalogue only (no drawn values): the same causes, status and report
    file in its own folder, and none of its servers left running."""
    server = private_copy(MCP_SERVER, tmp_path)
    runs = {}
    try:
        for name, runner in (("fresh", cold), ("fork", forked)):
            folder = tmp_path / name
            folder.mkdir()
            args = ["run", "--phases", "catalogue", "--seed", "3", "--json", "report.json", "--",
                    sys.executable, str(server), "--bug", "parse-code", "--bug", "method-not-found-code"]
            result = runner(args, folder)
            report = json.loads((folder / "report.json").read_text(encoding="utf-8"))
            runs[name] = (result.returncode, sorted({(f["oracle"], f["severity"]) for f in report["findings"]}))
        assert leftover_processes(str(server)) == []
    finally:
        kill_leftovers(str(server))
    assert runs["fork"] == runs["fresh"]
    assert runs["fork"][0] == 1 and {"parse-error", "method-not-found"} <= {oracle for oracle, _ in runs["fork"][1]}


def test_a_forked_run_past_its_timeout_is_ended(tmp_path: Path) -> None:
    """`timeout` raises as `subprocess.run` does (after ending the run), naming the command."""
    server = private_copy(SERVERS_DIR / "slow_async_server.py", tmp_path, imports=("mcp_server.py",))
    try:
        with pytest.raises(subprocess.TimeoutExpired) as expired:
            forked(["run", "--budget", "120", "--", sys.executable, str(server)], tmp_path, timeout=3)
        assert expired.value.timeout == 3 and expired.value.cmd[-1] == str(server)
    finally:
        kill_leftovers(str(server))
