"""How fast mcpfuzz is next to a raw client and the peer tools, on the same local server. Prints figures.

Run from the repository root:
    python benchmarks/bench.py --quick          # about 2 minutes: short durations
    python benchmarks/bench.py                  # 8 s figures (stdio and streamable HTTP), two 60 s whole runs
                                                # (about 7 minutes)
    python benchmarks/bench.py --with-peers     # also mcp-toolproof and mcp-fuzzer (installed once into
                                                # benchmarks/.peers/), each run as long as mcpfuzz
    python benchmarks/bench.py --only split,bugs  # some sections only (short, http, startup, runs, split, bugs)

Timed figures on a shared machine are noisy: every short figure is measured in each of several
repetitions (median, min and max shown), and ratios are taken within one repetition.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import platform
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent  # mcpfuzz itself is imported as installed (`pip install -e .`): mcpfuzz.strategies needs it

import cli_figures  # noqa: E402
import engine_figures  # noqa: E402
import http_client  # noqa: E402
import peers  # noqa: E402
import raw_client  # noqa: E402
import time_to_bug  # noqa: E402
from figures import Figure, Target, megabytes, ratio  # noqa: E402
from nested_server import TOOL_NAME, nested_example, nested_schema  # noqa: E402
from tool_runs import ToolRun  # noqa: E402

SERVER = [sys.executable, str(ROOT / "tests" / "servers" / "mcp_server.py")]  # the clean server
NESTED = [sys.executable, str(HERE / "nested_server.py")]  # one 30-property tool, also clean
# A real SDK: the Python SDK's MCPServer (mcp 2.x, in mcpfuzz's own environment); its `echo {text}` is fuzzed.
SDK_SERVER = [sys.executable, str(ROOT / "tests" / "sdk_servers" / "sdk2_server.py")]
SECTIONS = ("short", "http", "startup", "runs", "split", "bugs")
BUG_SEEDS = (1, 2, 3)
SMALL_SCHEMA = {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"],
                "additionalProperties": False}
PEERS_DIR = HERE / ".peers"
HTTP_SERVER_NAME = "tests/servers/http_server.py"
# Issue 21's targets. Ratios are percent of the raw client's figure measured in the same repetition.
TARGET_CATALOGUE = 50.0  # catalogue frames/s, of raw pipelined (stdio)
TARGET_FUZZ_SMALL = 25.0  # fuzz calls/s on the one-string tool, of raw sequential
TARGET_FUZZ_NESTED = 30.0  # fuzz calls/s on the 30-property tool, of raw sequential on that tool
TARGET_HTTP_CATALOGUE = 50.0  # HTTP catalogue frames/s, of the raw client's 8 parallel connections
TARGET_HTTP_FUZZ = 30.0  # HTTP fuzz calls/s, of the raw client's sequential round trips
TARGET_OVER_MCP_FUZZER, TARGET_OVER_TOOLPROOF = 1.5, 5.0  # whole-run frames/s reaching the server
TARGET_HELP = 0.15  # seconds
TARGET_RSS = 120e6  # bytes
WORKERS = 2  # `run --workers`: one per core of the 2-core machines this was measured on
REPEAT_MAX_EXAMPLES = 30  # --max-examples of the two runs compared frame by frame
OurRun = tuple[ToolRun, int | None, str]  # an mcpfuzz whole run, its findings count, the oracles that fired


def parse_args() -> argparse.Namespace:
    """Options; --quick only changes the defaults of the durations."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="short durations: the whole script in about 2 minutes")
    parser.add_argument("--seconds", type=float, help="length of each short timed figure (default 8, quick 2)")
    parser.add_argument("--repeat", type=int, help="repetitions of each short figure (default 3)")
    parser.add_argument("--run-seconds", type=float,
                        help="length of the whole runs: mcpfuzz's (peak RSS, frames reaching the server) and "
                             "each peer's (default 60, quick 10)")
    parser.add_argument("--with-peers", action="store_true",
                        help="also run mcp-toolproof and mcp-fuzzer (installed into --peers-dir when missing)")
    parser.add_argument("--peers-dir", type=Path, default=PEERS_DIR, help="where the peers' venvs live")
    parser.add_argument("--only", default=",".join(SECTIONS),
                        help=f"comma-separated sections to run (default all): {', '.join(SECTIONS)}")
    parser.add_argument("--bug-budget", type=float, default=30.0,
                        help="budget of each time-to-bug run, in seconds (a bug not found by then is missed)")
    args = parser.parse_args()
    args.only = {section.strip() for section in args.only.split(",") if section.strip()}
    if args.only - set(SECTIONS):
        parser.error(f"unknown sections: {', '.join(sorted(args.only - set(SECTIONS)))}")
    args.peers_dir = args.peers_dir.resolve()  # the tools run in scratch folders
    args.seconds = args.seconds or (2.0 if args.quick else 8.0)
    args.repeat = args.repeat or 3
    args.run_seconds = args.run_seconds or (10.0 if args.quick else 60.0)
    args.help_repeat = 5 if args.quick else 10
    args.draws = 30 if args.quick else 100
    if args.seconds <= 0 or args.repeat < 1 or args.run_seconds <= 0:
        parser.error("--seconds and --run-seconds must be positive, --repeat at least 1")
    return args


