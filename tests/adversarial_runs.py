"""Runs of `mcpfuzz run` (the real CLI, in a process of its own) on the adversarial test server, and what a run
that ended as mcpfuzz promises looks like (tests/test_adversarial.py draws the plans)."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from hypothesis import strategies as st

import mcpfuzz
from tests.servers.adversarial import HANDSHAKES, MISBEHAVIOURS

PACKAGE = str(Path(mcpfuzz.__file__).resolve().parent) + os.sep

SERVERS = Path(__file__).parent / "servers"
ADVERSARY = SERVERS / "adversarial.py"
OPENRPC = SERVERS / "adversarial.openrpc.json"
BUDGET = 7.0
OVERRUN = 10.0  # a product promise: mcpfuzz never runs past its budget by more than this (by its own clock)
# What a loaded machine may add around the run on the wall clock (starting Python, stopping the server): only a
# run that goes on regardless of its budget gets past it.
SLACK = 60.0
SEED = 20261207  # mcpfuzz's own seed in every run, so a failing plan replays the same way
EXAMPLES = 12
VERSIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")

plans = st.fixed_dictionaries(
    {
        "seed": st.integers(0, 2**16),
        # Mostly a handshake that works, so the phases after it meet the misbehaviours.
        "handshake": st.one_of(st.just("ok"), st.just("ok"), st.sampled_from(HANDSHAKES)),
        "tools": st.booleans(),
        "grace": st.integers(0, 12),
        "misbehaviours": st.dictionaries(st.sampled_from(sorted(MISBEHAVIOURS)),
                                         st.sampled_from((0.02, 0.1, 0.3, 1.0)), max_size=4),
    },
    optional={
        "version": st.sampled_from(VERSIONS),
        "exit_after": st.integers(2, 400),
        "close_stdout_after": st.integers(2, 400),
        "plain": st.just(True),  # `run --jsonrpc` with the OpenRPC document of its methods (over stdio)
        "http": st.just(True),  # over streamable HTTP: each POST answered with what the plan writes for it
    },
)


def command_of(plan: dict[str, Any], report: Path, corpus: Path, extra: tuple[str, ...] = (),
               budget: float = BUDGET) -> list[str]:
    """The `mcpfuzz run` command line for one plan (a fresh corpus: nothing replayed from an earlier plan), with
    `extra` options."""
    server = ["--", sys.executable, str(ADVERSARY), json.dumps(plan)]
    if plan.get("http"):  # streamable HTTP on a free port, mcpfuzz starting (and restarting) the server
        launch = shlex.join([sys.executable, str(ADVERSARY), "--port", "{port}", json.dumps(plan)])
        server = ["--launch", launch, "http://127.0.0.1:{port}/mcp"]
    plain = ["--jsonrpc", "--openrpc", str(OPENRPC)] if plan.get("plain") and not plan.get("http") else []
    return [sys.executable, "-m", "mcpfuzz", "run", "--budget", f"{budget:g}", "--seed", str(SEED), "--no-replay",
            "--corpus", str(corpus), "--json", str(report), *plain, *extra, *server]


def served(plan: dict[str, Any]) -> dict[str, Any]:
    """The plan as the server reads it: plain methods answered where mcpfuzz runs with --jsonrpc."""
    return {**plan, "methods": bool(plan.get("plain") and not plan.get("http"))}


def run_plan(plan: dict[str, Any], folder: Path, extra: tuple[str, ...] = (),
             budget: float = BUDGET) -> tuple[subprocess.CompletedProcess[str], float, Path]:
    """Run mcpfuzz on the plan's server; the process, the seconds it took, and its report's path."""
    plan = served(plan)
    report = folder / "report.json"
    report.unlink(missing_ok=True)
    command = command_of(plan, report, folder / "corpus", extra, budget)
    started = time.monotonic()
    # The subprocess' own limit is only a backstop far past the promise: the assertion below is what judges.
    done = subprocess.run(command, capture_output=True, text=True, timeout=budget + OVERRUN + SLACK + 60,
                          env={**os.environ, "PYTHONUNBUFFERED": "1"}, cwd=folder, check=False)
    return done, time.monotonic() - started, report


def verdict_problems(done: subprocess.CompletedProcess[str], seconds: float, report: Path,
                     budget: float = BUDGET) -> list[str]:
    """Everything wrong with how the run ended (empty when it ended as mcpfuzz promises)."""
    problems = []
    if seconds > budget + OVERRUN + SLACK:
        problems.append(f"took {seconds:.1f}s, past the budget of {budget:g}s by more than {OVERRUN + SLACK:g}s")
    if done.returncode not in (0, 1, 2):
        problems.append(f"exit status {done.returncode}")
    if f'File "{PACKAGE}' in done.stderr:  # a frame of mcpfuzz's (a server's own traceback may be quoted)
        problems.append("a Python traceback of mcpfuzz on stderr")
    for text in ("mcpfuzz bug", "internal error"):
        if text in done.stderr or text in done.stdout:
            problems.append(f"{text!r} in the output")
    if done.returncode in (0, 1) and not report.exists():
        problems.append("no JSON report")
    said = any(line.startswith("error: ") for line in done.stderr.splitlines()) or "UNTESTED" in done.stdout
    if done.returncode == 2 and not said:
        problems.append("exit 2 without an `error:` line or an UNTESTED verdict")
    if report.exists():
        data = json.loads(report.read_text())
        if data["internal_errors"] or data["stats"]["internal_errors"]:
            problems.append(f"internal errors: {data['internal_errors']}")
        if data["stats"]["duration_s"] > budget + OVERRUN:
            problems.append(f"ran {data['stats']['duration_s']:.1f}s by its own account, past the budget of "
                            f"{budget:g}s by more than {OVERRUN:g}s")
    return problems
