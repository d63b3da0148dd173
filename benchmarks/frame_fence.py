"""The fence measured: random frames per second of the fuzz phase with the barrier's answer as a fence, and with the
grace after every silent frame (the fence never trusted), alternated in one process.

Usage: python benchmarks/frame_fence.py [--rounds 3] [--max-examples 15] [-- SERVER COMMAND...]

Each round runs the probe and the fuzz phase twice with the same seed and --max-examples (so both send the same
frames): once as shipped, once with `order.ORDER_EVIDENCE` out of reach (every silent frame waits the grace, as
before the fence). The clock runs from the fuzz phase's start to its last random frame judged. Prints each run,
the frame findings of each mode (they must be equal), and the ratio of the medians. Default server: the test server
tests/servers/mcp_server.py, and the same with --bug silent-parse (a server that ignores every unparseable line).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

import anyio

from mcpfuzz.engine.config import RunConfig
from mcpfuzz.engine.events import CaseDone, FindingFound, PhaseStarted
from mcpfuzz.engine.runner import run
from mcpfuzz.engine.session import order
from mcpfuzz.oracles.base import all_oracles

ROOT = Path(__file__).resolve().parent.parent
SERVER = [sys.executable, str(ROOT / "tests" / "servers" / "mcp_server.py")]
FRAMES = "frames"  # the family of the fuzz phase's random frames
NEVER = 10**9


def frames_per_second(command: list[str], max_examples: int, fenced: bool) -> tuple[float, int, set[tuple[str, str]]]:
    """One run: random frames judged per second of the fuzz phase, how many, and the frame findings."""
    marks: dict[str, float] = {}
    frames = 0
    found: set[tuple[str, str]] = set()

    def listen(event: object) -> None:
        nonlocal frames
        if isinstance(event, PhaseStarted) and event.name == "fuzz":
            marks["start"] = time.perf_counter()
        elif isinstance(event, CaseDone) and event.phase == "fuzz" and event.exchange.case.family == FRAMES:
            marks["end"] = time.perf_counter()
            frames += 1
        elif isinstance(event, FindingFound) and event.finding.target.startswith(f"{FRAMES}/"):
            found.add((event.finding.oracle, event.finding.key))

    evidence = order.ORDER_EVIDENCE
    order.ORDER_EVIDENCE = evidence if fenced else NEVER
    try:
        config = RunConfig(command=command, seed=1, budget=300, timeout=5, oracles=tuple(all_oracles()),
                           phases=("probe", "fuzz"), corpus=None, replay_corpus=False, max_examples=max_examples)
        finished = anyio.run(run, config, listen)
    finally:
        order.ORDER_EVIDENCE = evidence
    if finished.error:
        raise RuntimeError(f"the run failed: {finished.error}")
    return frames / (marks["end"] - marks["start"]), frames, found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--max-examples", type=int, default=15)
    parser.add_argument("command", nargs="*", help="a stdio server's command (default: the test server, clean and "
                                                   "with --bug silent-parse)")
    args = parser.parse_args()
    commands = [args.command] if args.command else [SERVER, [*SERVER, "--bug", "silent-parse"]]
    for command in commands:
        print(f"server: {' '.join(Path(part).name for part in command)}  (load {os.getloadavg()[0]:.1f})")
        rates: dict[bool, list[float]] = {True: [], False: []}
        findings: dict[bool, set[tuple[str, str]]] = {}
        for _ in range(args.rounds):
            for fenced in (False, True):
                rate, frames, found = frames_per_second(command, args.max_examples, fenced)
                rates[fenced].append(rate)
                findings[fenced] = findings.get(fenced, set()) | found
                print(f"  {'fence' if fenced else 'grace'}: {frames} frames, {rate:.1f} frames/s")
        print(f"  frame findings equal: {findings[True] == findings[False]} ({sorted(findings[True])})")
        ratio = statistics.median(rates[True]) / statistics.median(rates[False])
        print(f"  median frames/s: grace {statistics.median(rates[False]):.1f}, fence "
              f"{statistics.median(rates[True]):.1f}, ratio {ratio:.2f}x  (load {os.getloadavg()[0]:.1f})")


if __name__ == "__main__":
    main()