def progress(text: str) -> None:
    """Where the script is, on stderr (the figures go to stdout)."""
    print(f"... {text}", file=sys.stderr, flush=True)


def short_figures(args: argparse.Namespace) -> list[Figure]:
    """Every short figure once per repetition, interleaved so that a noisy moment hits all of them."""
    nested_args = nested_example()
    measures: list[tuple[Figure, Callable[[], float]]] = [
        (Figure("raw client, sequential tools/call echo", "calls/s"),
         lambda: raw_client.sequential(SERVER, "echo", {"text": "hello"}, args.seconds)),
        (Figure(f"raw client, pipelined ({raw_client.WINDOW} in flight) tools/call echo", "calls/s"),
         lambda: raw_client.pipelined(SERVER, "echo", {"text": "hello"}, args.seconds)),
        (Figure("raw client, sequential tools/call, 30-property tool", "calls/s"),
         lambda: raw_client.sequential(NESTED, TOOL_NAME, nested_args, args.seconds)),
        (Figure("mcpfuzz catalogue phase", "frames/s"),
         lambda: engine_figures.catalogue_frames(SERVER, args.seconds)),
        (Figure("mcpfuzz fuzz phase, small schema (echo {text})", "calls/s", 1),
         lambda: engine_figures.fuzz_calls(SERVER, args.seconds, exclude=("add", "get_note"))),
        (Figure("mcpfuzz fuzz phase, 30-property nested schema", "calls/s", 1),
         lambda: engine_figures.fuzz_calls(NESTED, args.seconds)),
        (Figure("mcpfuzz coverage phase, 30-property tool", "calls/s", 1),
         lambda: engine_figures.coverage_calls(NESTED, args.seconds)),
        (Figure("mcpfuzz coverage phase, 30-property tool annotated read-only", "calls/s", 1),
         lambda: engine_figures.coverage_calls([*NESTED, "--read-only"], args.seconds)),
        (Figure("mcpfuzz fuzz phase, 30-property tool annotated read-only", "calls/s", 1),
         lambda: engine_figures.fuzz_calls([*NESTED, "--read-only"], args.seconds)),
        (Figure("draw one valid value, small schema", "ms", 2),
         lambda: engine_figures.draw_millis(SMALL_SCHEMA, args.draws * 2)),
        (Figure("draw one valid value, 30-property nested schema", "ms", 2),
         lambda: engine_figures.draw_millis(nested_schema(), args.draws)),
    ]
    for repetition in range(1, args.repeat + 1):
        for figure, measure in measures:
            progress(f"repetition {repetition}/{args.repeat}: {figure.label}")
            figure.values.append(measure())
    return [figure for figure, _ in measures]


