"""mcpfuzz's own phases timed in process through the engine API: catalogue frames/s, fuzz calls/s, draws."""

from __future__ import annotations

import time
from functools import cache

import anyio
from mcpfuzz.strategies.arguments.schema_values import ArgumentSchema, draw_examples
from mcpfuzz.strategies.arguments.tool_calls import TOOL_FAMILY

from mcpfuzz.engine.config import RunConfig
from mcpfuzz.engine.events import CaseDone, PhaseStarted, RunFinished
from mcpfuzz.engine.runner import run
from mcpfuzz.oracles.base import all_oracles
from mcpfuzz.transport.http_target import HttpTarget

try:  # engines with random frame fuzzing spend this share of the fuzz phase on frames before the tools
    from mcpfuzz.engine.searches.frame_fuzz import FRAME_SHARE
except ImportError:
    FRAME_SHARE = 0.0

NOTES: list[str] = []  # what went wrong in a run behind a figure, printed with the figures


Target = list[str] | str  # a stdio server's command, or a streamable HTTP server's URL


def _config(target: Target, phases: tuple[str, ...], budget: float, exclude: tuple[str, ...] = ()) -> RunConfig:
    """A run without corpus or replay (repetitions must not replay each other), every oracle on."""
    where = {"command": [], "http": HttpTarget(target)} if isinstance(target, str) else {"command": target}
    return RunConfig(**where, seed=1, budget=budget, timeout=5, oracles=tuple(all_oracles()),
                     phases=phases, exclude_targets=tuple(f"tool/{name}" for name in exclude), corpus=None,
                     replay_corpus=False)


def _checked(finished: RunFinished, what: str) -> RunFinished:
    """A failed run has no figure; findings on a clean server (shrinking slows a run) are noted."""
    if finished.error:
        raise RuntimeError(f"{what}: the run failed: {finished.error}")
    if finished.findings:
        oracles = sorted({finding.oracle for finding in finished.findings})
        NOTES.append(f"{what}: {len(finished.findings)} findings on a clean server ({', '.join(oracles)})")
    return finished


@cache
def probe_frames(target: tuple[str, ...] | str) -> int:
    """Frames the probe alone sends to this server (deterministic for a given server)."""
    finished = anyio.run(run, _config(target if isinstance(target, str) else list(target), ("probe",), 30),
                         lambda event: None)
    return _checked(finished, "probe").stats.frames_sent


def catalogue_frames(command: Target, seconds: float) -> float:
    """Catalogue frames per second, over as many whole catalogue runs as fit in `seconds` (at least one)."""
    before = probe_frames(command if isinstance(command, str) else tuple(command))
    frames, busy = 0, 0.0
    deadline = time.perf_counter() + seconds
    while busy == 0.0 or time.perf_counter() < deadline:
        marks: dict[str, float] = {}

        def listen(event: object, marks: dict[str, float] = marks) -> None:
            if isinstance(event, PhaseStarted) and event.name == "catalogue":
                marks["start"] = time.perf_counter()
            elif isinstance(event, CaseDone) and event.phase == "catalogue":
                marks["end"] = time.perf_counter()  # the last case judged; server shutdown is not the phase's

        finished = _checked(anyio.run(run, _config(command, ("probe", "catalogue"), 30), listen), "catalogue")
        frames += finished.stats.frames_sent - before
        busy += marks["end"] - marks["start"]
    return frames / busy


def fuzz_calls(command: Target, seconds: float, exclude: tuple[str, ...] = ()) -> float:
    """Judged tool calls per second of the fuzz phase's tool searches (Hypothesis draws, I/O and oracles).

    The fuzz phase may start with random frames (FRAME_SHARE of it): the clock starts at the last
    event before the first tool call and only tool calls are counted.
    """
    marks: dict[str, float] = {}
    calls = 0

    def listen(event: object) -> None:
        nonlocal calls
        now = time.perf_counter()
        if isinstance(event, PhaseStarted) and event.name == "fuzz":
            marks["before"] = now
        elif isinstance(event, CaseDone) and event.phase == "fuzz":
            if event.exchange.case.family != TOOL_FAMILY:
                marks["before"] = now
                return
            marks.setdefault("start", marks["before"])
            marks["end"] = now
            calls += 1

    # The runner keeps a small margin of the budget for reports; +1.5 s leaves about `seconds` for the tools.
    budget = seconds / (1.0 - FRAME_SHARE) + 1.5
    _checked(anyio.run(run, _config(command, ("probe", "fuzz"), budget, exclude), listen), "fuzz")
    return calls / (marks["end"] - marks["start"]) if calls else 0.0


def coverage_calls(command: Target, seconds: float) -> float:
    """Judged tool calls per second of the coverage phase (its fixed list of calls), over as many whole runs of it
    as fit in `seconds` (at least one), timed from the phase's start to its last judged call."""
    calls, busy = 0, 0.0
    deadline = time.perf_counter() + seconds
    while busy == 0.0 or time.perf_counter() < deadline:
        marks: dict[str, float] = {}
        counted = [0]

        def listen(event: object, marks: dict[str, float] = marks, counted: list[int] = counted) -> None:
            if isinstance(event, PhaseStarted) and event.name == "coverage":
                marks["start"] = time.perf_counter()
            elif isinstance(event, CaseDone) and event.phase == "coverage":
                marks["end"] = time.perf_counter()
                counted[0] += event.exchange.case.family == TOOL_FAMILY

        _checked(anyio.run(run, _config(command, ("probe", "coverage"), 60), listen), "coverage")
        calls += counted[0]
        busy += marks["end"] - marks["start"]
    return calls / busy


