"""mcpfuzz as a user runs it: `mcpfuzz --help` start-up, and a whole `mcpfuzz run` seen from outside."""

from __future__ import annotations

import atexit
import functools
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from tool_runs import ToolRun, run_tool, served

STOP_MARGIN = 15.0  # mcpfuzz stops itself at --budget; the cap is only a safety net
# A repeatability run ends when its searches reach --max-examples; the budget only bounds a stuck one (a
# run cut by its budget would differ from the other by where the clock stopped it).
REPEAT_BUDGET = 300


def mcpfuzz_command() -> list[str]:
    """The installed `mcpfuzz` script next to this Python, else the module."""
    script = Path(sys.executable).parent / "mcpfuzz"
    return [str(script)] if script.exists() else [sys.executable, "-m", "mcpfuzz.cli"]


@functools.cache
def byte_code_folder() -> str:
    """Where timed start-ups keep mcpfuzz's byte code: made once per benchmark, removed at its exit."""
    folder = tempfile.mkdtemp(prefix="mcpfuzz-bench-pyc-")
    atexit.register(shutil.rmtree, folder, True)
    return folder


def startup_env() -> dict[str, str]:
    """The environment of a timed start-up: byte code written and read, in a folder of the benchmark's own.

    An installed wheel has its modules' byte code; a checkout run with PYTHONDONTWRITEBYTECODE (CI, some shells)
    compiles every module of mcpfuzz again at each start, a third of `--help`'s time, which no user pays twice.
    """
    env = {name: value for name, value in os.environ.items() if name != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPYCACHEPREFIX"] = byte_code_folder()
    return env


def startup_seconds(argv: list[str]) -> float:
    """Wall time of one short command, start to exit.

    The wait has no timeout: `Popen.wait(timeout)` polls with sleeps growing to 50 ms, which added up to 40 ms
    to a 70 ms start; a timer kills a command stuck past a minute instead.
    """
    started = time.perf_counter()
    process = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=startup_env())
    stuck = threading.Timer(60, process.kill)
    stuck.start()
    try:
        status = process.wait()
    finally:
        stuck.cancel()
    elapsed = time.perf_counter() - started
    if status != 0:
        raise subprocess.CalledProcessError(status, argv)
    return elapsed


def help_seconds() -> float:
    """`mcpfuzz --help`, start to exit."""
    return startup_seconds([*mcpfuzz_command(), "--help"])


def first_line_seconds(server: list[str]) -> float:
    """`mcpfuzz run` on `server`, from its start to the first line it prints (then stopped)."""
    with tempfile.TemporaryDirectory(prefix="mcpfuzz-first-line-") as folder:
        started = time.perf_counter()
        process = subprocess.Popen([*mcpfuzz_command(), "run", "--budget", "30", "--corpus", str(Path(folder) / "c"),
                                    "--", *server], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                   stdin=subprocess.DEVNULL, cwd=folder, env={**startup_env(), "PYTHONUNBUFFERED": "1"})
        try:
            assert process.stdout is not None
            process.stdout.readline()
            return time.perf_counter() - started
        finally:
            process.terminate()
            try:
                process.wait(10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


def python_seconds() -> float:
    """The floor under any Python command line: this interpreter starting and doing nothing."""
    return startup_seconds([sys.executable, "-c", "pass"])


def mcpfuzz_run(server: list[str], seconds: float, workdir: Path, home: Path,
                cache: Path | None = None, extra: tuple[str, ...] = ()) -> tuple[ToolRun, int | None, str]:
    """`mcpfuzz run --budget seconds` (every phase, `extra` options) on `server`, started in `home`; run, findings
    count, oracles.

    `cache` (as XDG_CACHE_HOME) is where mcpfuzz keeps Hypothesis' caches (its Unicode tables among
    them): the first run with an empty one builds them, later runs load them.
    """
    counts = workdir / "counts"
    report = workdir / "report.json"
    argv = [*mcpfuzz_command(), "run", *extra, "--budget", f"{seconds:g}", "--seed", "1", "--corpus",
            str(workdir / "corpus"), "--json", str(report), "--", *served(counts, server)]
    # HYPOTHESIS_STORAGE_DIRECTORY would take precedence over the cache folder.
    env = {"XDG_CACHE_HOME": str(cache), "HYPOTHESIS_STORAGE_DIRECTORY": None} if cache is not None else None
    result = run_tool(argv, counts, seconds + STOP_MARGIN, workdir, cwd=home, env=env)
    try:
        findings = json.loads(report.read_text())["findings"]
    except (OSError, ValueError, KeyError):
        return result, None, f"no JSON report (exit {result.exit_code}); see {result.log}"
    oracles = sorted({finding["oracle"] for finding in findings})
    return result, len(findings), ", ".join(oracles)


@dataclass(frozen=True)
class Repeatability:
    """Two `mcpfuzz run`s with the same seed and options (`--max-examples`): did the same frames go out?"""

    same: bool
    frames: tuple[int, int]  # frames each run logged
    first_difference: int | None  # the 1-based line where the logs part, if they do
    error: str = ""


def repeatability(server: list[str], workdir: Path, max_examples: int, home: Path,
                  cache: Path | None = None) -> Repeatability:
    """Run mcpfuzz twice (every phase, `--seed 1 --max-examples N`, each with a fresh corpus) and compare the
    frames it logged (`--log-frames`: every frame sent, one per line)."""
    logs: list[list[bytes]] = []
    env = {**os.environ, "XDG_CACHE_HOME": str(cache)} if cache is not None else None
    if env is not None:
        env.pop("HYPOTHESIS_STORAGE_DIRECTORY", None)
    for attempt in ("a", "b"):
        log = workdir / f"frames-{attempt}.log"
        argv = [*mcpfuzz_command(), "run", "--seed", "1", "--max-examples", str(max_examples), "--budget",
                str(REPEAT_BUDGET), "--log-frames", str(log), "--corpus", str(workdir / f"corpus-{attempt}"), "--",
                *server]
        done = subprocess.run(argv, cwd=home, env=env, stdin=subprocess.DEVNULL, capture_output=True,
                              timeout=REPEAT_BUDGET + STOP_MARGIN)
        if not log.exists():
            return Repeatability(False, (0, 0), None, f"no frame log (exit {done.returncode}): "
                                 f"{done.stderr.decode(errors='replace')[-300:]}")
        logs.append(log.read_bytes().splitlines())
    first, second = logs
    differs = next((i + 1 for i, (a, b) in enumerate(zip(first, second, strict=False)) if a != b),
                   None if len(first) == len(second) else min(len(first), len(second)) + 1)
    return Repeatability(differs is None, (len(first), len(second)), differs)