def startup_figures(args: argparse.Namespace) -> list[Figure]:
    """`mcpfuzz --help`, the first line of `mcpfuzz run` and the bare interpreter, alternated; and the first two
    over the interpreter, per repetition."""
    progress(f"start-up, {args.help_repeat} times each")
    help_figure = Figure("`mcpfuzz --help` start-up", "s", 3)
    first_line = Figure("`mcpfuzz run`, start to its first line", "s", 3)
    floor = Figure("  (floor: this Python running `-c pass`)", "s", 3)
    cli_figures.help_seconds()  # warm the file cache and write the byte code once, as a user's second run has them
    cli_figures.first_line_seconds(SERVER)
    for _ in range(args.help_repeat):
        help_figure.values.append(cli_figures.help_seconds())
        first_line.values.append(cli_figures.first_line_seconds(SERVER))
        floor.values.append(cli_figures.python_seconds())
    return [help_figure, first_line, floor, ratio("  `--help` over the floor", help_figure, floor),
            ratio("  first line of `run` over the floor", first_line, floor)]


def run_row(name: str, run: ToolRun | None, findings: int | None, note: str) -> str:
    """One tool's whole run: frames/s reaching the server, bytes/s, servers started, findings, peak RSS of its
    main process, and the most all its processes held at once."""
    if run is None:
        return f"{name:<16} {note}"
    found = "?" if findings is None else str(findings)
    how = "stopped at the cap" if run.stopped else f"exit {run.exit_code}"
    return (f"{name:<16} {run.frames_per_second:>10,.0f} {run.bytes / run.elapsed / 1e6:>8.2f} "
            f"{run.frames:>9,} {run.servers:>7} {found:>8} {megabytes(run.peak_rss):>9} {megabytes(run.tree_rss):>9}"
            f"   {how}" + (f"; {note}" if note else ""))


def peer_row(result: peers.PeerResult) -> str:
    """A peer's timed run with the findings of its default run, or why it has none (indented detail)."""
    if result.error:
        first, *rest = result.error.splitlines()
        return "\n".join([run_row(result.name, result.timed, None, first), *(f"    {line}" for line in rest)])
    assert result.default is not None
    return run_row(result.name, result.timed, result.findings,
                   f"findings from its default run ({result.default.elapsed:.1f}s): {result.detail or 'none'}")


def http_figures(args: argparse.Namespace) -> tuple[list[Figure], list[Figure], list[str]]:
    """Streamable HTTP against tests/servers/http_server.py on 127.0.0.1: figures, ratios, notes.

    One server for every repetition (as a user's URL); the raw client speaks the era mcpfuzz
    negotiates there (2026-07-28, stateless POSTs).
    """
    if importlib.util.find_spec("mcpfuzz.transport.streamable_http") is None:
        return [], [], ["streamable HTTP: skipped, mcpfuzz has no HTTP transport"]
    echo = ("echo", {"text": "hello"})
    with http_client.http_server() as url:
        measures: list[tuple[Figure, Callable[[], float]]] = [
            (Figure("HTTP raw client, sequential tools/call echo", "calls/s"),
             lambda: http_client.sequential(url, *echo, args.seconds)),
            (Figure(f"HTTP raw client, {http_client.CONNECTIONS} connections in parallel", "calls/s"),
             lambda: http_client.parallel(url, *echo, args.seconds)),
            (Figure("HTTP mcpfuzz catalogue phase", "frames/s"),
             lambda: engine_figures.catalogue_frames(url, args.seconds)),
            (Figure("HTTP mcpfuzz fuzz phase, small schema (echo {text})", "calls/s", 1),
             lambda: engine_figures.fuzz_calls(url, args.seconds, exclude=("add", "get_note"))),
        ]
        for repetition in range(1, args.repeat + 1):
            for figure, measure in measures:
                progress(f"repetition {repetition}/{args.repeat}: {figure.label}")
                figure.values.append(measure())
    figures = [figure for figure, _ in measures]
    raw_seq, raw_parallel, catalogue, fuzz = figures
    ratios = [ratio("HTTP ratio: catalogue frames/s over raw parallel", catalogue, raw_parallel),
              ratio("HTTP ratio: fuzz calls/s (small) over raw sequential", fuzz, raw_seq)]
    return figures, ratios, [f"HTTP server: {HTTP_SERVER_NAME} on 127.0.0.1 (clean, streamable HTTP)"]


