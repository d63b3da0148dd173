"""RunContext: what every phase of a plan reads and writes: the options, the session, the findings, the budget."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from time import perf_counter
from typing import Any

from mcpfuzz.corpus.redact import Redactor
from mcpfuzz.engine.attribution.detect import SdkInfo
from mcpfuzz.engine.config import CALL_PHASES, RunConfig
from mcpfuzz.engine.coverage.book import CoverageBook
from mcpfuzz.engine.events import (
    CaseDone,
    EventSink,
    Finding,
    FindingFound,
    Notice,
    PhaseName,
    Stats,
    StopReason,
)
from mcpfuzz.engine.internal_errors import InternalErrors
from mcpfuzz.engine.judge import FindingSet, Verdict, observed_finding
from mcpfuzz.engine.monitor.monitor import Monitor, MonitorOptions
from mcpfuzz.engine.observe.start import judge_with
from mcpfuzz.engine.observe.watch import ObservationWatch
from mcpfuzz.engine.plan.budget import Budget
from mcpfuzz.engine.plan.corpus_writer import CorpusWriter
from mcpfuzz.engine.plan.rate_limit import RateLimitTally, rate_limited
from mcpfuzz.engine.plan.slow_notes import SlowNotes
from mcpfuzz.engine.redaction import RedactingSink
from mcpfuzz.engine.searches.caller import Caller
from mcpfuzz.engine.searches.coverage_search import CoverageSearch
from mcpfuzz.engine.searches.frame_fuzz import FrameFuzz
from mcpfuzz.engine.searches.fuzz_search import FuzzSearch
from mcpfuzz.engine.searches.hypothesis_bridge import HypothesisWarmup
from mcpfuzz.engine.searches.stateful_search import StatefulSearch
from mcpfuzz.engine.security.canary_watch import CanaryWatch
from mcpfuzz.engine.security.workspace import SecurityWorkspace
from mcpfuzz.engine.session.session import Session
from mcpfuzz.engine.shared.hub import SharedHub
from mcpfuzz.engine.surface.preparation import TargetPreparation
from mcpfuzz.engine.surface.probe import ProbeResult
from mcpfuzz.engine.surface.targets import Selection, TargetPlan
from mcpfuzz.jsonrpc.call_split import SPLIT
from mcpfuzz.jsonrpc.exchange import Exchange
from mcpfuzz.jsonrpc.versions import Era
from mcpfuzz.oracles.base import Failure
from mcpfuzz.transport.connect import ServerTarget

# Told each judged exchange with its verdicts (a soak keeps its behaviour signatures this way).
JudgedObserver = Callable[[PhaseName, Exchange, list[Verdict]], None]
# Adjusts the outcome reporters see (a soak adds its counters and marks findings its corpus already held).
ReportAdjuster = Callable[[tuple[Finding, ...], Stats], tuple[tuple[Finding, ...], Stats]]
# More of the heartbeat a --shared process tells the others.
StatusPart = Callable[[], dict[str, object]]


@dataclass(frozen=True)
class Searches:
    """The run's searches: random frames, and the coverage, fuzz and stateful searches of its targets, which share
    one caller (what the calls so far taught: answer times, wedging calls, lines reached)."""

    frames: FrameFuzz
    caller: Caller
    coverage: CoverageSearch
    fuzz: FuzzSearch
    stateful: StatefulSearch

    @classmethod
    def over(cls, frames: FrameFuzz, caller: Caller) -> Searches:
        """The frames' search and the three searches of calls through `caller`."""
        return cls(frames, caller, CoverageSearch(caller), FuzzSearch(caller), StatefulSearch(caller))


