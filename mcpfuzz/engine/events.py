"""The event stream of a run: typed events the engine emits to an `EventSink`, and the names they share."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from mcpfuzz.engine.internal_errors import InternalError
from mcpfuzz.engine.phase_names import Name, PhaseName
from mcpfuzz.jsonrpc.exchange import Exchange
from mcpfuzz.jsonrpc.frame import Case
from mcpfuzz.oracles.base import Severity


class StopReason(Name):
    """Why a run ended before its work was done; `NONE` (the empty string, false) when it was not cut short."""

    NONE = ""
    BUDGET = "budget"
    INTERRUPTED = "interrupted"  # SIGINT or SIGTERM
    SERVER_UNRECOVERABLE = "server-unrecoverable"
    MAX_FINDINGS = "max-findings"  # run -x / --max-findings, soak --max-findings

    @classmethod
    def parse(cls, text: str) -> StopReason:
        """A reason read back from a file (a checkpoint); one this version does not know counts as interrupted."""
        try:
            return cls(text)
        except ValueError:
            return cls.INTERRUPTED


@dataclass(frozen=True)
class Event:
    """Something the engine tells its listeners; `timestamp` is the wall clock (seconds since the epoch)."""

    # kw_only keeps the subclasses' own fields positional; compare=False: the same event at two times is equal.
    timestamp: float = field(default_factory=time.time, kw_only=True, compare=False)


@dataclass(frozen=True)
class Upstream:
    """A finding that is a known behaviour of the SDK the server is built on: where the fix belongs."""

    sdk: str  # `the TypeScript SDK 1.32.2`
    behaviour: str  # what the SDK does
    link: str  # the upstream issue or pull request

    def describe(self) -> str:
        """One line for reports: whose behaviour it is and where it is tracked."""
        return f"from {self.sdk}: {self.behaviour}; see {self.link}; not fixable in this server's own code"


@dataclass(frozen=True)
class Occurrence:
    """One place a finding's cause showed: the target (frame) and what it showed there (a noise line), if anything."""

    target: str
    detail: str = ""


@dataclass(frozen=True)
class Sample:
    """One distinct piece of evidence of a cause (a noise line's shape, a target the cause showed on): how often it
    showed, where first, what it showed there, and the frames that showed it."""

    evidence: str
    count: int
    target: str
    detail: str = ""
    frames: tuple[bytes, ...] = ()


@dataclass(frozen=True)
class Finding:
    """One distinct failure: the oracle, the case that tripped it, and the frames that reproduce it."""

    oracle: str
    severity: Severity
    title: str
    message: str
    target: str
    case_title: str
    expected: str
    frames: tuple[bytes, ...]
    received: tuple[str, ...]
    key: str
    tool: str | None = None
    stderr_tail: str = ""
    # What a corpus transcript needs to replay the finding (not part of its identity).
    case: Case | None = field(default=None, compare=False, repr=False)
    era: str = ""
    protocol_version: str = ""
    # Re-run on a fresh server before saving: True it failed again, False it did not, None not checked.
    reproducible: bool | None = field(default=None, compare=False)
    # Already in the corpus when the run started (a soak reports it, but not as new).
    known: bool = field(default=False, compare=False)
    # Seen over many requests (a leak, a server that stopped answering between cases): no frame replays it.
    observed: bool = False
    server_wide: bool = False  # one bug whatever the frame: findings on other targets are repeats
    # The other targets the same root cause was seen on (a crash signature reached from several frames).
    also_on: tuple[str, ...] = field(default=(), compare=False)
    baselined: bool = field(default=False, compare=False)  # accepted in --baseline: reported, not failing
    upstream: Upstream | None = field(default=None, compare=False)  # a known behaviour of the server's SDK
    # More of a crash's stderr than stderr_tail (ProcessEnd.stderr_context): read to tell whose words ended it.
    stderr_context: str = field(default="", compare=False, repr=False)
    rule: str | None = None  # a lint finding's rule id (`SCHEMA-004`)
    # Where the cause showed, in the order seen (bounded), and how many distinct places that was in all.
    occurrences: tuple[Occurrence, ...] = field(default=(), compare=False)
    occurrence_count: int = field(default=0, compare=False)
    # Other oracles that failed on the same frame for the same cause (named in this finding, not listed apart).
    also_judged: tuple[str, ...] = field(default=(), compare=False)
    # Fingerprints of the findings grouped into this one (one SDK behaviour on many targets): still this cause.
    grouped: tuple[str, ...] = field(default=(), compare=False)
    # The (oracle, key) of each failure folded into this one on its frame: an SDK row may explain the cause by those.
    folded: tuple[tuple[str, str], ...] = field(default=(), compare=False)
    # Where the fix goes when it is neither the finding's own target nor the whole server: `tool/*`, every target of
    # one kind (a framework that validates no tool's arguments). Empty: the target, or `*` when server-wide.
    scope: str = ""
    # The cause's distinct evidence (bounded, first seen first, each counted) and how many distinct ones there were.
    samples: tuple[Sample, ...] = field(default=(), compare=False)
    sample_count: int = field(default=0, compare=False)

    @property
    def where(self) -> str:
        """The place its identity names: `*` (the server), `tool/*` (every target of a kind), or its target."""
        return self.scope or ("*" if self.server_wide else self.target)

    @property
    def fingerprint(self) -> str:
        """A short stable hash of what makes this failure distinct (a server-wide one: whichever frame showed it)."""
        return fingerprint_of(self.oracle, self.where, self.key)