def split_figures(args: argparse.Namespace) -> list[tuple[str, list[float], list[dict[str, float]], list[float]]]:
    """Per schema: mcpfuzz's fuzz calls/s, the microseconds per call of each part, the raw client's calls/s, in
    each repetition (alternated, so a noisy moment hits all of them)."""
    nested_args = nested_example()
    cases = [
        ("1 string (mcp_server.py echo)", SERVER, ("add", "get_note"), "echo", {"text": "hello"}),
        ("30 properties (nested_server.py)", NESTED, (), TOOL_NAME, nested_args),
        ("Python SDK 2.x MCPServer echo", SDK_SERVER, ("add", "lookup"), "echo", {"text": "hello"}),
    ]
    rows: list[tuple[str, list[float], list[dict[str, float]], list[float]]] = [(c[0], [], [], []) for c in cases]
    for repetition in range(1, args.repeat + 1):
        for (label, server, exclude, tool, arguments), (_, speeds, parts, raws) in zip(cases, rows, strict=True):
            progress(f"repetition {repetition}/{args.repeat}: split of a call, {label}")
            speed, split = engine_figures.fuzz_split(server, args.seconds, exclude=exclude)
            speeds.append(speed)
            parts.append(split)
            raws.append(raw_client.sequential(server, tool, arguments, args.seconds))
    return rows


def print_split(rows: list[tuple[str, list[float], list[dict[str, float]], list[float]]]) -> None:
    """The split of a judged fuzz call, microseconds (median of the repetitions), one column per schema."""
    from mcpfuzz.jsonrpc.call_split import PARTS

    width = 34
    print("\nwhere a judged fuzz call's time goes, microseconds per call (median of the repetitions)")
    print(f"{'part':<22}" + "".join(f"{label[:width - 1]:>{width}}" for label, *_ in rows))
    meanings = {"hypothesis": "Hypothesis' engine between examples", "draw": "drawing the calls",
                "encode": "frame and expectation", "write": "the write to the pipe",
                "wait": "write end to the next read", "parse": "lines split, parsed, routed",
                "judge": "the oracles", "bookkeeping": "events, stats, corpus", "rest": "asyncio, thread hops, session",
                "cpu": "mcpfuzz's CPU per call (both threads)"}
    for part in (*PARTS, "rest", "cpu"):
        cells = []
        for _, _, parts, _ in rows:
            values = [split[part] for split in parts]
            cells.append(f"{statistics.median(values):,.0f}" if values else "-")
        print(f"{part:<22}" + "".join(f"{cell:>{width}}" for cell in cells) + f"   {meanings[part]}")
    totals = [f"{1e6 / statistics.median(speeds):,.0f}" if speeds and min(speeds) > 0 else "-"
              for _, speeds, _, _ in rows]
    print(f"{'total (wall)':<22}" + "".join(f"{cell:>{width}}" for cell in totals))
    raws = [f"{1e6 / statistics.median(raw):,.0f}" if raw and min(raw) > 0 else "-" for _, _, _, raw in rows]
    print(f"{'raw client, sequential':<22}" + "".join(f"{cell:>{width}}" for cell in raws))
    shares = []
    for _, speeds, _, raw in rows:
        values = [100.0 * s / r for s, r in zip(speeds, raw, strict=True) if r > 0]
        shares.append(f"{statistics.median(values):.1f}% of raw" if values else "-")
    print(f"{'fuzz calls/s':<22}" + "".join(f"{cell:>{width}}" for cell in shares))


def print_bugs(rows: list[time_to_bug.BugTimes], seeds: tuple[int, ...], budget: float) -> None:
    """Seconds from a run's start to each planted bug's finding."""
    print(f"\ntime to each planted bug, seconds from the run's start, seeds {', '.join(map(str, seeds))}, "
          f"runs of at most {budget:g}s (worst 'missed': a seed did not find it)")
    print(time_to_bug.HEADER)
    for row in rows:
        print(row.line())
    found = [s for row in rows for s in row.seconds if s is not None]
    missed = sum(1 for row in rows for s in row.seconds if s is None)
    medians = sum(statistics.median(row.found) for row in rows if row.found)
    if found:
        print(f"{len(rows)} bugs, {len(found)} findings timed, {missed} missed; "
              f"median {statistics.median(found):.2f}s, sum of the medians {medians:.1f}s")


