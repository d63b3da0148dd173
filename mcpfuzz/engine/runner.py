"""`mcpfuzz run`: probe, catalogue, lifecycle, then coverage, fuzz and stateful tool calls; events out."""

from __future__ import annotations

import signal
import time
from collections.abc import Iterable
from contextlib import aclosing
from dataclasses import replace
from functools import partial
from pathlib import Path

import anyio

from mcpfuzz.corpus.redact import Redactor
from mcpfuzz.corpus.store import CorpusError, CorpusStore
from mcpfuzz.engine.alone_answers import run_case
from mcpfuzz.engine.attribution.detect import SdkInfo, detect_sdk
from mcpfuzz.engine.attribution.known import explain
from mcpfuzz.engine.config import CALL_PHASES, RunConfig
from mcpfuzz.engine.errors import UnusableServer
from mcpfuzz.engine.events import (
    CaseDone,
    EventSink,
    Finding,
    FindingFound,
    Notice,
    PhaseName,
    PhaseStarted,
    ProbeDone,
    ResourcesSampled,
    RunFinished,
    RunStarted,
    ServerRestarted,
    Stats,
    StopReason,
    TargetsPlanned,
    Upstream,
)
from mcpfuzz.engine.judge import FindingSet, observed_finding, received_lines
from mcpfuzz.engine.monitor.monitor import Monitor, MonitorOptions
from mcpfuzz.engine.monitor.pileup import check_session_pileup
from mcpfuzz.engine.monitor.resources import Sample
from mcpfuzz.engine.phases.call_phases import CallPhases
from mcpfuzz.engine.phases.concurrent_calls import read_only_tool_calls
from mcpfuzz.engine.phases.frame_fuzz import FRAME_SHARE, FrameFuzz, simplest_tool
from mcpfuzz.engine.phases.hypothesis_bridge import HypothesisWarmup
from mcpfuzz.engine.phases.lint_phase import lint, lint_findings
from mcpfuzz.engine.phases.preparation import TargetPreparation
from mcpfuzz.engine.phases.probe import ProbeResult, probe
from mcpfuzz.engine.phases.search import PhaseStopped, SearchOptions, Verdict
from mcpfuzz.engine.phases.target_kinds import TOOLS
from mcpfuzz.engine.phases.targets import Selection, TargetPlan, plan_targets, skip_reason, target_types
from mcpfuzz.engine.redaction import RedactingSink
from mcpfuzz.engine.replay import load_replayables, unusable_replay
from mcpfuzz.engine.session.session import HarnessError, Session, SessionOptions
from mcpfuzz.engine.session.windows import run_in_order
from mcpfuzz.engine.shared.hub import SharedHub
from mcpfuzz.engine.transcripts import Replayable, from_transcript, save_findings
from mcpfuzz.jsonrpc.case_json import CaseFormatError, case_from_json, case_to_json
from mcpfuzz.jsonrpc.exchange import ID_CURRENT, Exchange
from mcpfuzz.jsonrpc.frame import Case
from mcpfuzz.jsonrpc.openrpc import OpenRpcError, read_methods
from mcpfuzz.jsonrpc.oracle_ids import OracleId
from mcpfuzz.jsonrpc.target_kind import TargetKind
from mcpfuzz.jsonrpc.versions import PLAIN_JSONRPC, Era
from mcpfuzz.oracles.base import Failure
from mcpfuzz.strategies.cancellation import cancel_case
from mcpfuzz.strategies.catalogue import CatalogueContext, catalogue
from mcpfuzz.strategies.concurrency import concurrent_case
from mcpfuzz.strategies.http_cases import http_cases
from mcpfuzz.strategies.jsonrpc_catalogue import jsonrpc_catalogue
from mcpfuzz.strategies.lifecycle import lifecycle
from mcpfuzz.strategies.messages import FrameBuilder
from mcpfuzz.strategies.subscription_cases import listen_case
from mcpfuzz.transport.base import TransportKind
from mcpfuzz.transport.errors import ServerStartError
from mcpfuzz.transport.target import ServerKind

# Time kept at the end of a run to re-run each finding on a fresh server, and how many are re-run.
VERIFY_RESERVE = 5.0
MAX_VERIFIED = 50
# Ids of the HTTP family: above the catalogue's, below the harness's 10000.
HTTP_FIRST_ID = 900
CANCEL_FIRST_ID = 960  # the cancellation and concurrency cases' ids, above the HTTP family's
PILEUP_SECONDS = 4.0  # at most, for the burst of refused requests (about 1-2 s on the servers measured)
# What the report says of a plain JSON-RPC 2.0 server (`--jsonrpc`) in place of an MCP era and version.
PLAIN_ERA, PLAIN_VERSION = "jsonrpc", PLAIN_JSONRPC
MCP_TRANSPORT_ORACLES = (OracleId.HTTP_STATUS, OracleId.SESSION_LEAK, OracleId.ORIGIN_CHECK)


