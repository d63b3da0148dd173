"""Shared helpers for tests that run the real `mcpfuzz` command against real server processes."""

from __future__ import annotations

import contextlib
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path

import psutil
import pytest

from mcpfuzz.jsonrpc import issued_secrets
from mcpfuzz.jsonrpc.oracle_ids import OracleId
from tests.cli_fork import cold_cli_wanted, run_forked_cli, stop_fork_server

REPO_ROOT = Path(__file__).resolve().parent.parent
SERVERS_DIR = REPO_ROOT / "tests" / "servers"
MCP_SERVER = SERVERS_DIR / "mcp_server.py"
HOSTILE = SERVERS_DIR / "hostile.py"
CLI = [sys.executable, "-m", "mcpfuzz.cli"]
EXAMPLE_COMMAND = [sys.executable, "-m", "mcpfuzz.example"]

ORACLE_IDS = tuple(oracle_id.value for oracle_id in OracleId)
SEVERITIES = ("low", "medium", "high", "critical")
# Variables that would switch rich's colour or terminal detection on or off behind a test's back.
TERMINAL_VARIABLES = ("FORCE_COLOR", "NO_COLOR", "TTY_COMPATIBLE", "TTY_INTERACTIVE", "COLUMNS", "TERM")


# The suite's tiers: each test module says which one it is in with `pytestmark = pytest.mark.<tier>`.
TIERS = {
    "unit": "no process: milliseconds",
    "process": "real server processes: seconds",
    "slow": "minutes: real SDK servers, soaks, launchers, adversarial and long runs",
}


def tiers_of(item: pytest.Item) -> set[str]:
    """The tier markers a collected test carries (from its module, class or itself)."""
    return {mark.name for mark in item.iter_markers() if mark.name in TIERS}


@pytest.hookimpl(tryfirst=True)  # before -m deselects: every collected test is checked
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Every test is in exactly one tier; a module without one (or a test with two) fails the collection."""
    wrong = []
    for item in items:
        tiers = tiers_of(item)
        if len(tiers) != 1:
            said = ", ".join(sorted(tiers)) if tiers else "none"
            wrong.append(f"{item.nodeid}: tiers {said}")
    if wrong:
        shown = "\n  ".join(wrong[:20]) + (f"\n  ... and {len(wrong) - 20} more" if len(wrong) > 20 else "")
        raise pytest.UsageError(
            f"every test needs exactly one tier marker ({', '.join(TIERS)}): put `pytestmark = pytest.mark.<tier>` "
            f"at the top of its module\n  {shown}")
    items[:] = costliest_modules_first(items)


# The order modules are handed to workers in (`.ci/run` keeps it with --no-loadscope-reorder): the slow tier first,
# then the process tier, then unit tests, each by its number of tests. A long module handed out last would leave the
# other workers idle while it ends; short ones handed out last fill the gaps instead.
TIER_COST = {"slow": 0, "process": 1, "unit": 2}


def costliest_modules_first(items: list[pytest.Item]) -> list[pytest.Item]:
    """The items with whole modules reordered by their likely cost; a module's own tests keep their order."""
    modules: dict[str, list[pytest.Item]] = {}
    for item in items:
        modules.setdefault(item.nodeid.split("::")[0], []).append(item)

    def cost(module: list[pytest.Item]) -> tuple[int, int]:
        return min(TIER_COST[tier] for item in module for tier in tiers_of(item)), -len(module)

    return [item for module in sorted(modules.values(), key=cost) for item in module]


@pytest.fixture(autouse=True)
def _tokens_stay_with_their_test() -> Iterator[None]:
    """A token an in-process run obtained is hidden by every later redaction in the process: forgotten after its
    test, so what another test redacts does not depend on which tests ran before it on the same worker."""
    mark = issued_secrets.count()
    yield
    issued_secrets.forget_after(mark)


def pytest_sessionfinish(session: pytest.Session) -> None:
    """Stop the fork server of the tests' CLI runs (each xdist worker has its own)."""
    stop_fork_server()


# With $MCPFUZZ_TEST_TIMES set to a file, every test phase appends a line there as it ends (docs/testing.md).
TEST_TIMES = os.environ.get("MCPFUZZ_TEST_TIMES")