def fingerprint_of(oracle: str, scope: str, key: str) -> str:
    """The fingerprint of a finding filed under (oracle, scope, key): scope is its target, or `*` if server-wide."""
    import hashlib

    return hashlib.sha256(f"{oracle}|{scope}|{key}".encode()).hexdigest()[:12]


@dataclass(frozen=True)
class RunStarted(Event):
    """The run begins."""

    server: str
    seed: int
    oracles: tuple[str, ...]
    budget: float
    timeout: float


@dataclass(frozen=True)
class PhaseStarted(Event):
    """A phase begins, with the number of cases it will run when known."""

    name: PhaseName
    total: int | None = None
    detail: str = ""
    seconds: float | None = None  # a timed phase's share of the budget (a live view counts it down)


@dataclass(frozen=True)
class ProbeDone(Event):
    """What the probe learned about the server."""

    era: str
    protocol_version: str
    server_info: dict
    capabilities: dict
    tools: tuple[str, ...]
    startup: float | None = None  # seconds from starting the server's process to its first answer (None: not ours)


@dataclass(frozen=True)
class StackFound(Event):
    """Which MCP stack (SDK or framework, and version) the server runs, and what showed it; None: unknown."""

    stack: dict | None  # SdkInfo.to_json(): name, version, evidence, built_on
    summary: str  # `TypeScript SDK 2.4.0`, `FastMCP 3.1.0 on TypeScript SDK 1.17.0`, or why it is unknown


@dataclass(frozen=True)
class TargetsPlanned(Event):
    """Which targets the call phases call, and which they skip and why, by label (`tool/NAME`)."""

    fuzzed: tuple[str, ...]
    skipped: tuple[tuple[str, str], ...]
    risky: tuple[tuple[str, str], ...] = ()  # of `skipped`, those left out only by their risk hint, with it


@dataclass(frozen=True)
class CaseDone(Event):
    """One case was run and judged."""

    phase: PhaseName
    exchange: Exchange
    findings: tuple[Finding, ...]


@dataclass(frozen=True)
class FindingFound(Event):
    """A new distinct finding."""

    finding: Finding


@dataclass(frozen=True)
class ServerRestarted(Event):
    """The server was started again (after a crash or a hang)."""

    reason: str


@dataclass(frozen=True)
class ResourcesSampled(Event):
    """The monitor sampled the server's process tree (`memory-growth` judges each process's series)."""

    pid: int  # the root process; a restarted server is a new pid and a new series
    requests: int  # requests sent to this process when sampled
    rss: int  # bytes, summed over the process tree
    fds: int | None = None  # open file descriptors over the tree; None where the OS has no such count
    threads: int = 0
    processes: int = 1
    server: int = 0  # which of the run's servers: a worker's index under --workers (each has its own server)


@dataclass(frozen=True)
class SliceDone(Event):
    """A soak's slice of one target ended: its length, cases, and the new behaviours and findings it showed."""

    target: str  # a target label (`tool/NAME`), a frame family (`frames/ids`) or `stateful`
    seconds: float
    cases: int
    new_behaviours: int
    new_findings: int


@dataclass(frozen=True)
class Notice(Event):
    """A warning or remark for the person running mcpfuzz."""

    message: str
    level: str = "warning"


