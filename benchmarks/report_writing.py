"""How long the end of a run takes for many findings: grouping, the corpus, every report file, the console.

    python benchmarks/report_writing.py                 # 1,000 findings, 3 repetitions
    python benchmarks/report_writing.py --findings 5000

The findings are what a run on a misbehaving server leaves: distinct causes on distinct targets, each with a
tools/call reproducer, received lines and occurrences, and one stdout writer with the full 1,000 occurrences and
its samples. Each step is timed apart (the median of the repetitions), in a fresh temporary folder each time.
"""

from __future__ import annotations

import argparse
import io
import json
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

from rich.console import Console

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from mcpfuzz.corpus.redact import Redactor  # noqa: E402
from mcpfuzz.engine.config import RunConfig  # noqa: E402
from mcpfuzz.engine.events import Finding, Occurrence, RunFinished, Sample, Stats  # noqa: E402
from mcpfuzz.engine.judge import MAX_OCCURRENCES, group_by_upstream, group_under_tools, name_the_share  # noqa: E402
from mcpfuzz.engine.plan.corpus_writer import CorpusWriter  # noqa: E402
from mcpfuzz.jsonrpc import expectation as ex  # noqa: E402
from mcpfuzz.jsonrpc.frame import Case  # noqa: E402
from mcpfuzz.oracles.base import Severity, all_oracles  # noqa: E402
from mcpfuzz.report.console import ConsoleReporter  # noqa: E402
from mcpfuzz.report.files import ReportFiles, ReportPaths  # noqa: E402

ORACLES = ("invalid-params", "no-crash", "output-schema", "slow-input", "read-only-truthful", "no-hang")


def call_frame(tool: str, number: int) -> bytes:
    return json.dumps({"jsonrpc": "2.0", "id": number, "method": "tools/call",
                       "params": {"name": tool, "arguments": {"path": f"/tmp/work/{number}/file.txt" * 4}}}).encode()


def findings(count: int) -> tuple[Finding, ...]:
    """`count` distinct findings (the first a stdout writer with every occurrence kept)."""
    made = []
    for number in range(count):
        tool = f"tool_{number % 97}_{number}"
        frame = call_frame(tool, number)
        case = Case(tool, "tool", f"{tool}: a drawn call", frame, ex.any_answer(number, "tools/call"))
        noisy = number == 0
        occurrences = tuple(Occurrence(f"tool/t{n}", f"requestedPath /tmp/{n}/x y z {n}" if noisy else "")
                            for n in range(MAX_OCCURRENCES if noisy else 20))
        samples = tuple(Sample(f"shape{n}", 100 + n, f"tool/t{n}", f"shape{n} /tmp/{n}", (frame,))
                        for n in range(5))
        made.append(Finding(
            oracle="stdout-clean" if noisy else ORACLES[number % len(ORACLES)],
            severity=Severity(1 + number % 4), title="a title", target=f"tool/{tool}", case_title=case.title,
            message=f"the server answered something wrong for call {number}: " + "x" * 80,
            expected="a result or an error with its id", frames=(frame,), case=case,
            received=(json.dumps({"jsonrpc": "2.0", "id": number, "result": {"content": []}}),),
            key=f"key:{number}", server_wide=noisy, occurrences=occurrences, occurrence_count=len(occurrences),
            samples=samples, sample_count=7, also_on=tuple(f"tool/t{n}" for n in range(12 if noisy else 2)),
            era="legacy", protocol_version="2025-11-25"))
    return tuple(made)


def timed(step: Callable[[], object], repeat: int) -> float:
    """The median seconds of `step` over `repeat` runs."""
    times = []
    for _ in range(repeat):
        began = time.perf_counter()
        step()
        times.append(time.perf_counter() - began)
    return statistics.median(times)


def measure(count: int, repeat: int) -> dict[str, float]:
    """Each step of a run's end, timed apart, for `count` findings."""
    made = findings(count)
    config = RunConfig(command=["server"], oracles=tuple(all_oracles()))
    finished = RunFinished(Stats(cases=50_000), made, "2025-11-25", "legacy")
    figures: dict[str, float] = {}
    figures["grouping"] = timed(lambda: name_the_share(group_by_upstream(group_under_tools(made)), ()), repeat)

    with tempfile.TemporaryDirectory() as folder:
        writer = CorpusWriter.open(RunConfig(command=["server"], corpus=Path(folder)), Redactor(), print)
        # Each written as found, in the phases' time; then the run's end writes again what changed since.
        figures["corpus, as found (in the phases' time)"] = timed(lambda: writer.save(made), 1)
        changed = tuple(replace(f, reproducible=True) for f in made[:50])  # the re-run verdicts verification gave
        figures["corpus at the end (50 re-run verdicts changed)"] = timed(
            lambda: writer.save((*changed, *made[50:])), repeat)

    def reports() -> None:
        with tempfile.TemporaryDirectory() as folder:
            paths = ReportPaths(*(str(Path(folder) / name) for name in
                                  ("r.json", "r.xml", "r.sarif", "r.md", "r.html")))
            problem = ReportFiles(config, paths).write(finished)
            assert not problem, problem
    figures["report files (JSON, JUnit, SARIF, Markdown, HTML)"] = timed(reports, repeat)

    def console() -> None:
        reporter = ConsoleReporter(config, Console(file=io.StringIO(), width=120, soft_wrap=True, highlight=False,
                                                   emoji=False))
        reporter.handle(finished)
    figures["console"] = timed(console, repeat)
    figures["the run's end (all but the corpus as found)"] = sum(
        seconds for name, seconds in figures.items() if "as found" not in name)
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n", 1)[0])
    parser.add_argument("--findings", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    for name, seconds in measure(args.findings, args.repeat).items():
        print(f"{name:55} {seconds:7.3f} s")


if __name__ == "__main__":
    main()