@dataclass
class RunContext:
    """One run's state, shared by its phases; it survives cancellation so a partial report can always be written."""

    config: RunConfig
    emit: EventSink
    redactor: Redactor
    budget: Budget
    corpus: CorpusWriter
    findings: FindingSet = field(default_factory=FindingSet)
    stats: Stats = field(default_factory=Stats)
    monitor_options: MonitorOptions = field(default_factory=MonitorOptions)
    session: Session | None = None
    monitor: Monitor | None = None
    probe: ProbeResult | None = None
    warmup: HypothesisWarmup | None = None  # Hypothesis' tables, made ready in the background from the run's start
    preparation: TargetPreparation | None = None  # the selected targets, prepared in the background from the probe
    targets: TargetPlan | None = None  # the call targets, once prepared
    searches: Searches | None = None  # the two searches over them, once prepared
    sdk: SdkInfo | None = None
    shared: SharedHub | None = None  # --shared: this process's part in a search shared through Redis
    stopped: StopReason = StopReason.NONE
    error: str = ""
    stale: tuple[str, ...] = ()
    plan: tuple[Any, ...] = ()  # the phases being executed (`phase.Plan`), so a phase can ask those after it
    # What each phase of the plan did: ran, or skipped and why (the JSON report's `plan`).
    phase_log: list[tuple[str, str]] = field(default_factory=list)
    judged_observers: list[JudgedObserver] = field(default_factory=list)
    report_adjusters: list[ReportAdjuster] = field(default_factory=list)
    status_parts: list[StatusPart] = field(default_factory=list)
    slow: SlowNotes | None = None
    security: SecurityWorkspace | None = None  # --security: the workspace and canaries planted for the server
    canaries: CanaryWatch | None = None  # --security: the hits folder, looked at as each case is judged
    # --security: the server as given, `{workspace}` unexpanded, so that each re-check plants a workspace of its own.
    target_as_given: ServerTarget | None = None
    coverage: CoverageBook | None = None  # --coverage: the lines the traced server reported, once its tracer is in
    observation: ObservationWatch | None = None  # --observe, --security: side effects the server's hook reports
    internal: InternalErrors = field(default_factory=InternalErrors)  # mcpfuzz's own errors, each ending one case
    rate_limits: RateLimitTally = field(default_factory=RateLimitTally)  # cases the server's rate limiter refused
    phase: str = ""  # the phase running now (where an internal error happened)

    @classmethod
    def create(cls, config: RunConfig, emit: EventSink) -> RunContext:
        """A fresh context: events redacted once before any handler sees them, the corpus opened (or said why not)."""
        config = config.judged()
        redactor = Redactor(config.secrets)
        sink: EventSink = RedactingSink(emit, redactor)
        budget = Budget(config.budget, counted=config.max_examples is not None)
        context = cls(config, sink, redactor, budget, CorpusWriter.open(config, redactor, emit),
                      findings=FindingSet(redactor),
                      monitor_options=MonitorOptions(sample_every=config.sample_every, ping_timeout=config.timeout))
        context.slow = SlowNotes(config.timeout, config.call_timeout, sink)
        return context

    def hypothesis(self) -> HypothesisWarmup:
        """The process's Hypothesis warm-up (started with the run)."""
        if self.warmup is None:
            self.warmup = HypothesisWarmup.start()
        return self.warmup

    def selection(self) -> Selection:
        """Which targets may be called: the include/exclude options and --read-only."""
        config = self.config
        return Selection(config.include_targets, config.exclude_targets, read_only=config.read_only,
                         typed=config.target_options)

    @property
    def plain(self) -> bool:
        """A plain JSON-RPC 2.0 server (`run --jsonrpc`), not an MCP one."""
        return self.config.jsonrpc_methods is not None

    def judge(self, phase: PhaseName, exchange: Exchange) -> list[Verdict]:
        """Run the oracles, emit new findings; return every failure with its key (Hypothesis shrinks on them)."""
        started = perf_counter() if SPLIT.on else 0.0
        if self.slow is not None:
            self.slow.note(exchange)
        self.stats.cases += 1
        self.stats.phases[phase] = self.stats.phases.get(phase, 0) + 1
        if rate_limited(exchange):
            notice = self.rate_limits.note()
            if notice is not None:
                self.emit(notice)
            return []
        if phase in CALL_PHASES:
            target = exchange.case.target
            self.stats.targets[target] = self.stats.targets.get(target, 0) + 1
        if self.canaries is not None:
            self.canaries.look(exchange)
        if self.observation is not None:
            judge_with(self, exchange)
        oracles_from = perf_counter() if started else 0.0
        try:
            judged = self.findings.judge_all(exchange, self.config.oracles)
        except Exception as error:  # a bug of mcpfuzz's own ends this case's judging only, and is reported
            self.note_internal(error, f"{exchange.case.target}: {exchange.case.title} (judging it)")
            return []
        oracles_took = perf_counter() - oracles_from if started else 0.0
        if self.canaries is not None:
            self.canaries.settle(exchange)
        new = tuple(finding for _, _, finding in judged if finding is not None)
        for finding in new:
            self.emit(FindingFound(finding))
        if new:
            # Saved as found, so that a kill -9 or the OOM killer loses nothing found so far; the end of
            # the run rewrites each with its smallest reproducer and the verdict of its re-run.
            self.save(new)
        self.emit(CaseDone(phase, exchange, new))
        for observer in self.judged_observers:
            observer(phase, exchange, judged)
        if started:
            SPLIT.seconds["judge"] += oracles_took
            SPLIT.seconds["bookkeeping"] += perf_counter() - started - oracles_took
        return judged

    def observed(self, failure: Failure, received: tuple[str, ...], expected: str = "") -> None:
        """A failure seen over many requests becomes a finding (no single frame replays it)."""
        session = self.session
        if failure.oracle not in self.config.oracles or session is None:
            return
        finding = observed_finding(failure, received, (session.era or Era.LEGACY).value, session.version,
                                   *([expected] if expected else []))
        if self.findings.add_observed(finding) is not None:
            self.emit(FindingFound(finding))

    def save(self, findings: tuple[Finding, ...]) -> dict[str, str]:
        """One transcript per finding, shared with --shared; the paths by fingerprint."""
        if self.shared is not None and findings:
            self.shared.publish(list(findings))
        return self.corpus.save(findings)

    def server_lost(self, error: Exception, what: str) -> None:
        """The server could not be brought back: say so, and stop `what` early."""
        self.stopped = StopReason.SERVER_UNRECOVERABLE
        self.emit(Notice(f"the server could not be brought back after a failure ({error}); {what} stopped early",
                         level="error"))

    def note_internal(self, error: Exception, case: str) -> None:
        """mcpfuzz failed on one case (`case`: its target or frame family, and what it was): that case ends,
        the run goes on, and the report lists the error."""
        self.internal.note(error, self.phase or "run", case)
        self.stats.internal_errors = self.internal.total

    def internal_error(self, error: Exception) -> None:
        """mcpfuzz itself failed: stop fuzzing, keep and verify the findings so far, say what broke."""
        import traceback

        where = traceback.extract_tb(error.__traceback__)[-1]
        self.error = (f"mcpfuzz stopped on an internal error: {type(error).__name__}: {error} (at "
                      f"{Path(where.filename).name}:{where.lineno}); the findings before it are reported and saved."
                      "\ntip: this is a bug of mcpfuzz; please report it with the command line and this message")

    def shared_status(self) -> dict[str, object]:
        """What this process's heartbeat tells the others (`mcpfuzz status` shows it)."""
        status: dict[str, object] = {"cases": self.stats.cases, "findings": len(self.findings.entries()),
                                     "protocol_version": self.probe.version if self.probe else None}
        for part in self.status_parts:
            status.update(part())
        return status

    def count_session(self) -> None:
        """The session's counters into the run's stats."""
        session = self.session
        if session is not None:
            self.stats.frames_sent, self.stats.restarts = session.wire.frames_sent, session.restarts
            self.stats.planned_restarts = session.planned_restarts
            self.stats.standbys, self.stats.warm_restarts = session.processes.standbys, session.processes.warm_restarts
            self.stats.startup = session.startup.as_dict()
            self.stats.lost = session.comebacks.as_dict() if session.comebacks.lost else None
        if self.coverage is not None:
            self.stats.coverage = self.coverage.as_dict()
        if self.monitor is not None and self.monitor.figures.samples:
            self.stats.resources = self.monitor.figures.as_dict()
