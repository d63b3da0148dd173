"""`memory-growth`: the resource sampler on real process trees, the slope oracle on synthetic series,
and both together on real servers driven by a minimal raw stdio client.

The real-process soaks last MCPFUZZ_SOAK_SECONDS each (default 3), and at least 40 samples of 50 calls (the
issue's 5-minute check of the SDK server is `MCPFUZZ_SOAK_SECONDS=300 pytest tests/test_memory_growth.py -k sdk -s`).
With `-s` each soak prints its figures: calls, seconds, when a leak was detected, and the margin below the floors.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import math
import os
import queue
import random
import shutil
import signal
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import Any

import pytest

from mcpfuzz.engine.monitor.resources import ResourceSampler, Sample
from mcpfuzz.jsonrpc.versions import LATEST_LEGACY, modern_meta
from mcpfuzz.oracles.base import Scope, Severity, all_oracles, run_checks
from mcpfuzz.oracles.memory import (
    DEFAULT_LIMITS,
    KIB,
    MIB,
    GrowthLimits,
    MemoryGrowthFailure,
    judge_growth,
    measure_growth,
)
from tests.conftest import REPO_ROOT, SERVERS_DIR

pytestmark = pytest.mark.slow

LEAKY_SERVER = SERVERS_DIR / "leaky_server.py"
TOOL_SERVER = SERVERS_DIR / "tool_server.py"
SDK2_SERVER = REPO_ROOT / "tests" / "sdk_servers" / "sdk2_server.py"
SOAK_SECONDS = float(os.environ.get("MCPFUZZ_SOAK_SECONDS", "3"))
SAMPLE_EVERY = 50  # tool calls between two samples
MIN_SOAK_SAMPLES = 40  # a clean soak goes on past its time until it has this many (a busy machine is slow)
SOAK_HARD_LIMIT = 90.0  # seconds, whatever happens
LEAK_BOUND_SECONDS = 20.0
LEAK_MAX_CALLS = 5000  # at 100 KB a call the leaky server holds at most ~500 MB
REPLY_TIMEOUT = 10.0

# ---- synthetic series ---------------------------------------------------------------------------

BASE = 60 * MIB


def series(shape: Callable[[float], float], *, samples: int = 40, per: int = 50, noise: float = MIB,
           seed: int = 0) -> list[Sample]:
    """RSS = shape(share of the run done) + Gaussian noise, in whole pages, one sample per `per` requests."""
    rng = random.Random(seed)
    points = []
    for i in range(samples):
        rss = int(shape(i / (samples - 1)) + rng.gauss(0, noise))
        points.append(Sample(t=i * 0.5, requests=i * per, rss=max(rss, 0) // 4096 * 4096, fds=10))
    return points


def leak(per_request: float, *, per: int = 50, samples: int = 40) -> Callable[[float], float]:
    """A leak of `per_request` bytes per request."""
    return lambda share: BASE + per_request * share * per * (samples - 1)


SEEDS = range(25)


@pytest.mark.parametrize("noise", [0, 0.3 * MIB, 2 * MIB])
def test_a_linear_leak_is_found_with_its_figures(noise: float) -> None:
    """100 KB per request over 2000 requests: found, the slope within 5%, the message in plain figures."""
    for seed in SEEDS:
        growth = judge_growth(series(leak(100 * KIB), noise=noise, seed=seed))
        assert growth is not None, seed
        assert growth.slope == pytest.approx(100 * KIB, rel=0.05)
        assert growth.tail_slope == pytest.approx(100 * KIB, rel=0.15)
    exact = judge_growth(series(leak(100 * KIB), noise=0))
    assert exact is not None
    assert exact.requests == 1950 - 400  # the warm-up (first 20% of the requests) is not judged
    text = exact.message()
    assert "grew 1" in text and "over 1550 requests" in text and "about 100 KB per request" in text
    assert "still growing" in text


def test_a_v8_heap_warming_up_is_not_a_leak_but_a_leak_past_it_is() -> None:
    """A Node.js server's RSS climbs ~50-60 MB over its first thousands of requests (the reference TypeScript
    servers measured) before its first full collection: under the V8 warm-up floor, no leak; the same slope
    carried past it is one."""
    from dataclasses import replace

    def on_v8(points: list[Sample]) -> list[Sample]:
        return [replace(point, v8=True) for point in points]

    warming = series(leak(30 * KIB), per=50)  # ~57 MB in all, ~45 MB after the warm-up share
    assert judge_growth(warming) is not None  # a leak in a process that does not run V8
    assert judge_growth(on_v8(warming)) is None
    long_leak = on_v8(series(leak(30 * KIB, per=200), per=200))  # the same slope over 7,800 requests
    growth = judge_growth(long_leak)
    assert growth is not None and growth.v8 and growth.growth > DEFAULT_LIMITS.v8_heap_warmup


def test_the_sampler_tells_a_v8_process_tree() -> None:
    """A tree with a node process in it samples as V8; a Python one does not."""
    if shutil.which("node") is None:
        pytest.skip("no node on this machine")
    for command, v8 in (([sys.executable, "-c", "import time; time.sleep(30)"], False),
                        (["node", "-e", "setTimeout(() => {}, 30000)"], True)):
        process = subprocess.Popen(command)
        try:
            deadline = time.monotonic() + 10
            sample = ResourceSampler(process.pid).sample(0)
            while sample is not None and sample.v8 != v8 and time.monotonic() < deadline:
                time.sleep(0.05)  # the name is the program's only once it has exec'd
                sample = ResourceSampler(process.pid).sample(0)
            assert sample is not None and sample.v8 is v8
        finally:
            process.kill()
            process.wait()


def test_a_slow_leak_just_above_the_floor_is_found() -> None:
    """30 KB per request (floor 20) over 2000 requests with 1 MB of noise."""
    found = sum(judge_growth(series(leak(30 * KIB), seed=seed)) is not None for seed in SEEDS)
    assert found == len(SEEDS)


def test_growth_below_the_per_request_floor_is_not_a_leak() -> None:
    """Steady state growth of 5 KB per request (a store of small records) is not a leak: under the floor."""
    growth = measure_growth(series(leak(5 * KIB), noise=0.1 * MIB))
    assert growth is not None and growth.trend_z > DEFAULT_LIMITS.z_critical  # it does grow...
    assert not growth.leaking()  # ...but slower than a leak


def test_growth_below_the_absolute_floor_is_not_a_leak() -> None:
    """A 50 KB-per-request slope over only 62 requests after warm-up (3 MB) is under the 8 MB floor."""
    growth = measure_growth(series(leak(50 * KIB, per=2), per=2, noise=0.05 * MIB))
    assert growth is not None and growth.slope == pytest.approx(50 * KIB, rel=0.1)
    assert not growth.leaking()
    assert growth.leaking(GrowthLimits(min_growth=2 * MIB))


@pytest.mark.parametrize("noise", [0.3 * MIB, 2 * MIB, 8 * MIB])
def test_flat_memory_with_noise_is_not_a_leak(noise: float) -> None:
    """Memory that only jitters."""
    for seed in SEEDS:
        assert judge_growth(series(lambda share: BASE, noise=noise, seed=seed)) is None, seed


@pytest.mark.parametrize("ramp_end", [0.1, 0.3, 0.5, 0.6, 0.7])
def test_a_warm_up_ramp_then_a_plateau_is_not_a_leak(ramp_end: float) -> None:
    """100 MB gained over the first part of the run, then flat (caches filled, a heap sized up)."""
    def shape(share: float) -> float:
        return BASE + min(share, ramp_end) / ramp_end * 100 * MIB

    for seed in SEEDS:
        growth = measure_growth(series(shape, seed=seed))
        assert growth is not None and not growth.leaking(), (seed, growth)
    if ramp_end >= 0.5:  # the ramp reaches past the warm-up, so the window as a whole does rise
        assert growth.slope > DEFAULT_LIMITS.min_slope and growth.tail_z < DEFAULT_LIMITS.z_critical


def test_a_v8_heap_that_plateaus_is_judged_with_its_plateau_in_view() -> None:
    """The shape seen on a real Node.js server over HTTP: the heap climbs to ~298 MB over its first 9,000 requests,
    then gains 7 MB over the next 27,000. Judged at 9,000 requests it looks like a leak; judged on the whole
    series (as the monitor does, once the process' series has ended) it is no leak."""
    from dataclasses import replace

    def heap(requests: float) -> float:
        return 60 * MIB + min(requests, 9_000) / 9_000 * 238 * MIB + max(requests - 9_000, 0) / 27_000 * 7 * MIB

    rng = random.Random(5)
    points = [replace(Sample(t=i, requests=i * 100, rss=int(heap(i * 100) + rng.gauss(0, MIB)) // 4096 * 4096,
                             fds=10), v8=True) for i in range(361)]
    climbing = judge_growth(points[:91])  # the first 9,000 requests
    assert climbing is not None and climbing.v8
    assert judge_growth(points) is None


def test_a_heap_saturating_slowly_is_levelling_off_not_leaking() -> None:
    """1.2 GB approached exponentially (5,000 requests a step of e) over 12,000 requests: its last third still
    rises past the slope floor, significantly, but its late half rises at under half its early half's slope: the
    plateau model fits, so it is no leak; a linear leak of the same early slope keeps it and is one."""
    from dataclasses import replace

    for seed in SEEDS:
        rng = random.Random(seed)
        saturating = [replace(Sample(t=i, requests=i * 100, rss=int(
            60 * MIB + 1200 * MIB * (1 - math.exp(-i * 100 / 5000)) + rng.gauss(0, MIB)) // 4096 * 4096, fds=10),
            v8=True) for i in range(121)]
        growth = measure_growth(saturating)
        assert growth is not None, seed
        assert growth.tail_slope >= DEFAULT_LIMITS.min_slope and growth.tail_z >= DEFAULT_LIMITS.z_critical, growth
        assert growth.late_slope < DEFAULT_LIMITS.plateau_ratio * growth.early_slope, growth
        assert growth.levelling_off() and not growth.leaking(), growth
    linear = judge_growth(series(leak(96 * KIB, per=100, samples=121), per=100, samples=121))
    assert linear is not None and not linear.levelling_off()


@pytest.mark.parametrize("teeth", [1.5, 2, 5, 12])
def test_a_gc_sawtooth_is_not_a_leak(teeth: float) -> None:
    """40 MB gained and given back by each collection, a flat envelope."""
    for seed in SEEDS:
        growth = judge_growth(series(lambda share: BASE + (share * teeth) % 1 * 40 * MIB, seed=seed))
        assert growth is None, (seed, growth)


@pytest.mark.parametrize("step_at", [0.1, 0.3, 0.5, 0.6, 0.65, 0.7, 0.8, 0.9, 0.97])
def test_a_single_step_then_flat_is_not_a_leak(step_at: float) -> None:
    """One allocation of 200 MB (a lazy import, a big cache built once) wherever it falls in the run."""
    for seed in SEEDS:
        growth = judge_growth(series(lambda share: BASE + (200 * MIB if share >= step_at else 0), seed=seed))
        assert growth is None, (seed, growth)


def test_a_leak_under_a_sawtooth_is_found() -> None:
    """A 60 KB-per-request leak under a 40 MB GC sawtooth, once the last third gains more than a tooth.

    Over 2000 requests the last third gains ~30 MB, less than one tooth, and the oracle waits; over 4000
    (~75 MB) it is found whatever the number of teeth.
    """
    for teeth in (6, 12, 24):
        def shape(share: float, teeth: float = teeth) -> float:
            return leak(60 * KIB, samples=80)(share) + (share * teeth) % 1 * 40 * MIB

        for seed in SEEDS:
            growth = judge_growth(series(shape, samples=80, seed=seed))
            assert growth is not None and growth.slope == pytest.approx(60 * KIB, rel=0.1), (teeth, seed)
    short = measure_growth(series(lambda share: leak(60 * KIB)(share) + (share * 6) % 1 * 40 * MIB))
    assert short is not None and short.slope > DEFAULT_LIMITS.min_slope and not short.leaking()


def test_too_few_samples_say_nothing() -> None:
    """Fewer than 16 samples after warm-up, or no requests at all in between: no verdict either way."""
    assert measure_growth([]) is None
    assert measure_growth(series(leak(500 * KIB), samples=19, noise=0)) is None  # 15 left after warm-up
    assert judge_growth(series(leak(500 * KIB), samples=20, noise=0)) is not None
    idle = [Sample(t=i, requests=100, rss=BASE + i * MIB, fds=3) for i in range(40)]
    assert measure_growth(idle) is None  # growth without requests is not request-driven growth


def test_a_long_series_is_thinned_and_still_judged() -> None:
    """10,000 samples (hours of soak) are judged on 240 of them: the fit's cost is bounded whatever the length (the
    count of points judged says so; the time it takes depends on the machine and is not asserted)."""
    points = series(leak(40 * KIB, per=5, samples=10_000), samples=10_000, per=5, noise=0.5 * MIB)
    growth = judge_growth(points)
    assert growth is not None and growth.samples == 240
    assert growth.slope == pytest.approx(40 * KIB, rel=0.05)


def test_the_oracle_is_registered_and_silent_on_single_exchanges() -> None:
    """Registered as a run-level oracle: a leak is judged on the series, so run_checks yields nothing."""
    oracle = all_oracles()["memory-growth"]
    assert oracle.failure is MemoryGrowthFailure
    assert (oracle.scope, oracle.check, oracle.severity) == (Scope.RUN, None, Severity.HIGH)
    growth = judge_growth(series(leak(100 * KIB)))
    assert growth is not None
    failure = MemoryGrowthFailure(growth)
    assert (failure.oracle, failure.severity, failure.key, failure.server_wide) == (
        "memory-growth", Severity.HIGH, "leak", True)
    assert failure.growth is growth and failure.message == growth.message()
    exchange = SimpleNamespace(crash=None)  # the check reads nothing of it
    assert list(run_checks(exchange, ["memory-growth"])) == []  # type: ignore[arg-type]


# ---- the sampler on real process trees ----------------------------------------------------------

HOLD = """
import sys
size = int(sys.argv[1])
kept = bytearray(size)
kept[::4096] = b"\\1" * len(range(0, size, 4096))
files = [open("/dev/null") for _ in range(int(sys.argv[2]))]
print("ready", flush=True)
sys.stdin.read()
"""
PARENT = """
import subprocess, sys
child = subprocess.Popen([sys.executable, "-c", sys.argv[1], sys.argv[2], sys.argv[3]])
child.wait()
"""


@contextlib.contextmanager
def started(argv: list[str], **kwargs: Any) -> Iterator[subprocess.Popen[bytes]]:
    """A process in its own group, killed with its whole group on the way out."""
    process = subprocess.Popen(argv, start_new_session=True, **kwargs)
    try:
        yield process
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
        process.wait(timeout=10)


def test_the_sampler_sums_rss_and_fds_over_the_whole_tree() -> None:
    """A parent whose child holds 64 MB and 40 extra files: the tree sample sees both, the root alone not."""
    argv = [sys.executable, "-c", PARENT, HOLD, str(64 * MIB), "40"]
    with started(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE) as parent:
        assert parent.stdout is not None and parent.stdout.readline() == b"ready\n"
        whole = ResourceSampler(parent.pid).sample(requests=7)
        alone = ResourceSampler(parent.pid, tree=False).sample(requests=7)
    assert whole is not None and alone is not None
    assert (whole.requests, whole.processes, alone.processes) == (7, 2, 1)
    assert whole.rss - alone.rss > 64 * MIB
    assert whole.fds is not None and alone.fds is not None and whole.fds - alone.fds >= 40
    assert whole.threads >= 2


def test_children_that_come_and_go_never_break_a_sample() -> None:
    """A shell that forks short-lived children non-stop: every sample succeeds, some see a child."""
    argv = ["sh", "-c", "while :; do sleep 0.001 & wait; /bin/true; done"]
    with started(argv) as shell:
        sampler = ResourceSampler(shell.pid)
        samples = [sampler.sample(i) for i in range(300)]
    assert all(s is not None for s in samples)
    assert max(s.processes for s in samples if s is not None) >= 2


def test_a_gone_process_samples_as_none() -> None:
    """After the root exits (reaped or not), sample() is None, never an exception."""
    with started([sys.executable, "-c", "pass"]) as process:
        sampler = ResourceSampler(process.pid)
        deadline = time.monotonic() + 10
        while sampler.sample(0) is not None and time.monotonic() < deadline:
            time.sleep(0.05)  # a zombie until reaped: already None
        assert sampler.sample(0) is None
    assert sampler.sample(1) is None  # reaped
    assert ResourceSampler(process.pid).sample(0) is None


# ---- real servers under a raw stdio client -------------------------------------------------------


class RawClient:
    """Newline-delimited JSON-RPC over a server's stdin/stdout; a thread reads so no read blocks forever."""

    def __init__(self, process: subprocess.Popen[bytes], *, modern: bool) -> None:
        self.process = process
        self.modern = modern
        self.ids = itertools.count(1)
        self.lines: queue.Queue[bytes] = queue.Queue()
        threading.Thread(target=self._pump, daemon=True).start()

    def _pump(self) -> None:
        assert self.process.stdout is not None
        for line in iter(self.process.stdout.readline, b""):
            self.lines.put(line)
        self.lines.put(b"")

    def send(self, method: str, params: dict[str, Any], *, notify: bool = False) -> dict[str, Any] | None:
        """Send one message; for a request, wait for the response with its id."""
        if self.modern:
            params = {**params, "_meta": modern_meta()}
        message: dict[str, Any] = {"jsonrpc": "2.0", "method": method, "params": params}
        rid = None if notify else next(self.ids)
        if rid is not None:
            message["id"] = rid
        assert self.process.stdin is not None
        self.process.stdin.write(json.dumps(message).encode() + b"\n")
        self.process.stdin.flush()
        while rid is not None:
            line = self.lines.get(timeout=REPLY_TIMEOUT)
            assert line, f"the server exited (status {self.process.poll()}) before answering {method}"
            reply = json.loads(line)
            if reply.get("id") == rid:
                assert "result" in reply, reply
                return reply["result"]
        return None

    def handshake(self) -> None:
        """server/discover (modern) or the initialize handshake (legacy)."""
        if self.modern:
            self.send("server/discover", {})
            return
        self.send("initialize", {"protocolVersion": LATEST_LEGACY, "capabilities": {},
                                 "clientInfo": {"name": "memory-test", "version": "0"}})
        self.send("notifications/initialized", {}, notify=True)


def tool_server_calls() -> Iterator[tuple[str, dict[str, Any]]]:
    """search, then create / read / delete an item: state churns, only small tombstones stay."""
    for n in itertools.count():
        yield "search", {"query": f"q{n % 97}", "limit": 1 + n % 10}
        yield "create_item", {"name": f"item {n}", "kind": "a"}
        yield "get_item", {"id": str(uuid.UUID(int=n))}
        yield "delete_item", {"id": str(uuid.UUID(int=n))}


def sdk_calls() -> Iterator[tuple[str, dict[str, Any]]]:
    """The three tools of sdk2_server.py, a domain error among them."""
    for n in itertools.count():
        yield "echo", {"text": f"hello {n}"}
        yield "add", {"a": n, "b": 2}
        yield "lookup", {"id": "a1" if n % 2 else "zz"}


@dataclass
class Soak:
    """What one soak saw: the server's samples, the driver's own, and when a leak was first judged."""

    server: list[Sample] = field(default_factory=list)
    own: list[Sample] = field(default_factory=list)
    calls: int = 0
    seconds: float = 0.0
    detected: tuple[int, float] | None = None  # (calls, seconds) at the first sample judged a leak

    def report(self, name: str) -> str:
        """One line of figures for the test log."""
        growth = measure_growth(self.server)
        own = measure_growth(self.own)
        text = f"{name}: {self.calls} calls in {self.seconds:.1f} s, {len(self.server)} samples"
        if self.detected:
            text += f"; leak judged after {self.detected[0]} calls, {self.detected[1]:.1f} s"
        if growth:
            text += (f"; server slope {growth.slope / KIB:.2f} KB/call (floor {DEFAULT_LIMITS.min_slope / KIB:.0f}),"
                     f" growth {growth.growth / MIB:.2f} MB (floor {DEFAULT_LIMITS.min_growth / MIB:.0f}),"
                     f" z {growth.trend_z:.1f}, tail z {growth.tail_z:.1f}")
        rss = [s.rss for s in self.own]
        text += f"; driver RSS {rss[0] / MIB:.1f} -> {rss[-1] / MIB:.1f} MB (max {max(rss) / MIB:.1f})"
        if own:
            text += f", driver slope {own.slope:.1f} B/call"
        return text


def soak(argv: list[str], calls: Iterator[tuple[str, dict[str, Any]]], *, modern: bool, seconds: float,
         stop_on_leak: bool = False, max_calls: int | None = None) -> Soak:
    """Call tools for `seconds` (and at least MIN_SOAK_SAMPLES samples), sampling every SAMPLE_EVERY calls."""
    result = Soak()
    with started(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL) as process:
        client = RawClient(process, modern=modern)
        client.handshake()
        server, own = ResourceSampler(process.pid), ResourceSampler(os.getpid(), tree=False)
        began = time.monotonic()
        while (time.monotonic() - began < seconds or len(result.server) < MIN_SOAK_SAMPLES) \
                and time.monotonic() - began < max(seconds, SOAK_HARD_LIMIT) \
                and (max_calls is None or result.calls < max_calls):
            for name, arguments in itertools.islice(calls, SAMPLE_EVERY):
                client.send("tools/call", {"name": name, "arguments": arguments})
            result.calls += SAMPLE_EVERY
            sample, mine = server.sample(result.calls), own.sample(result.calls)
            assert sample is not None and mine is not None, "the server is gone"
            result.server.append(sample)
            result.own.append(mine)
            # Judged at every sample early on (when a leak is first seen matters), then every tenth (a
            # judgement of a long series costs ~25 ms, more than 50 calls).
            judge_now = len(result.server) <= 60 or len(result.server) % 10 == 0
            if result.detected is None and judge_now and judge_growth(result.server) is not None:
                result.detected = (result.calls, time.monotonic() - began)
                if stop_on_leak:
                    break
        result.seconds = time.monotonic() - began
    return result


def assert_driver_flat(result: Soak) -> None:
    """The driving process does not leak: no verdict against it, and under 4 MB gained after warm-up."""
    assert judge_growth(result.own) is None
    window = [s.rss for s in result.own[len(result.own) // 5:]]
    assert max(window) - window[0] < 4 * MIB, window


def test_a_server_leaking_100_kb_per_call_is_found_within_seconds() -> None:
    """leaky_server.py --leak-kb 100 (legacy era): judged a leak long before the 20 s bound."""
    argv = [sys.executable, str(LEAKY_SERVER), "--leak-kb", "100"]
    result = soak(argv, tool_server_calls(), modern=False, seconds=LEAK_BOUND_SECONDS, stop_on_leak=True,
                  max_calls=LEAK_MAX_CALLS)
    print(result.report("leaky_server --leak-kb 100"))
    assert result.detected is not None, result.report("no leak found")
    growth = judge_growth(result.server)
    assert growth is not None and growth.slope == pytest.approx(100 * KIB, rel=0.25)
    assert result.detected[0] <= 2000  # about 750 calls: 15 samples of 50, warm-up included


@pytest.mark.parametrize("leak_kb", [0, 5])
def test_the_same_server_without_a_leak_or_with_a_tiny_one_is_clean(leak_kb: int) -> None:
    """--leak-kb 0 is the clean tool server; 5 KB per call is a real but sub-floor growth: no finding."""
    argv = [sys.executable, str(LEAKY_SERVER), "--leak-kb", str(leak_kb)]
    result = soak(argv, tool_server_calls(), modern=False, seconds=SOAK_SECONDS)
    print(result.report(f"leaky_server --leak-kb {leak_kb}"))
    growth = measure_growth(result.server)
    assert growth is not None, "too few samples to judge: the soak proved nothing"
    assert result.detected is None and not growth.leaking()
    if leak_kb:
        assert growth.slope == pytest.approx(leak_kb * KIB, rel=0.5)  # the sampler does see it
    assert_driver_flat(result)


def assert_no_leak(result: Any, name: str) -> None:
    """A soak long enough to judge, no leak detected, a slope far below the floor, and a flat driver."""
    print(result.report(name))
    growth = measure_growth(result.server)
    assert growth is not None, "too few samples to judge: the soak proved nothing"
    assert result.detected is None and not growth.leaking()
    assert growth.slope < DEFAULT_LIMITS.min_slope / 4
    assert_driver_flat(result)


def test_the_clean_tool_server_is_not_a_leak() -> None:
    """tests/servers/tool_server.py, legacy era, search + create/get/delete in a loop."""
    result = soak([sys.executable, str(TOOL_SERVER)], tool_server_calls(), modern=False, seconds=SOAK_SECONDS)
    assert_no_leak(result, "tool_server")


@pytest.mark.sdk
def test_an_mcp_sdk_server_is_not_a_leak() -> None:
    """tests/sdk_servers/sdk2_server.py on mcp 2.x, modern era (server/discover, `_meta` on every request)."""
    pytest.importorskip("mcp.server.mcpserver")
    result = soak([sys.executable, str(SDK2_SERVER)], sdk_calls(), modern=True, seconds=SOAK_SECONDS)
    assert_no_leak(result, "sdk2_server")


# -- wired into `mcpfuzz run` ---------------------------------------------------------------------


def test_a_run_reports_a_leak_of_100_kb_per_call() -> None:
    """`mcpfuzz run` samples the server as it calls its tools and reports the leak once, observed. The stateful
    phase calls tools only (every call leaks), sampled four times a second: enough samples in a short run."""
    import anyio

    from mcpfuzz.engine.config import RunConfig
    from mcpfuzz.engine.runner import run

    config = RunConfig(command=[sys.executable, str(LEAKY_SERVER), "--leak-kb", "100"], seed=1, budget=12.0,
                       timeout=2.0, oracles=tuple(all_oracles()), phases=("probe", "stateful"), sample_every=0.25)
    finished = anyio.run(run, config, lambda event: None)
    leaks = [f for f in finished.findings if f.oracle == "memory-growth"]
    assert len(leaks) == 1, [f.oracle for f in finished.findings]
    assert leaks[0].observed and leaks[0].case is None and leaks[0].severity is Severity.HIGH
    assert finished.stats.resources is not None and finished.stats.resources["samples"] >= 16


# -- a real Node.js server under the engine's monitor, driven by request counts ----------------------

NODE_MEMORY_SERVER = SERVERS_DIR / "node_memory_server.js"
NODE_CALLS = 3000
NODE_SAMPLE_EVERY = 10  # calls between two samples: the cache below fills over the first 60 samples


def monitored_node_run(*args: str) -> tuple[list[Any], list[Sample]]:
    """NODE_CALLS calls of node_memory_server.js under a Monitor sampled every NODE_SAMPLE_EVERY calls, then the
    end of the run: the failures the monitor reported, and every sample it took."""
    import anyio

    from mcpfuzz.engine.monitor.monitor import Monitor, MonitorOptions
    from mcpfuzz.engine.session.session import Session, SessionOptions
    from mcpfuzz.transport.stdio_target import StdioTarget

    node = shutil.which("node")
    if node is None:
        pytest.skip("no node on this machine")
    failures: list[Any] = []
    samples: list[Sample] = []

    async def drive() -> None:
        target = StdioTarget((node, str(NODE_MEMORY_SERVER), *args))
        async with Session(target, SessionOptions(timeout=30.0, startup_timeout=60.0)) as session:
            # No clock: sampled only when told to, so the series is by request count whatever the machine's speed.
            monitor = Monitor(session, MonitorOptions(sample_every=float("inf")),
                              lambda failure, observed: failures.append(failure),
                              lambda pid, sample: samples.append(sample))
            await session.ensure_ready()
            for n in range(NODE_CALLS):
                if n % NODE_SAMPLE_EVERY == 0:
                    monitor.sample()
                await session.call("tools/call", {"name": "remember", "arguments": {"n": n}})
            monitor.sample()
            monitor.finish()

    anyio.run(drive)
    assert len(samples) == NODE_CALLS // NODE_SAMPLE_EVERY + 1 and all(sample.v8 for sample in samples)
    return failures, samples


@pytest.mark.skipif(shutil.which("node") is None, reason="no node on this machine")
def test_a_node_cache_that_fills_up_and_stops_growing_is_not_a_leak() -> None:
    """256 KB kept per call for the first 600 calls (150 MB, past the V8 floor), then nothing more: judged on the
    whole series the plateau shows, so no finding; judged while it filled, the same server looked like a leak."""
    failures, samples = monitored_node_run("--kb", "256", "--cap", "600")
    assert failures == []
    filling = measure_growth(samples[:60])  # the first 600 calls: what a judgement mid-fill saw
    assert filling is not None and filling.leaking(), filling
    whole = measure_growth(samples)
    assert whole is not None and not whole.leaking() and whole.levelling_off()
    assert samples[-1].rss - samples[60].rss < 32 * MIB  # it did stop growing


@pytest.mark.skipif(shutil.which("node") is None, reason="no node on this machine")
def test_a_node_server_leaking_per_call_is_found() -> None:
    """64 KB kept by every call, never freed: the monitor's one finding at the end of the run, slope measured."""
    failures, samples = monitored_node_run("--kb", "64")
    assert [failure.oracle for failure in failures] == ["memory-growth"]
    growth = failures[0].growth
    assert growth.v8 and growth.slope == pytest.approx(64 * KIB, rel=0.25)
    assert not growth.levelling_off()
