"""What the HTML report charts, gathered from the event stream as it passes, in bounded memory.

A soak runs for hours: every series keeps at most `MAX_POINTS` points (evenly thinned as it grows),
the per-process memory series at most `MAX_PROCESSES` server processes (each server's own line keeps
all its restarts), the table at most `MAX_TARGETS` rows.
Times are seconds since the run started (its `RunStarted`).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from mcpfuzz.engine.events import (
    CaseDone,
    Event,
    FindingFound,
    PhaseStarted,
    ProbeDone,
    ResourcesSampled,
    RunStarted,
    SliceDone,
    TargetsPlanned,
)
from mcpfuzz.jsonrpc.exchange import Exchange

MAX_POINTS = 2_000  # per series
MAX_PROCESSES = 20  # memory series kept (a server restarted after each crash has a pid per life)
MAX_TARGETS = 2_000  # rows of the per-target table; cases on further targets count under OTHER
MAX_FINDING_MARKS = 2_000  # findings on the timeline
MAX_RESTART_MARKS = 2_000  # restarts marked on a server's memory line
MAX_PHASE_MARKS = 200  # phase starts told by the events (a run has about ten)
OTHER = "(other targets)"


class Series:
    """Points in arrival order, thinned to at most `limit`: past it every second point goes and the stride doubles."""

    def __init__(self, limit: int = MAX_POINTS) -> None:
        self.limit = limit
        self.points: list[tuple[float, ...]] = []
        self._stride = 1
        self._seen = 0
        self._last: tuple[float, ...] | None = None

    def add(self, *point: float) -> None:
        """Keep every `stride`-th point (and always the latest, so a chart reaches the end of the run)."""
        self._seen += 1
        self._last = point
        if (self._seen - 1) % self._stride:
            return
        self.points.append(point)
        if len(self.points) > self.limit:
            self.points = self.points[::2]
            self._stride *= 2

    def all(self) -> list[tuple[float, ...]]:
        """The kept points, ending with the latest one seen."""
        if self._last is not None and (not self.points or self.points[-1] is not self._last):
            return [*self.points, self._last]
        return list(self.points)

    def __len__(self) -> int:
        return self._seen


class Buckets:
    """Counts per stretch of time (cases per second); neighbours merge when there are too many, so width grows."""

    def __init__(self, limit: int = MAX_POINTS, width: float = 1.0) -> None:
        self.limit = limit
        self.width = width
        self.counts: list[float] = []

    def add(self, at: float, count: float = 1.0) -> None:
        """`count` events at `at` seconds."""
        index = max(0, int(at / self.width))
        while index >= self.limit:
            self._merge()
            index = max(0, int(at / self.width))
        if index >= len(self.counts):
            self.counts.extend([0.0] * (index + 1 - len(self.counts)))
        self.counts[index] += count

    def spread(self, start: float, end: float, count: float) -> None:
        """`count` events evenly over [start, end) (a worker's slice: its cases are not told one by one)."""
        if end - start <= self.width:
            self.add((start + end) / 2, count)
            return
        steps = max(1, min(self.limit, int((end - start) / self.width)))
        for step in range(steps):
            self.add(start + (step + 0.5) * (end - start) / steps, count / steps)

    def rates(self) -> list[tuple[float, float]]:
        """(middle of the stretch, events per second); the last stretch, still filling, is left out if others exist."""
        counts = self.counts[:-1] if len(self.counts) > 1 else self.counts
        return [((i + 0.5) * self.width, n / self.width) for i, n in enumerate(counts)]

    def _merge(self) -> None:
        self.counts = [sum(self.counts[i:i + 2]) for i in range(0, len(self.counts), 2)]
        self.width *= 2


@dataclass
class TargetCounts:
    """What one target (or group of cases) was answered with."""

    cases: int = 0
    results: int = 0
    errors: int = 0  # JSON-RPC error answers
    tool_errors: int = 0  # results flagged isError
    timed_out: int = 0
    crashes: int = 0
    slices: int = 0
    new_behaviours: int = 0

    def count(self, exchange: Exchange) -> None:
        """One case's outcome, by its worst sign: a crash, silence, an error, a tool error, a result."""
        self.cases += 1
        answers = [arrival.incoming for arrival in exchange.arrivals]
        if exchange.crash is not None:
            self.crashes += 1
        elif exchange.timed_out:
            self.timed_out += 1
        elif any(incoming.is_error for incoming in answers):
            self.errors += 1
        elif any(incoming.is_result and isinstance(incoming.message.get("result"), dict)
                 and incoming.message["result"].get("isError") is True for incoming in answers):
            self.tool_errors += 1
        elif any(incoming.is_result for incoming in answers):
            self.results += 1


@dataclass(frozen=True)
class FindingMark:
    """A finding when first seen."""

    at: float
    severity: str
    oracle: str
    target: str
    fingerprint: str


@dataclass(frozen=True)
class PhaseMark:
    """A phase as the event stream told its start (the JSON report's plan has every phase's start and length)."""

    name: str
    at: float


@dataclass
class RunTimeline:
    """The handler-side record of a run: series over time and per-target counts (fed by `handle`)."""

    started: float | None = None
    latest: float = 0.0
    server_name: str = ""  # serverInfo name and version, from the probe
    memory: dict[int, Series] = field(default_factory=dict)  # pid -> (seconds, requests, rss bytes)
    # One series per server across its restarts (a worker's index under --workers, else 0): (seconds, rss bytes).
    servers: dict[int, Series] = field(default_factory=dict)
    restarts: dict[int, list[float]] = field(default_factory=dict)  # server -> when its root process changed
    phases: list[PhaseMark] = field(default_factory=list)
    cases: Buckets = field(default_factory=Buckets)
    behaviours: Series = field(default_factory=Series)  # (seconds, new behaviours so far)
    findings: list[FindingMark] = field(default_factory=list)
    targets: dict[str, TargetCounts] = field(default_factory=dict)
    planned: tuple[str, ...] = ()
    skipped: dict[str, str] = field(default_factory=dict)
    slices: int = 0
    new_behaviours: int = 0
    case_events: int = 0  # CaseDone seen: none in a soak with workers (their cases stay inside them)
    _planned: frozenset[str] = frozenset()
    _server_pid: dict[int, int] = field(default_factory=dict)

    def handle(self, event: Event) -> None:
        """Take what the charts and the table need from one event."""
        if self.started is None:
            self.started = event.timestamp
        at = self.elapsed(event.timestamp)
        self.latest = max(self.latest, at)
        if isinstance(event, RunStarted):
            self.started, self.latest = event.timestamp, 0.0
        elif isinstance(event, ProbeDone):
            info = event.server_info or {}
            self.server_name = f"{info.get('name', '')} {info.get('version', '')}".strip()
        elif isinstance(event, TargetsPlanned):
            self.planned = event.fuzzed
            self._planned = frozenset(event.fuzzed)
            self.skipped = dict(event.skipped[:MAX_TARGETS])
        elif isinstance(event, CaseDone):
            self.case_events += 1
            self.cases.add(at)
            self._row(self._group(event)).count(event.exchange)
        elif isinstance(event, ResourcesSampled):
            self._memory(event.pid).add(at, event.requests, event.rss)
            self._server_memory(event, at)
        elif isinstance(event, PhaseStarted) and len(self.phases) < MAX_PHASE_MARKS:
            self.phases.append(PhaseMark(str(event.name), at))
        elif isinstance(event, SliceDone):
            self._slice(event, at)
        elif isinstance(event, FindingFound) and len(self.findings) < MAX_FINDING_MARKS:
            finding = event.finding
            self.findings.append(FindingMark(at, str(finding.severity), finding.oracle, finding.target,
                                             finding.fingerprint))

    def elapsed(self, timestamp: float) -> float:
        """Seconds since the run started."""
        return max(0.0, timestamp - (self.started if self.started is not None else timestamp))

    def _slice(self, event: SliceDone, at: float) -> None:
        self.slices += 1
        self.new_behaviours += event.new_behaviours
        # The latest time seen, not the slice's own: several workers' slices arrive slightly out of order,
        # and a running total must not step back in time.
        self.behaviours.add(self.latest, self.new_behaviours)
        row = self._row(event.target)
        row.slices += 1
        row.new_behaviours += event.new_behaviours
        if not self.case_events:
            # Workers tell their slices, not their cases: the rate comes from the slices then.
            self.cases.spread(max(0.0, at - event.seconds), at, event.cases)
            row.cases += event.cases

    def _group(self, event: CaseDone) -> str:
        """A call target or frame family by its label; the catalogue's one-off cases grouped by phase."""
        target = event.exchange.case.target
        if target in self._planned or event.exchange.case.family == "frames":
            return target
        return f"{event.phase} cases"

    def _row(self, key: str) -> TargetCounts:
        row = self.targets.get(key)
        if row is None:
            key = key if len(self.targets) < MAX_TARGETS else OTHER
            row = self.targets.setdefault(key, TargetCounts())
        return row

    def _memory(self, pid: int) -> Series:
        series = self.memory.get(pid)
        if series is None:
            if len(self.memory) >= MAX_PROCESSES:
                # The shortest-lived process says least about growth; the newest is always kept.
                shortest = min(self.memory, key=lambda key: len(self.memory[key]))
                del self.memory[shortest]
            series = self.memory[pid] = Series()
        return series

    def _server_memory(self, event: ResourcesSampled, at: float) -> None:
        """The server's line: its root process's tree, whichever process that is since the last restart."""
        previous = self._server_pid.get(event.server)
        if previous is not None and previous != event.pid:
            marks = self.restarts.setdefault(event.server, [])
            if len(marks) < MAX_RESTART_MARKS:
                marks.append(at)
        self._server_pid[event.server] = event.pid
        self.servers.setdefault(event.server, Series()).add(at, event.rss)

    def rss_by_server(self) -> dict[int, list[tuple[float, int]]]:
        """Each server's samples across its restarts as (seconds, rss bytes)."""
        return {server: [(p[0], int(p[1])) for p in series.all()] for server, series in sorted(self.servers.items())}

    def rss_by_process(self) -> dict[int, list[tuple[float, int, int]]]:
        """Each process's samples as (seconds, requests, rss bytes)."""
        return {pid: [(p[0], int(p[1]), int(p[2])) for p in series.all()] for pid, series in self.memory.items()}
