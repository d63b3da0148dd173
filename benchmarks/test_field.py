"""The field benchmark's own instruments: the start-up clock, the sandbox, and what it reads from events.

Run: python -m pytest benchmarks/test_field.py (not in the default testpaths: it is the benchmark's).
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import field  # noqa: E402

SLOW_SERVER = [sys.executable, str(HERE.parent / "tests" / "servers" / "slow_many_tools.py")]


def sandbox_works() -> bool:
    """Whether this machine lets us make namespaces (root, unshare present)."""
    try:
        done = subprocess.run(field.sandboxed(["true"]), capture_output=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return done.returncode == 0


def test_the_start_up_clock_waits_for_the_answer_to_initialize() -> None:
    seconds = field.time_stdio_start([*SLOW_SERVER, "--startup-delay", "1", "--tools", "2"], {},
                                     time.monotonic() + 120)
    assert seconds >= 1.0  # the server reads nothing before its delay is over
    assert not field._STARTED


def test_a_server_that_exits_at_once_is_an_error_not_a_wait() -> None:
    with pytest.raises(RuntimeError, match="before answering"):
        field.time_stdio_start([sys.executable, "-c", "pass"], {}, time.monotonic() + 120)


@pytest.mark.skipif(not sandbox_works(), reason="needs unshare (root)")
def test_the_sandbox_has_loopback_only() -> None:
    done = subprocess.run(field.sandboxed(["cat", "/proc/net/dev"]), capture_output=True, text=True, timeout=30)
    interfaces = [line.split(":")[0].strip() for line in done.stdout.splitlines() if ":" in line]
    assert interfaces == ["lo"]


@pytest.mark.skipif(not sandbox_works(), reason="needs unshare (root)")
def test_nothing_started_in_the_sandbox_outlives_it() -> None:
    sleeper = f"sleep {300 + os.getpid() % 1000 / 1000:.3f}"  # a command line no other process has
    # The sleeper is a grandchild in a group of its own: only the PID namespace's end can reach it.
    process = field.start(field.sandboxed(["sh", "-c", f"setsid {sleeper} & wait"]))
    deadline = time.monotonic() + 60
    while not pgrep(sleeper):
        assert time.monotonic() < deadline, "the sleeper never started"
        time.sleep(0.05)
    field.end(process)
    deadline = time.monotonic() + 60
    while pgrep(sleeper):
        assert time.monotonic() < deadline, "a process of the sandbox outlived it"
        time.sleep(0.05)


def pgrep(command: str) -> list[str]:
    """Pids of processes whose whole command line is `command`."""
    return subprocess.run(["pgrep", "-x", "-f", command], capture_output=True, text=True).stdout.split()


def event(kind: str, timestamp: float, **members: Any) -> dict[str, Any]:
    return {"event": kind, "timestamp": timestamp, **members}


def case(phase: str, target: str, timestamp: float) -> dict[str, Any]:
    return event("CaseDone", timestamp, phase=phase, case={"target": target})


EVENTS = [
    event("RunStarted", 0.0),
    event("PhaseStarted", 0.0, name="probe"),
    event("PhaseStarted", 4.0, name="catalogue"),
    event("TargetsPlanned", 5.0, fuzzed=["tool/a", "tool/b"],
          skipped=[["tool/c", "not prepared in time"], ["tool/d", "--exclude-tool"]]),
    event("PhaseStarted", 6.0, name="coverage"),
    case("coverage", "tool/a", 6.5),
    case("catalogue", "tool/b", 6.6),  # not a calling phase
    event("PhaseStarted", 7.0, name="fuzz"),
    case("fuzz", "tool/a", 7.5),
    case("fuzz", "frames/id", 7.6),  # not a target
    event("PhaseStarted", 9.0, name="finishing"),
    event("RunFinished", 10.0, stats={"restarts": 3}, findings=["x"]),
]


def test_targets_calls_and_reasons_come_from_the_events() -> None:
    row = field.Row("s", "sdk", "stdio", 1.0)
    field.fill_targets(row, EVENTS, set())
    assert (row.declared, row.prepared, row.called) == (4, 2, 1)
    assert row.calls == {"tool/a": 2}
    assert row.uncalled == {"tool/b": "planned, never called", "tool/c": "not prepared in time",
                            "tool/d": "--exclude-tool"}
    assert (row.calls_min, row.calls_median) == (0, 0)  # over a, b and c: the excluded d does not count


def test_the_calling_share_is_coverage_fuzz_and_stateful_over_the_whole_run() -> None:
    assert field.call_share(EVENTS) == pytest.approx(0.3)
    assert field.phase_seconds(EVENTS) == {"probe": 4.0, "catalogue": 2.0, "coverage": 1.0, "fuzz": 2.0,
                                           "finishing": 1.0}


def test_a_run_ended_before_planning_has_its_probed_tools_uncalled() -> None:
    events = [event("ProbeDone", 1.0, tools=["a", "b"])]
    row = field.Row("s", "sdk", "stdio", 1.0)
    field.fill_targets(row, events, {"tool/b"})
    assert row.declared == 2 and row.called == 0 and row.calls_min == 0
    assert row.uncalled["tool/b"] == "--exclude-tool"


def test_root_causes_group_by_fingerprint_and_stdout_lines_by_their_writer() -> None:
    findings: list[dict[str, Any]] = [
        {"oracle": "no-crash", "fingerprint": "f1"},
        {"oracle": "no-crash", "fingerprint": "f1"},
        {"oracle": "no-hang", "fingerprint": "f1"},
        {"oracle": "stdout-clean", "fingerprint": "a", "received": ["loaded 12 items from /tmp/x/y.json"]},
        {"oracle": "stdout-clean", "fingerprint": "b", "received": ["loaded 3 items from /home/u/z.json"]},
        {"oracle": "stdout-clean", "fingerprint": "c", "received": ["ready"]},
    ]
    assert len({field.root_cause(finding) for finding in findings}) == 3