class Run:
    """One run's state; survives cancellation so that a partial report can always be written."""

    def __init__(self, config: RunConfig, emit: EventSink) -> None:
        if config.jsonrpc_methods is not None:
            # MCP's streamable HTTP rules (status codes, sessions, Origin) do not bind a plain JSON-RPC endpoint.
            config = replace(config, oracles=tuple(o for o in config.oracles if o not in MCP_TRANSPORT_ORACLES))
        self.config = config
        self._redactor = Redactor(config.secrets)
        self.emit: EventSink = RedactingSink(emit, self._redactor)
        self._saved: set[str] = set()  # fingerprints this run has written to the corpus
        self._corpus_problem = ""
        self.findings = FindingSet()
        self.stats = Stats()
        self.probe: ProbeResult | None = None
        self.stopped = StopReason.NONE
        self.error = ""
        self._session: Session | None = None
        self.monitor: Monitor | None = None
        self._deadline = 0.0
        self._stale: tuple[str, ...] = ()
        self._slow_noted: set[str] = set()  # targets already said to be slow
        self._sdk: SdkInfo | None = None
        self._store: CorpusStore | None = None
        self.shared: SharedHub | None = None  # --shared: this process's part in a search shared through Redis
        self._warmup: HypothesisWarmup | None = None
        self._preparation: TargetPreparation | None = None  # the targets prepared in the background from the probe
        if config.corpus is not None:
            try:
                self._store = CorpusStore(config.corpus)
            except CorpusError as error:
                emit(Notice(f"{error}; running without a corpus", level="error"))

    async def execute(self) -> RunFinished:
        """Run every phase within the budget; Ctrl-C and SIGTERM stop it cleanly."""
        config = self.config
        started = time.monotonic()
        # Phases plan against this; the hard stop is the budget scope below. The margin is for reports.
        self._deadline = started + config.budget - min(2.0, config.budget * 0.05) - min(VERIFY_RESERVE,
                                                                                          config.budget * 0.1)
        self._verify_until = started + config.budget - min(2.0, config.budget * 0.05)
        self.emit(RunStarted(config.server_label, config.seed, config.oracles, config.budget, config.timeout))
        self._hypothesis()  # Hypothesis' tables built in the background while the server starts and is probed
        self._detect_sdk()
        options = SessionOptions(timeout=config.timeout, call_timeout=config.call_timeout, grace=config.grace,
                                 max_line=config.max_line,
                                 env=config.env or None, frame_log=config.log_frames,
                                 plain_jsonrpc=config.jsonrpc_methods is not None)
        if config.shared is not None:
            self.shared = await anyio.to_thread.run_sync(partial(
                SharedHub, config.shared, server=config.target, seed=config.seed, redactor=self._redactor))
        async with anyio.create_task_group() as group:
            group.start_soon(self._watch_signals, group.cancel_scope)
            if self.shared is not None:
                group.start_soon(self.shared.heartbeats, self._shared_status, self.emit)
            with anyio.move_on_after(config.budget) as budget_scope:
                try:
                    async with Session(config.target, options) as session:
                        self._session = session
                        self.monitor = Monitor(session, self._monitor_options(), self._observed, self._sampled)
                        session.before_case = self.monitor
                        session.on_notice = lambda text: self.emit(Notice(text))
                        try:
                            await self._phases(session)
                        except (ServerStartError, UnusableServer):
                            raise
                        except Exception as error:  # a bug of mcpfuzz's own: what was found is still reported
                            self._internal_error(error)
                        await self._verify(session)
                except ServerStartError as error:
                    by_url = config.target.kind is ServerKind.URL
                    tip = "check the URL and that the server listens there" if by_url else \
                        "check the command after `--`; it runs with mcpfuzz's environment and working directory"
                    self.error = f"{error}\ntip: {tip}"
                except UnusableServer as error:
                    tail = f"\nserver stderr (last lines):\n{error.stderr_tail}" if error.stderr_tail else \
                        "\nserver stderr was empty"
                    self.error = error.message + tail + (f"\ntip: {error.tip}" if error.tip else "")
            if budget_scope.cancelled_caught:
                self.stopped = self.stopped or StopReason.BUDGET
                self.emit(Notice(f"the budget of {config.budget:g}s ran out; the report is partial"))
                if self.probe is None and not self.error:
                    # Nothing was tested: a server that never finished the handshake is unusable, not clean.
                    self.error = (f"the server did not finish the handshake within the budget of {config.budget:g}s"
                                  " (it accepted the input but answered nothing mcpfuzz could use)\ntip: check that "
                                  "it is an MCP server and answers; raise --budget and --timeout for slow starters")
            group.cancel_scope.cancel()
        if self._preparation is not None:
            self._preparation.cancel()  # a run stopped (or without call phases) before its targets were ready
        if self._session is not None:
            self.stats.frames_sent = self._session.frames_sent
            self.stats.restarts = self._session.restarts
        if self.monitor is not None and self.monitor.figures.samples:
            self.stats.resources = self.monitor.figures.as_dict()
        self.stats.duration = time.monotonic() - started
        findings = self._apply_baseline(self._attribute(tuple(self.findings.all())))
        finished = self._finished(findings, self._save_corpus(findings))
        if self.shared is not None:
            for notice in self.shared.close(self._shared_status()):
                self.emit(notice)
        self.emit(finished)
        return finished

    def _shared_status(self) -> dict[str, object]:
        """What this process's heartbeat tells the others (`mcpfuzz status` shows it)."""
        return {"cases": self.stats.cases, "findings": len(self.findings.entries()),
                "protocol_version": self.probe.version if self.probe else None}

    def _finished(self, findings: tuple[Finding, ...], corpus_paths: dict[str, str],
                  stats: Stats | None = None) -> RunFinished:
        """The run's outcome as reporters see it."""
        if self.shared is not None:  # found first by another machine: known, as if the corpus had held it
            findings = tuple(replace(f, known=True) if f.fingerprint in self.shared.elsewhere else f for f in findings)
        era = None if self.probe is None else PLAIN_ERA if self.config.jsonrpc_methods is not None else \
            self.probe.era.value
        return RunFinished(stats or self.stats, findings, self.probe.version if self.probe else None, era,
                           self.stopped, self.error, corpus_paths, self._stale)

    def _detect_sdk(self) -> None:
        """Which SDK the server is built on (from package files next to its command), said once in the header."""
        target = self.config.target
        words: tuple[str, ...] = ()
        if target.kind is ServerKind.COMMAND:
            words = target.command
        elif target.kind is ServerKind.URL:
            words = tuple(target.launch)
        self._sdk = detect_sdk(words)
        if self._sdk is not None and self.config.shard.lead:
            self.emit(Notice(f"built on {self._sdk.describe()} ({self._sdk.source}): findings that are its known "
                             "behaviours are marked as such", level="info"))

    def _attribute(self, findings: tuple[Finding, ...]) -> tuple[Finding, ...]:
        """Mark the findings that are known behaviours of the server's SDK version, with the upstream link."""
        if self._sdk is None or self._session is None:
            return findings
        transport = self._session.transport.value
        marked = []
        for finding in findings:
            known = explain(self._sdk, transport, finding.oracle, finding.key)
            if known is not None:
                finding = replace(finding, upstream=Upstream(self._sdk.describe(), known.behaviour, known.link))
            marked.append(finding)
        return tuple(marked)

    def _apply_baseline(self, findings: tuple[Finding, ...]) -> tuple[Finding, ...]:
        """Mark the findings --baseline accepts; note its entries this run replayed and did not see again."""
        baseline = self.config.baseline
        if baseline is None:
            return findings
        accepted = baseline.fingerprints
        found = {f.fingerprint for f in findings}
        if self.probe is not None and not self.stopped:  # an interrupted run proves nothing stale
            self._stale = tuple(entry.describe() for entry in baseline.stale(found))
            for entry in baseline.unseen_unreplayable(found):
                self.emit(Notice(f"baseline: {entry.describe()} was not seen in this run; it has no transcript, "
                                 "so it cannot be told stale"))
        return tuple(replace(f, baselined=True) if f.fingerprint in accepted else f for f in findings)

    def _monitor_options(self) -> MonitorOptions:
        """Resource samples for memory-growth; `run` sends no liveness ping (its cases keep the server busy)."""
        return MonitorOptions(sample_every=self.config.sample_every, ping_timeout=self.config.timeout)

    def _sampled(self, pid: int, sample: Sample) -> None:
        """A resource sample of the server, told to the reports (the HTML report charts the memory)."""
        self.emit(ResourcesSampled(pid, sample.requests, sample.rss, sample.fds, sample.threads, sample.processes))

    def _observed(self, failure: Failure, received: tuple[str, ...], expected: str = "") -> None:
        """A failure seen over many requests becomes a finding (no single frame replays it)."""
        session = self._session
        if failure.oracle not in self.config.oracles or session is None:
            return
        finding = observed_finding(failure, received, (session.era or Era.LEGACY).value, session.version,
                                   *([expected] if expected else []))
        if self.findings.add_observed(finding) is not None:
            self.emit(FindingFound(finding))

    def _save_corpus(self, findings: tuple[Finding, ...]) -> dict[str, str]:
        """One transcript per finding (also after an interruption: nothing found is lost), shared with --shared."""
        if self.shared is not None and findings:
            self.shared.publish(list(findings))
        if self._store is None or not findings:
            return {}
        try:
            return save_findings(self._store, list(findings), command=self.config.target, seed=self.config.seed,
                                 redactor=self._redactor, counted=self._saved)
        except (OSError, CorpusError) as error:
            text = f"the corpus could not be written to {self.config.corpus}: {error}"
            if text != self._corpus_problem:  # said once, not at every finding
                self._corpus_problem = text
                self.emit(Notice(text, level="error"))
            return {}

    async def _regression(self, session: Session) -> None:
        """Replay the corpus first: a saved failure that still fails is a finding; a fixed one is marked."""
        assert self._store is not None and self.probe is not None
        if not self._store.root.is_dir():
            return
        replayables, broken = await anyio.to_thread.run_sync(load_replayables, [self._store.root])
        for outcome in broken:
            self.emit(Notice(f"corpus: {outcome.path.name} skipped: {outcome.reason}"))
        if not replayables:
            return
        self.emit(PhaseStarted(PhaseName.REGRESSION, len(replayables)))
        for replayable in replayables:
            exchange = await self._run_replayable(session, replayable, f"corpus: {replayable.path.name}")
            if exchange is None:
                continue
            judged = self._judge(PhaseName.REGRESSION, exchange)
            unusable = unusable_replay(replayable, exchange)
            if unusable:
                self.emit(Notice(f"corpus: {replayable.path.name} could not be judged: {unusable}"))
                continue
            if not any(failure.oracle == replayable.oracle for failure, _, _ in judged):
                self._store.mark(replayable.path, status="fixed")
                self.emit(Notice(f"corpus: {replayable.path.name} is fixed", level="info"))

    async def _replay_baseline(self, session: Session) -> None:
        """Replay each baseline entry's transcript, so whether it still fails is known, not left to chance."""
        assert self.config.baseline is not None
        for entry in self.config.baseline.entries:
            if entry.transcript is None or time.monotonic() > self._deadline:
                continue
            try:
                replayable = from_transcript(Path(f"baseline:{entry.fingerprint}"), entry.transcript)
            except CaseFormatError as error:
                self.emit(Notice(f"baseline: {entry.describe()} cannot be replayed: {error}"))
                continue
            exchange = await self._run_replayable(session, replayable, f"baseline: {entry.describe()}")
            if exchange is not None:
                self._judge(PhaseName.REGRESSION, exchange)

    async def _run_replayable(self, session: Session, replayable: Replayable, what: str) -> Exchange | None:
        """A saved case on a fresh server in its own era and version (the run's are put back); None, said, when
        the server cannot run it."""
        era, version = session.era, session.version
        session.era, session.version = replayable.era, replayable.version or version
        try:
            return await run_case(session, replayable.case)
        except (HarnessError, ServerStartError) as error:
            self.emit(Notice(f"{what} could not be replayed: {error}"))
            return None
        finally:
            session.era, session.version = era, version

    async def _verify(self, session: Session, until: float | None = None) -> None:
        """Re-run each finding's frames on a fresh server, as `mcpfuzz replay` will; mark the ones that pass.

        The most severe first, and of those the smallest; whatever the time leaves is said, with its count.
        """
        pending = [f for f in self.findings.all() if f.case is not None and f.reproducible is None]
        pending.sort(key=lambda f: (-f.severity, sum(map(len, f.frames))))
        findings = pending[:MAX_VERIFIED]
        if not findings:
            return
        until = self._verify_until if until is None else until
        session.thorough = True
        era, version, restarts = session.era, session.version, session.restarts
        for done, finding in enumerate(findings):
            if time.monotonic() + 0.5 > until:
                if until == self._verify_until:
                    self.emit(Notice(f"no time left to re-run {len(pending) - done} of {len(pending)} findings; "
                                     "they are saved unchecked (raise --budget to verify them all)"))
                break
            assert finding.case is not None
            case = case_from_json(case_to_json(finding.case), list(finding.frames))
            session.era = Era(finding.era) if finding.era else era
            session.version = finding.protocol_version or version
            try:
                exchange = await run_case(session, case)
            except (HarnessError, ServerStartError):
                break
            finally:
                session.era, session.version = era, version
            again = FindingSet().judge(exchange, (finding.oracle,))
            self.findings.mark(finding, bool(again))
            if not again:
                self.emit(Notice(f"{finding.oracle} on {finding.target} did not fail again on a fresh server: "
                                 "saved and reported as not reproducible"))
        session.thorough = False
        session.restarts = restarts  # fresh servers for re-runs are not restarts the server caused

    async def _watch_signals(self, scope: anyio.CancelScope) -> None:
        with anyio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as signals:
            async for received in signals:
                self.stopped = StopReason.INTERRUPTED
                self.emit(Notice(f"{signal.Signals(received).name} received: stopping, writing the partial "
                                 "report"))
                scope.cancel()
                return

    async def _phases(self, session: Session) -> None:
        if self.config.jsonrpc_methods is not None:
            await self._plain_phases(session, self.config.jsonrpc_methods)
            return
        context = await self._probe(session)
        if self.config.shard.lead:  # the other workers of `run --workers N` only search
            await self._protocol_phases(session, context)
            # Findings so far are re-run now, while there is time: an unverified finding is worth less than
            # the calls this time would have bought.
            await self._verify(session, until=self._deadline)
        if any(phase in self.config.phases for phase in CALL_PHASES):
            await self._call_phases(session)

    async def _plain_phases(self, session: Session, methods: tuple[dict, ...]) -> None:
        """A plain JSON-RPC 2.0 server: no handshake; the methods come from the OpenRPC document, the catalogue
        has no MCP case, and the fuzz phase calls the methods only (the frame families speak MCP)."""
        config = self.config
        self.emit(PhaseStarted(PhaseName.PROBE))
        # The legacy era's builders add no `_meta`; the version is what transcripts record (replay reads it back).
        session.era, session.version = Era.LEGACY, PLAIN_JSONRPC
        await session.ensure_ready()
        if not methods:
            methods = await self._discover_methods(session)
        self.probe = ProbeResult(Era.LEGACY, PLAIN_VERSION, declared={TargetKind.METHOD: list(methods)})
        self.emit(ProbeDone(PLAIN_ERA, PLAIN_VERSION, {}, {}, ()))
        self._prepare_targets()  # in the background, while the catalogue runs
        if self._store is not None and config.replay_corpus:
            await self._regression(session)
        if PhaseName.CATALOGUE in config.phases:
            await self._run_cases(session, PhaseName.CATALOGUE, jsonrpc_catalogue(methods[0]["name"]))
        if any(phase in config.phases for phase in CALL_PHASES):
            await self._call_phases(session)

    async def _discover_methods(self, session: Session) -> tuple[dict, ...]:
        """The OpenRPC service discovery method `rpc.discover`: the server's own document, read as --openrpc is."""
        tip = "give the server's OpenRPC document with --openrpc FILE"
        try:
            reply = await session.call("rpc.discover")
        except HarnessError as error:
            raise UnusableServer(f"rpc.discover got no answer ({error})", tip=tip) from None
        if not reply.is_result:
            raise UnusableServer(f"rpc.discover was refused: {reply.text(200)}", tip=tip)
        try:
            return tuple(read_methods(reply.message["result"]))
        except OpenRpcError as error:
            raise UnusableServer(f"the document rpc.discover returned cannot be read: {error}", tip=tip) from None

    async def _probe(self, session: Session) -> CatalogueContext:
        """Negotiate the era, list the tools, judge what the probe saw; the context the catalogue is built in."""
        config = self.config
        self.emit(PhaseStarted(PhaseName.PROBE))
        # The handshake and the lists are judged with a barrier each: a second answer to initialize, written a
        # moment after the first, lands in its own case, not in whichever case comes next.
        session.thorough = True
        try:
            self.probe = await probe(session, config.protocol_version)
        finally:
            session.thorough = False
        self.emit(ProbeDone(self.probe.era.value, self.probe.version, self.probe.server_info,
                            self.probe.capabilities, tuple(t.get("name", "?") for t in self.probe.tools)))
        for note in self.probe.notes:
            self.emit(Notice(note))
        for exchange in self.probe.exchanges:
            self._judge(PhaseName.PROBE, exchange)
        uris = [r["uri"] for r in self.probe.declared.get(TargetKind.RESOURCE, []) if isinstance(r.get("uri"), str)]
        self._prepare_targets()  # in the background, while the catalogue and lifecycle run
        return CatalogueContext(self.probe.era, self.probe.version, _first_tool(self.probe.tools, self._selection()),
                                self.probe.capabilities, uris[0] if uris else None)

    def _prepare_targets(self) -> TargetPreparation:
        """The targets selected from what the probe listed, prepared in a background thread (started once)."""
        if self._preparation is None:
            assert self.probe is not None
            plan = plan_targets(self.probe.declared, self._selection(), seed=self.config.seed)
            self._preparation = TargetPreparation.start(plan, self._hypothesis())
        return self._preparation

    def _hypothesis(self) -> HypothesisWarmup:
        """The process's Hypothesis warm-up (started with the run)."""
        if self._warmup is None:
            self._warmup = HypothesisWarmup.start()
        return self._warmup

    def _selection(self) -> Selection:
        """Which targets may be called: the include/exclude options and --read-only."""
        config = self.config
        return Selection(config.include_targets, config.exclude_targets, read_only=config.read_only)

    async def _protocol_phases(self, session: Session, context: CatalogueContext) -> None:
        """The corpus replayed, then the catalogue and lifecycle cases (each when asked)."""
        config = self.config
        assert self.probe is not None
        await self._lint(session)
        if self._store is not None and config.replay_corpus:
            await self._regression(session)
        if config.baseline is not None:
            await self._replay_baseline(session)
        if PhaseName.CATALOGUE in config.phases:
            await self._run_cases(session, PhaseName.CATALOGUE, [*catalogue(context), *self._http_cases(
                session, context), *await self._multi_frame_cases(session, context)])
            if "session-leak" in config.oracles:
                await self._session_pileup(session)
        if PhaseName.LIFECYCLE in config.phases:
            session.thorough = True  # five cases about the handshake itself: each settled by a barrier
            try:
                await self._run_cases(session, PhaseName.LIFECYCLE, lifecycle(self.probe.era))
            finally:
                session.thorough = False

    async def _lint(self, session: Session) -> None:
        """The lint rules on what the server declares, each problem a `lint` finding (mcpfuzz.lint)."""
        if OracleId.LINT not in self.config.oracles or self.probe is None:
            return
        self.emit(PhaseStarted(PhaseName.LINT))
        try:
            problems = await lint(session, self.probe, in_run=True)
        except (HarnessError, ServerStartError) as error:
            self.emit(Notice(f"the lint phase stopped: {error}"))
            return
        for finding in lint_findings(problems, self.probe.era.value, self.probe.version):
            if self.findings.add_observed(finding) is not None:
                self.emit(FindingFound(finding))

    async def _fuzzers(self, session: Session) -> tuple[TargetPlan, FrameFuzz, CallPhases]:
        """The targets to call (safety hints applied) and the two searches: frames, and calls of targets."""
        config = self.config
        assert self.probe is not None
        # Every selected target prepared (milliseconds each, mostly done while the catalogue ran); Ctrl-C or the
        # budget stops the preparation with the run.
        plan = await self._prepare_targets().finished()
        self.emit(TargetsPlanned(tuple(t.label for t in plan.targets), tuple(plan.skipped)))
        for warning in plan.warnings:
            self.emit(Notice(warning))
        options = SearchOptions(config.seed, config.database_root, config.server_label, config.max_examples,
                                self.shared.example_database if self.shared is not None else None,
                                worker=config.shard.index)
        frames = FrameFuzz(session, self._judge, options, simplest_tool(plan.targets),
                           tools_listed="tools" in self.probe.capabilities)
        phases = CallPhases(session, plan.targets, self._judge, options, strict_types=config.strict_types,
                            timeouts=config.target_timeouts)
        return plan, frames, phases

    async def _call_phases(self, session: Session) -> None:
        """Coverage, fuzz and stateful calls: up to 30% of the time left, then 60% / 40% of the rest.

        The fuzz phase starts with random frames: a quarter of its time, or all of it without a target to call.
        """
        config = self.config
        plan, frames, phases = await self._fuzzers(session)
        try:
            if not plan.targets:
                if PhaseName.FUZZ in config.phases and config.jsonrpc_methods is None:
                    self.emit(PhaseStarted(PhaseName.FUZZ, None,
                                           f"random frames (no tool to fuzz), about {self._left():.0f}s",
                                           self._left()))
                    await frames.fuzz(self._share(1.0))
                return
            if PhaseName.COVERAGE in config.phases and config.shard.lead:  # deterministic: once per run
                self.emit(PhaseStarted(PhaseName.COVERAGE, await phases.planned_coverage_size()))
                left_out = await phases.coverage(self._share(0.3))
                if left_out:
                    self.emit(Notice(f"coverage: {left_out} calls left out to keep time for fuzzing; raise --budget "
                                     "to run them all"))
            if PhaseName.FUZZ in config.phases:
                share = 0.6 if PhaseName.STATEFUL in config.phases else 1.0
                frames_first = "" if config.jsonrpc_methods is not None else "random frames, then "
                self.emit(PhaseStarted(PhaseName.FUZZ, None, f"{frames_first}{_count_of(plan, fuzzed=True)}, about "
                                       f"{self._left() * share:.0f}s", self._left() * share))
                end = self._share(share)
                if config.jsonrpc_methods is None:  # the frame families speak MCP
                    await frames.fuzz(time.monotonic() + (end - time.monotonic()) * FRAME_SHARE)
                await phases.fuzz(end)
            if PhaseName.STATEFUL in config.phases:
                self.emit(PhaseStarted(PhaseName.STATEFUL, None, f"call sequences across {_count_of(plan)}, about "
                                       f"{self._left():.0f}s", self._left()))
                await phases.stateful(self._share(1.0))
        except PhaseStopped as error:
            self._server_lost(error, "the tool phases")
        finally:
            self._count(frames, phases)

    def _internal_error(self, error: Exception) -> None:
        """mcpfuzz itself failed: stop fuzzing, keep and verify the findings so far, say what broke."""
        import traceback

        where = traceback.extract_tb(error.__traceback__)[-1]
        self.error = (f"mcpfuzz stopped on an internal error: {type(error).__name__}: {error} (at "
                      f"{Path(where.filename).name}:{where.lineno}); the findings before it are reported and saved."
                      "\ntip: this is a bug of mcpfuzz; please report it with the command line and this message")

    def _server_lost(self, error: Exception, what: str) -> None:
        """The server could not be brought back: say so, and stop `what` early."""
        self.stopped = StopReason.SERVER_UNRECOVERABLE
        self.emit(Notice(f"the server could not be brought back after a failure ({error}); {what} stopped early",
                         level="error"))

    def _count(self, frames: FrameFuzz, phases: CallPhases) -> None:
        """The fuzzers' counters into the run's stats."""
        self.stats.tool_calls = phases.calls
        self.stats.frame_cases = frames.examples

    async def _session_pileup(self, session: Session) -> None:
        """Streamable HTTP with --launch: a burst of refused requests must not make the server grow."""
        try:
            verdict = await check_session_pileup(session, deadline=time.monotonic() + min(PILEUP_SECONDS,
                                                                                       self._left() * 0.1))
        except (HarnessError, ServerStartError) as error:
            self.emit(Notice(f"the session pile-up check stopped: {error}"))
            return
        if verdict is not None:
            received = (f"<{verdict.refused} refused requests in {verdict.seconds:.1f}s>",
                        *received_lines(verdict.exchange)[:2])
            self._observed(verdict.failure, received, "a refused request leaves nothing behind on the server")

    def _http_cases(self, session: Session, context: CatalogueContext) -> list[Case]:
        """The HTTP family, over streamable HTTP only (legacy HTTP+SSE has no status-level rules to check)."""
        if session.transport is not TransportKind.STREAMABLE_HTTP:
            return []
        builder = FrameBuilder(context.era, context.version, next_id=HTTP_FIRST_ID)
        return list(http_cases(builder, tool=context.tool, has_session=bool(session.server.session_id)))

    async def _multi_frame_cases(self, session: Session, context: CatalogueContext) -> list[Case]:
        """Cases of several requests sent together (one write on stdio, POSTs over streamable HTTP): a request
        cancelled at once, read-only requests in flight at once (tools annotated readOnlyHint: true among
        them), and (stdio) a subscriptions/listen ended by the client. Legacy HTTP+SSE answers on its GET stream,
        where nothing tells which POST an answer belongs to."""
        if session.transport not in (TransportKind.STDIO, TransportKind.STREAMABLE_HTTP) or self.probe is None:
            return []
        await self._hypothesis().ready()
        tool_calls = await anyio.to_thread.run_sync(read_only_tool_calls, self._prepare_targets().plan.targets)
        builder = FrameBuilder(context.era, context.version, next_id=CANCEL_FIRST_ID)
        list_methods = [t.list_method for t in target_types().values()
                        if t.capability in context.capabilities and t.list_method is not None]
        uris = [r["uri"] for r in self.probe.declared.get(TargetKind.RESOURCE, []) if isinstance(r.get("uri"), str)
                and TargetKind.RESOURCE.label(r["uri"]) not in self.config.exclude_targets]
        cases = (cancel_case(builder, context.capabilities), concurrent_case(builder, list_methods, uris, tool_calls),
                 # Over HTTP a listen is an SSE stream the client ends by closing it: stdio only.
                 listen_case(builder, context.capabilities, context.resource)
                 if session.transport is TransportKind.STDIO else None)
        return [case for case in cases if case is not None]

    def _left(self) -> float:
        return max(0.0, self._deadline - time.monotonic())

    def _share(self, fraction: float) -> float:
        """A deadline `fraction` of the way from now to the end of the budget."""
        return time.monotonic() + self._left() * fraction

    async def _run_cases(self, session: Session, phase: PhaseName, cases: Iterable[Case]) -> None:
        cases = list(cases)
        self.emit(PhaseStarted(phase, len(cases)))
        async with aclosing(run_in_order(session, cases, run_alone=run_case)) as exchanges:
            while True:
                restarts = session.restarts
                try:
                    exchange = await anext(exchanges)
                except StopAsyncIteration:
                    return
                except (HarnessError, ServerStartError) as error:
                    self._server_lost(error, phase)
                    return
                if session.restarts > restarts and not exchange.case.fresh:
                    self.emit(ServerRestarted("restarted after the previous case"))
                self._judge(phase, exchange)

    def _note_slow(self, exchange: Exchange) -> None:
        """A valid call answered after --timeout by a live (or busy) server: slow, not a hang; said once per target."""
        if not exchange.extended:
            return  # nearly every case: answered within --timeout
        target = exchange.case.target
        if target in self._slow_noted:
            return
        answers = [a for a in exchange.responses() if a.id_tag == ID_CURRENT]
        if not answers and exchange.cut_short and (exchange.barrier_answered or exchange.blocked):
            self._slow_noted.add(target)
            self.emit(Notice(f"{target} was still unanswered after {exchange.waited:.1f}s when its share of the run "
                             f"ended, before --call-timeout ({self.config.call_timeout:g}s): not judged (raise "
                             "--budget, or give the target a shorter timeout in the config file to judge it)",
                             level="info"))
            return
        if not answers:
            return
        self._slow_noted.add(target)
        progress = f", with {exchange.progress_count()} progress notifications" if exchange.progress_count() else ""
        meanwhile = ("it answered nothing else meanwhile (its one thread was busy with the call: other requests "
                     "wait), but it answered, so it is slow" if exchange.blocked else
                     "the server answered pings meanwhile, so it is slow")
        self.emit(Notice(f"{target} answered after {answers[0].at:.1f}s{progress}: slower than --timeout "
                         f"({self.config.timeout:g}s), but {meanwhile}, not a hang (calls get up to --call-timeout, "
                         f"{self.config.call_timeout:g}s)", level="info"))

    def _judge(self, phase: PhaseName, exchange: Exchange) -> list[Verdict]:
        """Run the oracles, emit new findings; return every failure with its key (Hypothesis shrinks on them)."""
        self._note_slow(exchange)
        self.stats.cases += 1
        self.stats.phases[phase] = self.stats.phases.get(phase, 0) + 1
        if phase in CALL_PHASES:
            target = exchange.case.target
            self.stats.targets[target] = self.stats.targets.get(target, 0) + 1
        judged = self.findings.judge_all(exchange, self.config.oracles)
        new = tuple(finding for _, _, finding in judged if finding is not None)
        for finding in new:
            self.emit(FindingFound(finding))
        if new:
            # Saved as found, so that a kill -9 or the OOM killer loses nothing found so far; the end of
            # the run rewrites each with its smallest reproducer and the verdict of its re-run.
            self._save_corpus(new)
        self.emit(CaseDone(phase, exchange, new))
        return judged


def _count_of(plan: TargetPlan, *, fuzzed: bool = False) -> str:
    """How many targets of each kind, in words: "3 tools" (`fuzzed`: only the kinds the fuzz phase searches)."""
    counts: dict[str, int] = {}
    for target in plan.targets:
        if target.type.fuzzed or not fuzzed:
            counts[target.kind.value] = counts.get(target.kind.value, 0) + 1
    return ", ".join(f"{count} {kind}{'' if count == 1 else 's'}" for kind, count in counts.items())


def _first_tool(tools: list[dict], selection: Selection) -> str | None:
    """The first tool the selection lets mcpfuzz call (the catalogue calls it with bad arguments)."""
    for tool in tools:
        if isinstance(tool.get("name"), str) and skip_reason(TOOLS, tool, selection) is None:
            return tool["name"]
    return None


async def run(config: RunConfig, emit: EventSink) -> RunFinished:
    """Run `mcpfuzz run` with `config`, sending events to `emit`."""
    return await Run(config, emit).execute()
