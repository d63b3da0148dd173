"""`mcpfuzz ARGS...` in a process forked from an interpreter that imported mcpfuzz once per test worker.

A fresh `python -m mcpfuzz.cli` spends about 0.7 s of CPU importing mcpfuzz, Hypothesis, jsonschema and httpx
before it does anything; the suite starts several hundred of them. Here each run is still a process of its own
(its own pid, environment, folder, standard streams, exit code and atexit kills, signals as a fresh one), forked
by multiprocessing's fork server, which imported those modules when it started. `MCPFUZZ_TEST_COLD_CLI=1` runs
every command as a fresh interpreter instead.
"""

from __future__ import annotations

import atexit
import multiprocessing
import os
import runpy
import subprocess
import sys
import tempfile
import threading
from collections.abc import Mapping, Sequence
from contextlib import chdir
from multiprocessing import forkserver
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent

# What a run imports, lazily or not: the fork server imports them once, so a forked run finds them loaded.
PRELOAD = (
    "mcpfuzz.cli.main", "mcpfuzz.cli.servers_file", "mcpfuzz.transport.http_target", "mcpfuzz.engine.config",
    "mcpfuzz.engine.security.placeholder", "mcpfuzz.corpus.store", "mcpfuzz.report.banner", "mcpfuzz.report.console",
    "mcpfuzz.report.event_log", "mcpfuzz.report.files", "mcpfuzz.report.handlers", "mcpfuzz.engine.runner",
    "mcpfuzz.engine.attribution.reach", "mcpfuzz.engine.compare_calls", "mcpfuzz.engine.workers",
    "mcpfuzz.engine.soak.scheduler", "mcpfuzz.engine.snapshot.surface", "mcpfuzz.oracles.canaries",
    "mcpfuzz.oracles.client", "mcpfuzz.oracles.concurrency", "mcpfuzz.oracles.error_codes", "mcpfuzz.oracles.ids",
    "mcpfuzz.oracles.leaks", "mcpfuzz.oracles.lint", "mcpfuzz.oracles.list_identity",
    "mcpfuzz.oracles.notifications", "mcpfuzz.oracles.semantic", "mcpfuzz.oracles.slow_input",
    "mcpfuzz.oracles.surfaces", "mcpfuzz.oracles.tasks", "mcpfuzz.oracles.versions", "httpx", "tomllib",
    "rich.rule", "tests.cli_fork",
)

_CONTEXT = multiprocessing.get_context("forkserver")
_CONTEXT.set_forkserver_preload(list(PRELOAD))
_STARTING = threading.Lock()
_started = False


def cold_cli_wanted() -> bool:
    """Whether this worker runs each command as a fresh interpreter ($MCPFUZZ_TEST_COLD_CLI=1)."""
    return os.environ.get("MCPFUZZ_TEST_COLD_CLI", "") not in ("", "0")


def _exit_code(stop: SystemExit) -> int:
    """The status a fresh interpreter ends with for `stop`: None is 0, an int itself, anything else printed and 1."""
    if stop.code is None:
        return 0
    if isinstance(stop.code, int):
        return stop.code
    print(stop.code, file=sys.stderr)
    return 1


def _open_standard_streams(out_path: str, err_path: str) -> None:
    """Point fds 0-2 and sys's streams at /dev/null and the two capture files, as `subprocess.run` would."""
    for fd, path, flags in ((0, os.devnull, os.O_RDONLY), (1, out_path, os.O_WRONLY), (2, err_path, os.O_WRONLY)):
        opened = os.open(path, flags)
        os.dup2(opened, fd)
        os.close(opened)
    # The encodings a fresh interpreter would pick: the fork server's own streams were opened by the same rules.
    out_encoding, out_errors = sys.__stdout__.encoding, sys.__stdout__.errors
    err_encoding, err_errors = sys.__stderr__.encoding, sys.__stderr__.errors
    sys.stdin = sys.__stdin__ = open(0, closefd=False)  # noqa: SIM115
    sys.stdout = sys.__stdout__ = open(1, "w", encoding=out_encoding, errors=out_errors, closefd=False)  # noqa: SIM115
    sys.stderr = sys.__stderr__ = open(2, "w", encoding=err_encoding, errors=err_errors,  # noqa: SIM115
                                       closefd=False)


def _run_forked(args: list[str], env: dict[str, str], cwd: str, out_path: str, err_path: str) -> None:
    """The forked process: become `python -m mcpfuzz.cli ARGS` in `cwd` with `env`, then exit as it would."""
    _open_standard_streams(out_path, err_path)
    os.chdir(cwd)
    os.environ.clear()
    os.environ.update(env)
    sys.argv = [str(REPO_ROOT / "mcpfuzz" / "cli" / "__main__.py"), *args]
    code = 0
    try:
        runpy.run_module("mcpfuzz.cli", run_name="__main__", alter_sys=True)
    except SystemExit as stop:
        code = _exit_code(stop)
    except BaseException:  # an uncaught error ends a fresh interpreter with its traceback and status 1
        sys.excepthook(*sys.exc_info())
        code = 1
    threading._shutdown()  # type: ignore[attr-defined]  # a fresh interpreter joins its threads before atexit
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        stream.flush()
    os._exit(code & 0xFF)


def _ensure_server() -> None:
    """Start this worker's fork server from the repository root, where `tests.cli_fork` is importable."""
    global _started
    with _STARTING:
        if not _started:
            with chdir(REPO_ROOT):
                forkserver.ensure_running()
            _started = True


def run_forked_cli(args: Sequence[str], env: Mapping[str, str], cwd: Path,
                   timeout: float) -> subprocess.CompletedProcess[str]:
    """Run `mcpfuzz ARGS...` forked from the preloaded server, as `subprocess.run(..., capture_output=True)`."""
    _ensure_server()
    command = [sys.executable, "-m", "mcpfuzz.cli", *args]
    with tempfile.TemporaryDirectory(prefix="mcpfuzz-fork-") as streams:
        out_path, err_path = os.path.join(streams, "out"), os.path.join(streams, "err")
        Path(out_path).touch()
        Path(err_path).touch()
        process = _CONTEXT.Process(target=_run_forked, args=(list(args), dict(env), str(cwd), out_path, err_path))
        process.start()
        process.join(timeout)
        timed_out = process.exitcode is None
        if timed_out:
            process.kill()
            process.join()
        stdout = Path(out_path).read_text(encoding="utf-8", errors="replace")
        stderr = Path(err_path).read_text(encoding="utf-8", errors="replace")
        exit_code = process.exitcode
        process.close()
    if timed_out or exit_code is None:
        raise subprocess.TimeoutExpired(command, timeout, output=stdout, stderr=stderr)
    return subprocess.CompletedProcess(command, exit_code, stdout, stderr)


def stop_fork_server() -> None:
    """End this worker's fork server and wait for it, so no process of ours outlives the session and the CPU its
    runs used counts as this process's children's."""
    if _started:
        forkserver._forkserver._stop()  # type: ignore[attr-defined]  # the only way to wait for it