def main() -> None:
    """Measure, then print figures, ratios, whole runs and targets."""
    args = parse_args()
    started = time.monotonic()
    load_before = os.getloadavg()
    figures: list[Figure] = []
    ratios = [Figure("ratio: catalogue frames/s over raw pipelined", "%", 1),
              Figure("ratio: fuzz calls/s (small) over raw sequential", "%", 1),
              Figure("ratio: fuzz calls/s (nested) over raw sequential (same tool)", "%", 1)]
    if "short" in args.only:
        figures = short_figures(args)
        raw_seq, raw_pipe, raw_nested, catalogue, fuzz_small, fuzz_nested = figures[:6]
        coverage_nested, coverage_read_only, fuzz_read_only = figures[6:9]
        ratios = [
            ratio("ratio: catalogue frames/s over raw pipelined", catalogue, raw_pipe),
            ratio("ratio: fuzz calls/s (small) over raw sequential", fuzz_small, raw_seq),
            ratio("ratio: fuzz calls/s (nested) over raw sequential (same tool)", fuzz_nested, raw_nested),
            # The same tool, its calls in windows when annotated read-only: what windows give.
            ratio("ratio: coverage calls/s (nested), read-only over not", coverage_read_only, coverage_nested),
            ratio("ratio: fuzz calls/s (nested), read-only over not", fuzz_read_only, fuzz_nested),
        ]
    http_figs, http_ratios, http_notes = http_figures(args) if "http" in args.only else ([], [], [])
    help_figure = Figure("`mcpfuzz --help` start-up", "s", 3)
    first_line = Figure("`mcpfuzz run`, start to its first line", "s", 3)
    startup: list[Figure] = []
    if "startup" in args.only:
        startup = startup_figures(args)
        help_figure, first_line = startup[:2]
    splits = split_figures(args) if "split" in args.only else []
    bugs = time_to_bug.time_to_bugs(BUG_SEEDS, args.bug_budget, progress) if "bugs" in args.only else []

    runs: tuple[OurRun, OurRun, OurRun, list[str], cli_figures.Repeatability, list[peers.PeerResult]] | None = None
    if "runs" in args.only:
        runs = whole_runs(args)

    cpus = os.cpu_count()
    print(f"\nmcpfuzz benchmark: {platform.system()} {platform.machine()}, {cpus} CPUs, Python "
          f"{platform.python_version()}; {args.repeat} repetitions of {args.seconds:g}s"
          f"{' (quick)' if args.quick else ''}; whole runs of {args.run_seconds:g}s")
    load_after = os.getloadavg()
    print("load average (1, 5, 15 min): before " + ", ".join(f"{x:.2f}" for x in load_before)
          + "; after " + ", ".join(f"{x:.2f}" for x in load_after))
    print(f"server: {Path(SERVER[1]).relative_to(ROOT)} (clean); nested: {Path(NESTED[1]).relative_to(ROOT)}\n")
    print(f"{'figure':<58} {'median':>10} {'unit':<8} spread")
    for figure in [*figures, *(ratios if figures else []), *http_figs, *http_ratios, *startup]:
        print(figure.line())
    for note in [*http_notes, *engine_figures.NOTES]:
        print(f"note: {note}")
    if splits:
        print_split(splits)
    if bugs:
        print_bugs(bugs, BUG_SEEDS, args.bug_budget)
    if runs is not None:
        print_runs(args, runs)

    print("\ntargets (printed, not asserted)")
    cold, warm, parallel, _, repeat, results = runs if runs is not None else (None, None, None, [], None, [])
    measured = Measured(catalogue=ratios[0], fuzz_small=ratios[1], fuzz_nested=ratios[2],
                        http_catalogue=http_ratios[0] if http_ratios else None,
                        http_fuzz=http_ratios[1] if http_ratios else None, help=help_figure, first_line=first_line,
                        cold=cold, warm=warm,
                        parallel=parallel, peers=results, repeat=repeat)
    for target in targets(measured):
        print(target.line())
    print(f"\ntotal time {time.monotonic() - started:.0f}s")