@dataclass
class Stats:
    """Counters of a run."""

    cases: int = 0
    tool_calls: int = 0
    frame_cases: int = 0
    frames_sent: int = 0
    restarts: int = 0  # restarts the server forced: its process crashed, exited or stopped answering
    planned_restarts: int = 0  # fresh processes of mcpfuzz's own plan (lifecycle cases, recycles, re-runs)
    duration: float = 0.0
    phases: dict[str, int] = field(default_factory=dict)
    resources: dict[str, Any] | None = None  # the monitor's figures (RSS, fds, pings), when it sampled
    soak: dict[str, Any] | None = None  # a soak's slices per target, workers, resumes
    targets: dict[str, int] = field(default_factory=dict)  # judged cases per call target (`tool/NAME`)
    workers: dict[str, Any] | None = None  # `run --workers N`: how many, and each one's counters
    plan: dict[str, Any] | None = None  # each phase (ran or why not, its share of the run) and the targets called
    standbys: int = 0  # standby processes started ahead of restarts
    warm_restarts: int = 0  # starts that took a standby instead of starting a process and waiting for it
    startup: dict[str, Any] | None = None  # seconds from spawn to first answer: first, last, median, count
    coverage: dict[str, Any] | None = None  # --coverage: lines the server's code reached, in all and per target
    # A server given up on (RestartPolicy): restarts in a row that did not come back, restarts in all, the last failure.
    lost: dict[str, Any] | None = None
    internal_errors: int = 0  # cases ended by an error of mcpfuzz's own (RunFinished.internal_errors lists them)

    COUNTERS = ("cases", "tool_calls", "frame_cases", "frames_sent", "restarts", "planned_restarts", "standbys",
                "warm_restarts", "internal_errors")

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready counters."""
        data: dict[str, Any] = {"cases": self.cases, "tool_calls": self.tool_calls, "frame_cases": self.frame_cases,
                                "frames_sent": self.frames_sent, "restarts": self.restarts,
                                "planned_restarts": self.planned_restarts, "standbys": self.standbys,
                                "warm_restarts": self.warm_restarts, "internal_errors": self.internal_errors,
                                "duration_s": round(self.duration, 3),
                                "phases": dict(self.phases)}
        if self.startup is not None:
            data["startup"] = self.startup
        if self.resources is not None:
            data["resources"] = self.resources
        if self.targets:
            data["targets"] = dict(self.targets)
        if self.soak is not None:
            data["soak"] = self.soak
        if self.workers is not None:
            data["workers"] = self.workers
        if self.plan is not None:
            data["plan"] = self.plan
        if self.coverage is not None:
            data["coverage"] = self.coverage
        if self.lost is not None:
            data["lost"] = self.lost
        return data

    def add(self, other: dict[str, Any]) -> None:
        """Add the counters of another run's `as_dict()` (an earlier soak before --resume, another worker)."""
        for name in self.COUNTERS:
            value = other.get(name)
            if isinstance(value, int) and not isinstance(value, bool):
                setattr(self, name, getattr(self, name) + value)
        duration = other.get("duration_s")
        if isinstance(duration, int | float):
            self.duration += duration
        if self.startup is None and isinstance(other.get("startup"), dict):
            self.startup = other["startup"]  # the first run's (the lead's): starts are one server's, not a sum
        for mine, theirs in ((self.phases, other.get("phases")), (self.targets, other.get("targets"))):
            if isinstance(theirs, dict):
                for name, count in theirs.items():
                    if isinstance(count, int):
                        mine[name] = mine.get(name, 0) + count


@dataclass(frozen=True)
class RunFinished(Event):
    """The run is over: complete, or cut short for the `stopped` reason; what it found either way."""

    stats: Stats
    findings: tuple[Finding, ...]
    protocol_version: str | None
    era: str | None
    stopped: StopReason = StopReason.NONE
    error: str = ""
    corpus_paths: dict[str, str] = field(default_factory=dict)  # fingerprint -> transcript path
    # --baseline entries this run replayed and did not see fail again: the baseline is out of date.
    stale_baseline: tuple[str, ...] = ()
    # What the run could not test although the server declares it (no target called, the server lost), with a
    # tip: such a run never passes.
    untested: str = ""
    stack: dict | None = None  # the MCP stack the server runs (StackFound.stack), None when unknown
    # mcpfuzz's own errors, each of which ended one case (the run went on): one entry per distinct error.
    internal_errors: tuple[InternalError, ...] = ()


@dataclass(frozen=True)
class CheckpointSaved(Event):
    """A soak wrote its checkpoint; `finished` is the report so far (reporters may write it out)."""

    path: str
    finished: RunFinished


EventSink = Callable[[Event], None]
