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


def mcpfuzz_run(server: list[str], seconds: float, workdir: Path, home: Path) -> tuple[ToolRun, int | None, str]:
    """`mcpfuzz run --budget seconds` (every phase) on `server`, started in `home`; run, findings count, oracles.

    `home` matters: Hypothesis keeps caches in ./.hypothesis (its unicode charmap among them), so the
    first run in a folder builds them and later runs there load them.
    """
    counts = workdir / "counts"
    report = workdir / "report.json"
    argv = [*mcpfuzz_command(), "run", "--budget", f"{seconds:g}", "--seed", "1", "--corpus",
            str(workdir / "corpus"), "--json", str(report), "--", *served(counts, server)]
    result = run_tool(argv, counts, seconds + STOP_MARGIN, workdir, cwd=home)
    try:
        findings = json.loads(report.read_text())["findings"]
    except (OSError, ValueError, KeyError):
        return result, None, f"no JSON report (exit {result.exit_code}); see {result.log}"
    oracles = sorted({finding["oracle"] for finding in findings})
    return result, len(findings), ", ".join(oracles)