def _cpu_seconds() -> float:
    """CPU this process and its reaped children have used: a test's servers and CLI runs count once ended."""
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Iterator[pytest.TestReport]:
    """Give each phase's report the CPU seconds the phase used (read by the times log below)."""
    report = yield
    if TEST_TIMES:
        started = item.stash.get(_CPU_MARK, None)
        now = _cpu_seconds()
        report.user_properties.append(("cpu", round(now - started, 2) if started is not None else 0.0))
        item.stash[_CPU_MARK] = now
    return report


_CPU_MARK = pytest.StashKey[float]()


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    """Start the test's CPU count where its setup starts."""
    if TEST_TIMES:
        item.stash[_CPU_MARK] = _cpu_seconds()


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    """Append `seconds phase outcome nodeid cpu` for each test phase: a run stopped half way (or killed by a bound)
    still says what its tests cost, where --durations prints only at the very end."""
    if not TEST_TIMES or os.environ.get("PYTEST_XDIST_WORKER"):  # the controller writes every worker's reports
        return
    cpu = dict(report.user_properties).get("cpu", "")
    with open(TEST_TIMES, "a", encoding="utf-8") as log:
        log.write(f"{report.duration:.2f}\t{report.when}\t{report.outcome}\t{report.nodeid}\t{cpu}\n")


def cli_env(extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment of a CLI run: ours without colour or terminal overrides, plus `extra`."""
    env = {name: value for name, value in os.environ.items() if name not in TERMINAL_VARIABLES}
    env.update(extra or {})
    return env


def run_cli(args: Sequence[str], timeout: float = 60.0, env: Mapping[str, str] | None = None,
            cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    """Run `mcpfuzz ARGS...` as a subprocess and capture its output as text.

    By default in a fresh empty folder, removed afterwards: the default `./corpus` of one run must not be
    replayed by the next test's run.
    """
    if cwd is not None:
        return _run_cli_in(args, timeout, cli_env(env), cwd)
    with tempfile.TemporaryDirectory(prefix="mcpfuzz-cli-", ignore_cleanup_errors=True) as folder:
        return _run_cli_in(args, timeout, cli_env(env), Path(folder))


def _run_cli_in(args: Sequence[str], timeout: float, env: Mapping[str, str],
                cwd: Path) -> subprocess.CompletedProcess[str]:
    """One CLI process: forked from the worker's preloaded interpreter (tests/cli_fork.py), or a fresh one."""
    if cold_cli_wanted():
        return subprocess.run([*CLI, *args], capture_output=True, text=True, timeout=timeout, env=env, cwd=cwd,
                              stdin=subprocess.DEVNULL)
    return run_forked_cli(args, env, cwd, timeout)


def private_copy(fixture: Path, directory: Path, imports: tuple[str, ...] = ()) -> Path:
    """Copy a fixture server (and the sibling modules it `imports`) into `directory`, so its path marks
    only this test's processes.

    Other tests (and other sessions) may run the shared fixture at the same time; a leftover check on
    the shared path would see their servers too.
    """
    target = directory / f"srv_{os.getpid()}_{time.monotonic_ns()}" / fixture.name
    target.parent.mkdir(parents=True)
    for path in (fixture, *(fixture.parent / name for name in imports)):
        shutil.copy2(path, target.parent / path.name)
    return target


def processes_matching(marker: str) -> list[psutil.Process]:
    """Live (non-zombie) processes other than this one whose command line contains `marker`."""
    found = []
    for process in psutil.process_iter(["pid", "cmdline", "status"]):
        info = process.info
        if info["pid"] == os.getpid() or info["status"] == psutil.STATUS_ZOMBIE:
            continue
        if any(marker in part for part in info["cmdline"] or ()):
            found.append(process)
    return found


def leftover_processes(marker: str, grace: float = 1.0) -> list[str]:
    """Processes still running `grace` seconds after a run whose command line contains `marker`."""
    deadline = time.monotonic() + grace
    while True:
        survivors = []
        for process in processes_matching(marker):
            try:
                survivors.append(f"pid {process.pid}: {' '.join(process.cmdline())}")
            except psutil.Error:
                continue  # ended while we looked
        if not survivors or time.monotonic() >= deadline:
            return survivors
        time.sleep(0.05)


def kill_leftovers(marker: str) -> None:
    """SIGKILL whatever a failed test left behind, so that one failure does not leak into others."""
    for process in processes_matching(marker):
        with contextlib.suppress(psutil.Error):
            process.kill()


def output_lines(result: subprocess.CompletedProcess[str]) -> list[str]:
    """Every line the command wrote, stdout first, then stderr."""
    return (result.stdout + "\n" + result.stderr).splitlines()
