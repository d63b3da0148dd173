"""The fuzz phase's latency target measured: does steering toward slow answers find a slow input sooner?

Usage: python benchmarks/slow_steering.py [--seconds 60] [--seeds 1,2,3,4,5]

Each seed runs `mcpfuzz run --phases coverage,fuzz -x` on tests/servers/rising_latency_server.py twice for
--seconds: as shipped (slow answers, from 0.25 s, reported to Hypothesis' `target()`), and with
MCPFUZZ_LATENCY_TARGET=0 (no latency target: the same search, blind to time). The server's one tool takes time
growing with the square of its list's length, slow-input from 45 items, and its schema sets no maxItems: no boundary
call gets there. The time from the run's start to the first slow-input finding comes from the run's event log.
Prints one line per run and a summary.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SERVER = ROOT / "tests" / "servers" / "rising_latency_server.py"
SLACK = 120.0  # seconds past the budget before a run is killed (start-up, confirmation, shrinking, reports)


@dataclass(frozen=True)
class Outcome:
    """One run: whether it found the slow input, after how many seconds, and its tool calls."""

    steered: bool
    seed: int
    budget: float
    found_after: float | None
    tool_calls: int

    def line(self) -> str:
        mode = "steered" if self.steered else "blind  "
        found = f"slow-input found after {self.found_after:.1f}s" if self.found_after is not None else \
            f"no slow-input within {self.budget:g}s"
        return f"{mode} seed {self.seed}: {found} ({self.tool_calls} tool calls)"


def run(*, steered: bool, seed: int, budget: float) -> Outcome:
    """One `mcpfuzz run` in a scratch folder (its own corpus and example database), read back from its reports."""
    with tempfile.TemporaryDirectory(prefix="mcpfuzz-steering-bench-") as scratch:
        folder = Path(scratch)
        command = [sys.executable, "-m", "mcpfuzz", "run", "--budget", f"{budget:g}", "--seed", str(seed), "-q", "-x",
                   "--phases", "coverage,fuzz", "--corpus", str(folder / "corpus"), "--json",
                   str(folder / "report.json"), "--events", str(folder / "events.ndjson"), "--", sys.executable,
                   str(SERVER)]
        env = {**os.environ, "MCPFUZZ_LATENCY_TARGET": "1" if steered else "0"}
        subprocess.run(command, cwd=folder, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env,
                       timeout=budget + SLACK, check=False)
        report = json.loads((folder / "report.json").read_text())
        started = found = None
        for text in (folder / "events.ndjson").read_text().splitlines():
            event = json.loads(text)
            if event["event"] == "RunStarted":
                started = event["timestamp"]
            elif event["event"] == "FindingFound" and event["finding"]["oracle"] == "slow-input" and found is None:
                found = event["timestamp"]
    after = found - started if found is not None and started is not None else None
    return Outcome(steered, seed, budget, after, report["stats"]["tool_calls"])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seconds", type=float, default=60.0, help="budget of each run")
    parser.add_argument("--seeds", default="1,2,3,4,5", help="comma-separated seeds, each run both ways")
    options = parser.parse_args()
    outcomes = []
    for seed in (int(seed) for seed in options.seeds.split(",")):
        for steered in (True, False):
            outcome = run(steered=steered, seed=seed, budget=options.seconds)
            print(outcome.line(), flush=True)
            outcomes.append(outcome)
    for steered in (True, False):
        found = [o for o in outcomes if o.steered is steered and o.found_after is not None]
        runs = sum(1 for o in outcomes if o.steered is steered)
        print(f"{'steered' if steered else 'blind'}: found in {len(found)} of {runs} runs"
              + (f", after {', '.join(f'{o.found_after:.0f}s' for o in found)}" if found else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