def whole_runs(args: argparse.Namespace
               ) -> tuple[OurRun, OurRun, OurRun, list[str], cli_figures.Repeatability, list[peers.PeerResult]]:
    """mcpfuzz's whole runs (fresh cache, again, with workers), the repeatability check, and the peers."""
    with tempfile.TemporaryDirectory(prefix="mcpfuzz-bench-") as scratch:
        work = Path(scratch)
        home = work / "home"  # where mcpfuzz is started: fresh, as in a new CI checkout
        cache = work / "cache"  # its XDG_CACHE_HOME: empty, as on a new machine
        for folder in (home, work / "cold", work / "warm"):
            folder.mkdir()
        progress(f"mcpfuzz run, {args.run_seconds:g}s, on the clean server, fresh folder and empty cache")
        cold = cli_figures.mcpfuzz_run(SERVER, args.run_seconds, work / "cold", home, cache)
        progress(f"mcpfuzz run, {args.run_seconds:g}s, again")
        warm = cli_figures.mcpfuzz_run(SERVER, args.run_seconds, work / "warm", home, cache)
        progress(f"mcpfuzz run --workers {WORKERS}, {args.run_seconds:g}s")
        (work / "workers").mkdir()
        parallel = cli_figures.mcpfuzz_run(SERVER, args.run_seconds, work / "workers", home, cache,
                                           ("--workers", str(WORKERS)))
        left_behind = sorted(path.name for path in home.iterdir())
        progress(f"two mcpfuzz runs with --seed 1 --max-examples {REPEAT_MAX_EXAMPLES}, frames compared")
        (work / "repeat").mkdir()
        repeat = cli_figures.repeatability(SERVER, work / "repeat", REPEAT_MAX_EXAMPLES, home, cache)
        results: list[peers.PeerResult] = []
        if args.with_peers:
            for peer in peers.PEERS:
                progress(f"{peer.name}: install if needed, {args.run_seconds:g}s timed run, default run")
                results.append(peers.run_peer(peer, args.peers_dir, SERVER, args.run_seconds, work / peer.name))
    return cold, warm, parallel, left_behind, repeat, results


def print_runs(args: argparse.Namespace, runs: tuple[OurRun, OurRun, OurRun, list[str], cli_figures.Repeatability,
                                                       list[peers.PeerResult]]) -> None:
    """The whole runs' table."""
    cold, warm, parallel, left_behind, _, results = runs
    print(f"\nwhole runs on the clean server, {args.run_seconds:g}s each, frames counted by benchmarks/tee_server.py")
    print("(each tool starts in a fresh folder; mcpfuzz's first run also has an empty cache folder, where a "
          "child process builds Hypothesis' Unicode tables once; 'mcpfuzz again' reuses it; peak RSS: the tool's "
          "main process at its high-water mark; all: the most its processes held at once, workers and that child "
          "included, sampled every 0.2 s)")
    print(f"{'tool':<16} {'frames/s':>10} {'MB/s':>8} {'frames':>9} {'servers':>7} {'findings':>8} "
          f"{'peak RSS':>9} {'all':>9}   how it ended; findings")
    print(run_row("mcpfuzz", *cold))
    print(run_row("mcpfuzz again", *warm))
    print(run_row(f"mcpfuzz -w {WORKERS}", *parallel))
    for result in results:
        print(peer_row(result))
    if not args.with_peers:
        print("(peers not run: add --with-peers)")
    print(f"left in the folder mcpfuzz ran in: {', '.join(left_behind) or 'nothing'}")