def frame_cases(command: Target, seconds: float) -> tuple[float, int]:
    """Judged random-frame cases per second of the fuzz phase's frame searches, and the run's server restarts.

    The frames come first in the fuzz phase (FRAME_SHARE of it): the clock runs from the phase's start
    to the last frame case before the first tool call.
    """
    marks: dict[str, float] = {}
    cases = 0

    def listen(event: object) -> None:
        nonlocal cases
        now = time.perf_counter()
        if isinstance(event, PhaseStarted) and event.name == "fuzz":
            marks["start"] = now
        elif isinstance(event, CaseDone) and event.phase == "fuzz" and "tools" not in marks:
            if event.exchange.case.family == TOOL_FAMILY:
                marks["tools"] = now
                return
            marks["end"] = now
            cases += 1

    budget = seconds / FRAME_SHARE + 1.0 if FRAME_SHARE else seconds + 1.0
    finished = _checked(anyio.run(run, _config(command, ("probe", "fuzz"), budget), listen), "frames")
    return (cases / (marks["end"] - marks["start"]) if cases else 0.0), finished.stats.restarts


def draw_millis(schema: dict, count: int) -> float:
    """Milliseconds to draw one valid argument object (the 2020-12 validator inside the strategy included)."""
    arguments = ArgumentSchema(schema)
    draw_examples(arguments.positive, 5, seed=0)  # build the strategy outside the timing
    started = time.perf_counter()
    values = draw_examples(arguments.positive, count, seed=1)
    return (time.perf_counter() - started) / max(1, len(values)) * 1e3


def judged_pings(command: list[str], count: int, window: int = 32) -> tuple[float, float]:
    """`count` `ping` cases through the session's windows (`window` 1: each alone, with its barrier) and the runner's
    judge, as the catalogue runs them: (judged cases per second, mcpfuzz's own CPU microseconds per case)."""
    import json

    from mcpfuzz.engine.events import PhaseName
    from mcpfuzz.engine.plan.context import RunContext
    from mcpfuzz.engine.session.session import Session
    from mcpfuzz.engine.session.windows import run_in_order
    from mcpfuzz.jsonrpc.expectation import result
    from mcpfuzz.jsonrpc.frame import Case
    from mcpfuzz.transport.connect import StdioTarget

    async def main() -> tuple[float, float]:
        runner = RunContext.create(_config(command, ("catalogue",), 30), lambda event: None)
        cases = [Case(f"ping-{i}", "bench", "ping", json.dumps({"jsonrpc": "2.0", "id": 100_000 + i, "method": "ping"})
                      .encode(), result(100_000 + i, "ping")) for i in range(count)]
        async with Session(StdioTarget(command)) as session:
            await session.ensure_ready()
            cpu, wall = time.process_time(), time.perf_counter()
            async for exchange in run_in_order(session, cases, window=window):
                runner.judge(PhaseName.CATALOGUE, exchange)
            cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
        if runner.findings.all():
            NOTES.append(f"pings: {len(runner.findings.all())} findings on a clean server")
        return count / wall, cpu / count * 1e6

    return anyio.run(main)


def fuzz_split(command: Target, seconds: float, exclude: tuple[str, ...] = ()) -> tuple[float, dict[str, float]]:
    """Judged tool calls per second of the fuzz phase, and the microseconds per call of each part of a call
    (`mcpfuzz.jsonrpc.call_split`), with "rest" what the parts leave of the wall time.

    The parts are summed from the first judged tool call to the last (the frame searches before it are left out).
    """
    from mcpfuzz.jsonrpc.call_split import PARTS, SPLIT

    marks: dict[str, float] = {}
    calls = 0

    def listen(event: object) -> None:
        nonlocal calls
        if isinstance(event, CaseDone) and event.phase == "fuzz" and event.exchange.case.family == TOOL_FAMILY:
            now = time.perf_counter()
            if "start" not in marks:
                marks["start"] = now
                marks["cpu start"] = time.process_time()
                SPLIT.start()
                return
            marks["end"] = now
            marks["cpu end"] = time.process_time()
            calls += 1

    # More margin than fuzz_calls: on a loaded machine the frame searches before the tools take longer.
    budget = seconds / (1.0 - FRAME_SHARE) + 4.0
    try:
        _checked(anyio.run(run, _config(command, ("probe", "fuzz"), budget, exclude), listen), "split")
    finally:
        totals = SPLIT.stop()
    if not calls:
        return 0.0, dict.fromkeys((*PARTS, "rest", "cpu"), 0.0)
    wall = marks["end"] - marks["start"]
    parts = {part: totals[part] / calls * 1e6 for part in PARTS}
    parts["rest"] = wall / calls * 1e6 - sum(parts.values())
    # mcpfuzz's own CPU (both threads) per call: what a loaded machine changes least.
    parts["cpu"] = (marks["cpu end"] - marks["cpu start"]) / calls * 1e6
    return calls / wall, parts
