"""One fuzzer run as a black box: its server behind the counting wrapper, a wall-clock cap, its peak memory.

Every tool (mcpfuzz and the peers) is measured the same way: it starts `served(...)` as its server
command, so the frames that reach the server are counted by `tee_server.py` whatever the tool
thinks it sent. The tool runs in its own process group; at the cap it gets SIGINT, then SIGKILL.
Peak memory is the kernel's high-water mark (VmHWM) of the tool's process, read until it exits.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import psutil
from tee_server import read_counts

TEE = Path(__file__).resolve().parent / "tee_server.py"
SAMPLE_EVERY = 0.2  # seconds between reads of the peak (VmHWM is kept by the kernel: nothing is missed)
OWN_CMDLINE = Path("/proc/self/cmdline").read_bytes() if Path("/proc/self/cmdline").exists() else b""
STOP_GRACE = 5.0  # after SIGINT, how long a tool may take to exit before SIGKILL


@dataclass
class ToolRun:
    """What one run did, seen from outside."""

    frames: int
    bytes: int
    servers: int  # server processes started (each through the wrapper)
    elapsed: float  # from start until it exited or was told to stop
    exit_code: int | None
    stopped: bool  # reached the cap and was stopped by us
    peak_rss: int  # bytes: the tool's main process at its peak (the kernel's high-water mark); servers excluded
    log: Path  # its stdout and stderr
    # bytes: the most the tool's processes held at once (its workers, and a short-lived helper such as the child
    # that builds Hypothesis' Unicode tables on a first run), sampled every SAMPLE_EVERY s; servers excluded
    tree_rss: int = 0

    @property
    def frames_per_second(self) -> float:
        """Frames that reached the server per second of the run."""
        return self.frames / self.elapsed if self.elapsed > 0 else 0.0


def served(counts: Path, server: list[str]) -> list[str]:
    """The server command behind the counting wrapper (`-S`: the wrapper needs only the standard library)."""
    return [sys.executable, "-S", str(TEE), str(counts), "--", *server]


def _hwm(pid: int) -> int:
    """The kernel's peak resident set of one process (VmHWM) once it runs its own program, else 0."""
    try:
        # Until exec, the child is a copy of this script (or shares its memory): its peak would be ours.
        if Path(f"/proc/{pid}/cmdline").read_bytes() == OWN_CMDLINE:
            return 0
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    except (OSError, ValueError):
        pass
    return 0


def _tool_rss(pid: int, marker: str) -> int:
    """What the tool's processes hold now: the main one and every descendant but the servers (behind the
    counting wrapper, whose command line names `marker`) and what those start."""
    total = 0
    with contextlib.suppress(psutil.Error):
        main = psutil.Process(pid)
        total = main.memory_info().rss
        pending = main.children()
        while pending:
            child = pending.pop()
            with contextlib.suppress(psutil.Error):
                if marker in " ".join(child.cmdline()):
                    continue
                total += child.memory_info().rss
                pending.extend(child.children())
    return total


def _stop(process: subprocess.Popen[bytes]) -> None:
    """SIGINT to the tool's group (what Ctrl-C does), SIGKILL if it does not go."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGINT)
    try:
        process.wait(STOP_GRACE)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
        process.wait()


def _reap(marker: str) -> None:
    """Kill what is left of this run: wrappers whose command line names its own counts folder, and their servers."""
    for process in psutil.process_iter(["cmdline"]):
        with contextlib.suppress(psutil.Error):
            if marker in " ".join(process.info["cmdline"] or ()):
                for child in process.children(recursive=True):
                    with contextlib.suppress(psutil.Error):
                        child.kill()
                process.kill()


def _environment(changes: dict[str, str | None] | None) -> dict[str, str] | None:
    if not changes:
        return None
    merged = {**os.environ, **changes}
    return {name: value for name, value in merged.items() if value is not None}


def run_tool(argv: list[str], counts: Path, cap: float, workdir: Path, cwd: Path | None = None,
             env: dict[str, str | None] | None = None) -> ToolRun:
    """Run `argv` (whose server command is `served(counts, ...)`) in `cwd` (default `workdir`) for at most `cap` s.

    `env` changes this process' environment for the tool (None removes a variable).
    """
    counts.mkdir(parents=True, exist_ok=True)
    log = workdir / "output.log"
    with open(log, "wb") as out:
        started = time.perf_counter()
        process = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT,
                                   cwd=cwd or workdir, start_new_session=True,
                                   env=_environment(env))
        peak, tree, stopped = 0, 0, False
        while process.poll() is None:
            peak = max(peak, _hwm(process.pid))
            if peak:  # once it runs its own program (before exec the child is a copy of this script)
                tree = max(tree, _tool_rss(process.pid, str(counts)))
            if time.perf_counter() - started >= cap:
                stopped = True
                break
            with contextlib.suppress(subprocess.TimeoutExpired):
                process.wait(SAMPLE_EVERY)
        elapsed = time.perf_counter() - started
        if stopped:
            _stop(process)
    _reap(str(counts))
    frames, size, servers = read_counts(counts)
    return ToolRun(frames, size, servers, elapsed, process.returncode, stopped, peak, log, max(tree, peak))
