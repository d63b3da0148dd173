"""mcpfuzz as a user runs it: `mcpfuzz --help` start-up, and a whole `mcpfuzz run` seen from outside."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

from tool_runs import ToolRun, run_tool, served

STOP_MARGIN = 15.0  # mcpfuzz stops itself at --budget; the cap is only a safety net


def mcpfuzz_command() -> list[str]:
    """The installed `mcpfuzz` script next to this Python, else the module."""
    script = Path(sys.executable).parent / "mcpfuzz"
    return [str(script)] if script.exists() else [sys.executable, "-m", "mcpfuzz.cli"]


def startup_seconds(argv: list[str]) -> float:
    """Wall time of one short command, start to exit."""
    started = time.perf_counter()
    subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True, timeout=60)
    return time.perf_counter() - started


def help_seconds() -> float:
    """`mcpfuzz --help`, start to exit."""
    return startup_seconds([*mcpfuzz_command(), "--help"])


def python_seconds() -> float:
    """The floor under any Python command line: this interpreter starting and doing nothing."""
    return startup_seconds([sys.executable, "-c", "pass"])


def mcpfuzz_run(server: list[str], seconds: float, workdir: Path, home: Path,
                cache: Path | None = None) -> tuple[ToolRun, int | None, str]:
    """`mcpfuzz run --budget seconds` (every phase) on `server`, started in `home`; run, findings count, oracles.

    `cache` (as XDG_CACHE_HOME) is where mcpfuzz keeps Hypothesis' caches (its Unicode tables among
    them): the first run with an empty one builds them, later runs load them.
    """
    counts = workdir / "counts"
    report = workdir / "report.json"
    argv = [*mcpfuzz_command(), "run", "--budget", f"{seconds:g}", "--seed", "1", "--corpus",
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