@dataclass(frozen=True)
class Measured:
    """The figures of one benchmark run that the targets are judged on."""

    catalogue: Figure  # ratios, in percent
    fuzz_small: Figure
    fuzz_nested: Figure
    http_catalogue: Figure | None  # None: no HTTP transport
    http_fuzz: Figure | None
    help: Figure
    first_line: Figure  # the first line of `mcpfuzz run`
    cold: OurRun | None  # the whole runs: first with an empty cache, then again (None: not run)
    warm: OurRun | None
    parallel: OurRun | None  # `--workers WORKERS`
    peers: list[peers.PeerResult]
    repeat: cli_figures.Repeatability | None


def ratio_target(goal: str, figure: Figure | None, threshold: float) -> Target:
    """A ratio (percent, the median of the repetitions) against its threshold."""
    if figure is None or not figure.values:
        return Target(goal, "not measured", None)
    return Target(goal, f"{figure.median:.1f}%", figure.median >= threshold)


def targets(measured: Measured) -> list[Target]:
    """Issue 21's targets against this run's figures (speed against the peers: the first run, as theirs)."""
    rows = [
        ratio_target(f"catalogue frames/s >= {TARGET_CATALOGUE:g}% of raw pipelined", measured.catalogue,
                     TARGET_CATALOGUE),
        ratio_target(f"fuzz calls/s >= {TARGET_FUZZ_SMALL:g}% of raw sequential (1 string)", measured.fuzz_small,
                     TARGET_FUZZ_SMALL),
        ratio_target(f"fuzz calls/s >= {TARGET_FUZZ_NESTED:g}% of raw sequential (30 properties)",
                     measured.fuzz_nested, TARGET_FUZZ_NESTED),
        ratio_target(f"HTTP catalogue frames/s >= {TARGET_HTTP_CATALOGUE:g}% of raw parallel",
                     measured.http_catalogue, TARGET_HTTP_CATALOGUE),
        ratio_target(f"HTTP fuzz calls/s >= {TARGET_HTTP_FUZZ:g}% of raw sequential", measured.http_fuzz,
                     TARGET_HTTP_FUZZ),
    ]
    speeds = {r.name: r.timed.frames_per_second for r in measured.peers if r.timed is not None and r.timed.frames}
    for how, whole in (("", measured.cold), (f" (--workers {WORKERS})", measured.parallel)):
        for peer, times in ((peers.McpFuzzer.name, TARGET_OVER_MCP_FUZZER),
                            (peers.Toolproof.name, TARGET_OVER_TOOLPROOF)):
            goal = f"run{how} frames/s >= {times:g}x {peer}'s, 0 findings"
            if whole is not None and peer in speeds:
                ours, our_findings, _ = whole
                over = ours.frames_per_second / speeds[peer]
                rows.append(Target(goal, f"{over:.2f}x, {our_findings} findings",
                                   over >= times and our_findings == 0))
            else:
                rows.append(Target(goal, "peer not run", None))
    for what, figure in (("`mcpfuzz --help`", measured.help), ("`mcpfuzz run`, its first line", measured.first_line)):
        goal = f"{what} < {TARGET_HELP:g}s"
        rows.append(Target(goal, f"{figure.median:.3f}s", figure.median < TARGET_HELP) if figure.values
                    else Target(goal, "not measured", None))
    for label, whole in (("first run, empty cache", measured.cold), ("run again", measured.warm)):
        goal = f"peak RSS < {megabytes(int(TARGET_RSS))}, {label}"
        rows.append(Target(goal, "not run", None) if whole is None
                    else Target(goal, megabytes(whole[0].peak_rss), 0 < whole[0].peak_rss < TARGET_RSS))
    rows.append(repeat_target(measured.repeat))
    return rows


def repeat_target(repeat: cli_figures.Repeatability | None) -> Target:
    """Two runs, same seed and options with --max-examples: the same frames, line for line."""
    goal = f"same seed + --max-examples {REPEAT_MAX_EXAMPLES}: same frames"
    if repeat is None:
        return Target(goal, "not run", None)
    if repeat.error:
        return Target(goal, repeat.error.splitlines()[0][:28], False)
    if repeat.same:
        return Target(goal, f"{repeat.frames[0]:,} frames, identical", True)
    return Target(goal, f"{repeat.frames[0]:,}/{repeat.frames[1]:,}, differ at {repeat.first_difference}", False)


if __name__ == "__main__":
    main()
