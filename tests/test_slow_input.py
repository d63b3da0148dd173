"""`slow-input`: a call far slower than its target's usual, seen slow twice, reported with its shrunk input; a tool
that is always slow, and a clean calculator, give nothing."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import anyio
import pytest

from mcpfuzz.engine.config import RunConfig
from mcpfuzz.engine.events import RunFinished
from mcpfuzz.engine.runner import run
from mcpfuzz.engine.searches.slow_calls import SLOW_FLOOR, SlowWatch, latency_score, own_seconds, slow_beside
from mcpfuzz.engine.session.starvation import RunQueueWaits
from mcpfuzz.oracles.base import all_oracles

pytestmark = pytest.mark.slow

SLOW_SERVER = Path(__file__).parent / "servers" / "slow_input_server.py"


def test_a_target_is_judged_on_time_only_once_it_has_a_median() -> None:
    """No limit before five answers; then 20 times the median, never below one second."""
    watch = SlowWatch()
    for _ in range(4):
        watch.note("tool/a", 0.01)
    assert watch.limit("tool/a") is None and not watch.is_slow("tool/a", 60.0)
    watch.note("tool/a", 0.01)
    assert watch.limit("tool/a") == SLOW_FLOOR
    for _ in range(5):
        watch.note("tool/b", 0.5)
    assert watch.limit("tool/b") == 10.0
    assert watch.is_slow("tool/b", 10.5) and not watch.is_slow("tool/b", 9.0) and not watch.is_slow("tool/b", None)


def test_only_answers_past_the_floor_steer_the_search() -> None:
    """Fast answers report no latency target (a fast server's draws stay as they were)."""
    assert latency_score(0.1) is None and latency_score(float("inf")) is None
    assert latency_score(1.54) == 1.5


def test_a_repeat_is_slow_only_when_far_slower_than_the_simplest_call_timed_on_each_side() -> None:
    """A machine slow all along slows the neighbours too; a stall of it makes one call slow, not its neighbours."""
    assert slow_beside(1.5, 1.0, 0.01, 0.02)
    assert not slow_beside(0.9, 1.0, 0.01, 0.01)  # under the target's limit
    assert not slow_beside(1.5, 1.0, 0.01, 0.6)  # a neighbour past half the limit: the machine was slow then
    assert not slow_beside(1.5, 1.0, 0.4, 0.01)  # under five times the slower neighbour
    assert slow_beside(2.5, 1.0, 0.4, 0.01)
    assert not slow_beside(None, 1.0, 0.01, 0.01) and not slow_beside(1.5, 1.0, None, 0.01)
    assert not slow_beside(1.5, 1.0, 0.01, None)
    # A repeat's own time: an answer 5.7 s late of which its server waited 5.2 s for a CPU took 0.5 s of its own.
    assert own_seconds(5.7, 5.2) == pytest.approx(0.5) and not slow_beside(own_seconds(5.7, 5.2), 1.0, 0.01, 0.01)
    assert own_seconds(1.5, 0.0) == 1.5 and own_seconds(0.2, 0.5) == 0.0 and own_seconds(None, 0.1) is None


# Says it is ready once started; then spins for `seconds` of CPU (or sleeps) on each line, says so, and waits for
# the next line (its threads can still be read).
READY = "import sys, time\nprint('ready', flush=True)\nfor _ in sys.stdin:\n"
SPINNER = READY + ("    end = time.process_time() + {seconds}\n    while time.process_time() < end:\n        pass\n"
                   "    print('done', flush=True)\n")
SLEEPER = READY + "    time.sleep({seconds})\n    print('done', flush=True)\n"


def waited_for_a_cpu(program: str, *, beside_a_hog: bool) -> float:
    """How long the process running `program` waited for a CPU while it handled one line (`RunQueueWaits`); with
    `beside_a_hog`, it and a process that never stops spinning share one CPU."""
    if not RunQueueWaits.take(os.getpid()):
        pytest.skip("the kernel gives no per-thread schedstat")
    cpu = min(os.sched_getaffinity(0))
    started = [subprocess.Popen([sys.executable, "-c", program], stdin=subprocess.PIPE, stdout=subprocess.PIPE)]
    try:
        if beside_a_hog:
            started.append(subprocess.Popen([sys.executable, "-c", "while True: pass"]))
            for process in started:
                os.sched_setaffinity(process.pid, {cpu})
        worker = started[0]
        assert worker.stdin is not None and worker.stdout is not None
        assert worker.stdout.readline() == b"ready\n"  # its start waited for a CPU too: not counted
        before = RunQueueWaits.take(worker.pid)
        worker.stdin.write(b"go\n")
        worker.stdin.flush()
        assert worker.stdout.readline() == b"done\n"
        after = RunQueueWaits.take(worker.pid)
        assert after is not None
        return after.longest_since(before)
    finally:
        for process in started:
            process.kill()
            process.wait()


def test_a_server_sharing_its_cpu_waits_for_it_and_a_sleeping_one_does_not() -> None:
    """Half a second of work beside a spinning process on one CPU waits about as long again for it; a second of
    sleep is no wait for a CPU (a slow answer of its own stays slow)."""
    assert waited_for_a_cpu(SPINNER.format(seconds=0.5), beside_a_hog=True) >= 0.2
    assert waited_for_a_cpu(SLEEPER.format(seconds=1.0), beside_a_hog=False) < 0.5


def slow_run(tmp_path: Path, *extra: str) -> RunFinished:
    """The coverage phase alone: it sends the description's example (nested powers) and every target's simplest
    and boundary calls, each target often enough for a median, and ends by its calls, not by a budget."""
    config = RunConfig(command=[sys.executable, str(SLOW_SERVER), *extra], seed=1, budget=300.0, timeout=5.0,
                       oracles=tuple(all_oracles()), phases=("probe", "coverage"), corpus=tmp_path / "corpus")
    return anyio.run(run, config, lambda event: None)


def test_nested_powers_are_a_slow_input_with_the_input_that_makes_them_slow(tmp_path: Path) -> None:
    """calc's nested powers are found (the description's example seeds them), verified on a fresh server, and
    saved with the expression; the steadily slow render tool is not a slow input."""
    finished = slow_run(tmp_path)
    slow = [finding for finding in finished.findings if finding.oracle == "slow-input"]
    assert [finding.target for finding in slow] == ["tool/calc"], [(f.oracle, f.target) for f in finished.findings]
    assert slow[0].reproducible is True
    saved = [json.loads(path.read_text(encoding="utf-8")) for path in (tmp_path / "corpus").glob("*slow-input*.json")]
    assert len(saved) == 1 and saved[0]["case"]["expect"]["extra"]["slow_after"] >= SLOW_FLOOR
    calls = [json.loads(frame) for frame in saved[0]["frames"] if '"tools/call"' in frame]
    assert calls and calls[-1]["params"]["arguments"]["expression"].count("**") >= 2


def test_a_clean_calculator_and_a_steadily_slow_tool_give_no_finding(tmp_path: Path) -> None:
    """render takes half a second on every call, calc refuses nested powers at once: zero findings."""
    finished = slow_run(tmp_path, "--clean")
    assert [(f.oracle, f.target) for f in finished.findings] == []
