"""Coverage-guided search against blind search: does a run find the crash four nested conditions deep, and when?

Usage: python benchmarks/coverage_guided.py [--seconds 60] [--blind-seconds 300] [--seeds 1,2,3] [--node]
       python benchmarks/coverage_guided.py --overhead [--seconds 20] [--seeds 1] [--node]

Each seed runs `mcpfuzz run` on tests/servers/nested_conditions_server.py twice, with `--coverage` for --seconds
and without it for --blind-seconds, each stopping at its first finding (-x); the time from the run's start to the
crash comes from the run's event log. --overhead instead runs the bundled example with and without --coverage for
--seconds each and prints the tool calls per second of each and their ratio. --node runs the Node twins instead
(V8 coverage): tests/servers/nested_conditions_server.cjs, and for --overhead the TypeScript SDK server of
tests/sdk_servers/ts (its node_modules installed). Prints one line per run and a table.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
NESTED = [sys.executable, str(ROOT / "tests" / "servers" / "nested_conditions_server.py")]
EXAMPLE = [sys.executable, "-m", "mcpfuzz.example"]
NODE_NESTED = ["node", str(ROOT / "tests" / "servers" / "nested_conditions_server.cjs")]
NODE_EXAMPLE = ["node", str(ROOT / "tests" / "sdk_servers" / "ts" / "server.mjs")]
SLACK = 120.0  # seconds past the budget before a run is killed (start-up, verification, reports)


@dataclass(frozen=True)
class Outcome:
    """One run: whether it found the crash, after how many seconds, and its tool calls."""

    coverage: bool
    seed: int
    budget: float
    crash_after: float | None
    tool_calls: int
    duration: float
    lines: int | None

    def line(self) -> str:
        mode = "--coverage" if self.coverage else "blind     "
        found = f"crash found after {self.crash_after:.1f}s" if self.crash_after is not None else \
            f"no crash within {self.budget:g}s"
        rate = self.tool_calls / self.duration if self.duration else 0.0
        lines = f", {self.lines} lines reached" if self.lines is not None else ""
        return f"{mode} seed {self.seed}: {found} ({self.tool_calls} tool calls, {rate:.0f}/s{lines})"


def run(server: list[str], *, coverage: bool, seed: int, budget: float, stop_at_first: bool) -> Outcome:
    """One `mcpfuzz run` in a scratch folder (its own corpus), read back from its JSON report and event log."""
    with tempfile.TemporaryDirectory(prefix="mcpfuzz-coverage-bench-") as scratch:
        folder = Path(scratch)
        command = [sys.executable, "-m", "mcpfuzz", "run", "--budget", f"{budget:g}", "--seed", str(seed), "-q",
                   "--corpus", str(folder / "corpus"), "--json", str(folder / "report.json"),
                   "--events", str(folder / "events.ndjson"), *(["--coverage"] if coverage else []),
                   *(["-x"] if stop_at_first else []), "--", *server]
        subprocess.run(command, cwd=folder, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                       timeout=budget + SLACK, check=False)
        report = json.loads((folder / "report.json").read_text())
        started = crash = None
        for text in (folder / "events.ndjson").read_text().splitlines():
            event = json.loads(text)
            if event["event"] == "RunStarted":
                started = event["timestamp"]
            elif event["event"] == "FindingFound" and event["finding"]["oracle"] == "no-crash" and crash is None:
                crash = event["timestamp"]
    stats = report["stats"]
    lines = stats["coverage"]["lines"] if "coverage" in stats else None
    after = crash - started if crash is not None and started is not None else None
    return Outcome(coverage, seed, budget, after, stats["tool_calls"], stats["duration_s"], lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seconds", type=float, default=60.0, help="budget of each --coverage run")
    parser.add_argument("--blind-seconds", type=float, default=300.0,
                        help="budget of each run without it (0: none)")
    parser.add_argument("--seeds", default="1,2,3", help="comma-separated seeds, each run both ways")
    parser.add_argument("--overhead", action="store_true", help="calls/s on the bundled example instead")
    parser.add_argument("--node", action="store_true", help="the Node servers instead of the Python ones")
    options = parser.parse_args()
    seeds = [int(seed) for seed in options.seeds.split(",")]
    example, nested = (NODE_EXAMPLE, NODE_NESTED) if options.node else (EXAMPLE, NESTED)
    if options.overhead:
        for seed in seeds:
            plain = run(example, coverage=False, seed=seed, budget=options.seconds, stop_at_first=False)
            traced = run(example, coverage=True, seed=seed, budget=options.seconds, stop_at_first=False)
            print(plain.line(), traced.line(), sep="\n", flush=True)
            plain_rate, traced_rate = plain.tool_calls / plain.duration, traced.tool_calls / traced.duration
            print(f"seed {seed}: calls/s {plain_rate:.0f} without, {traced_rate:.0f} with --coverage "
                  f"(ratio {plain_rate / traced_rate:.2f})", flush=True)
        return 0
    outcomes = []
    for seed in seeds:
        for coverage, budget in ((True, options.seconds), (False, options.blind_seconds)):
            if budget <= 0:
                continue  # --blind-seconds 0: the guided runs alone
            outcome = run(nested, coverage=coverage, seed=seed, budget=budget, stop_at_first=True)
            print(outcome.line(), flush=True)
            outcomes.append(outcome)
    for coverage in (True, False):
        found = [o for o in outcomes if o.coverage is coverage and o.crash_after is not None]
        mode = "--coverage" if coverage else "blind"
        runs = sum(1 for o in outcomes if o.coverage is coverage)
        if not runs:
            continue
        print(f"{mode}: found in {len(found)} of {runs} runs"
              + (f", after {', '.join(f'{o.crash_after:.0f}s' for o in found)}" if found else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
