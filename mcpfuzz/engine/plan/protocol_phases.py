"""The phases about the protocol: probe, lint, the corpus and baseline replayed, catalogue, lifecycle, verification
of what they found. After the probe they share what the call phases leave (`Budget.protocol_deadline`)."""

from __future__ import annotations

import time
from collections.abc import Collection, Iterable
from contextlib import aclosing
from dataclasses import dataclass, replace
from pathlib import Path

import anyio

from mcpfuzz.corpus.store import MANIFEST, TEMP_PREFIX
from mcpfuzz.engine.alone_answers import run_case
from mcpfuzz.engine.config import CALL_PHASES
from mcpfuzz.engine.events import FindingFound, Notice, PhaseName, PhaseStarted, ProbeDone, ServerRestarted
from mcpfuzz.engine.judge import received_lines
from mcpfuzz.engine.monitor.pileup import check_session_pileup
from mcpfuzz.engine.plan.context import RunContext
from mcpfuzz.engine.plan.finishing import verify
from mcpfuzz.engine.plan.stack import settle_stack
from mcpfuzz.engine.replay import load_replayables, unusable_replay
from mcpfuzz.engine.searches.concurrent_calls import read_only_tool_calls
from mcpfuzz.engine.searches.mirrored_calls import mirrored_call, mirrors_any
from mcpfuzz.engine.session.modes import speaking, thorough
from mcpfuzz.engine.session.session import HarnessError, Session
from mcpfuzz.engine.session.windows import run_in_order
from mcpfuzz.engine.surface.lint_phase import fresh_process_checks, lint, lint_findings
from mcpfuzz.engine.surface.probe import probe
from mcpfuzz.engine.surface.target_kinds import TOOLS
from mcpfuzz.engine.surface.targets import Selection, skip_reason, target_types
from mcpfuzz.engine.transcripts import Replayable, from_transcript
from mcpfuzz.jsonrpc.case_json import CaseFormatError
from mcpfuzz.jsonrpc.exchange import Exchange
from mcpfuzz.jsonrpc.frame import Case
from mcpfuzz.jsonrpc.oracle_ids import OracleId
from mcpfuzz.jsonrpc.parts.observed import needs_observation
from mcpfuzz.jsonrpc.target_kind import TargetKind
from mcpfuzz.jsonrpc.versions import Era
from mcpfuzz.lint.registry import RulesCut
from mcpfuzz.strategies.cancellation import cancel_case
from mcpfuzz.strategies.catalogue import CatalogueContext, catalogue
from mcpfuzz.strategies.concurrency import concurrent_case
from mcpfuzz.strategies.http_cases import http_cases
from mcpfuzz.strategies.identity_cases import list_identity_cases
from mcpfuzz.strategies.lifecycle import lifecycle
from mcpfuzz.strategies.messages import FrameBuilder
from mcpfuzz.strategies.subscription_cases import listen_case
from mcpfuzz.transport.base import TransportKind
from mcpfuzz.transport.errors import ServerStartError

# Ids of the HTTP family: above the catalogue's, below the harness's 10000.
HTTP_FIRST_ID = 900
CANCEL_FIRST_ID = 960  # the cancellation and concurrency cases' ids, above the HTTP family's
IDENTITY_FIRST_ID = 800  # the list-identity cases' ids, above the lifecycle cases', below the HTTP family's
PILEUP_SECONDS = 4.0  # at most, for the burst of refused requests (about 1-2 s on the servers measured)


@dataclass(frozen=True)
class ProbePhase:
    """Negotiate the era, read every declared list, judge what the probe saw."""

    name: str = PhaseName.PROBE.value

    def skip_reason(self, context: RunContext) -> str | None:
        return None

    async def run(self, context: RunContext, session: Session) -> None:
        context.emit(PhaseStarted(PhaseName.PROBE))
        started = time.monotonic()
        # The handshake and the lists are judged with a barrier each: a second answer to initialize, written a
        # moment after the first, lands in its own case, not in whichever case comes next.
        with thorough(session):
            result = await probe(session, context.config.protocol_version)
        context.probe = result
        await settle_stack(context, session)
        context.budget.note_start(session.startup.median or time.monotonic() - started)
        context.emit(ProbeDone(result.era.value, result.version, result.server_info, result.capabilities,
                               tuple(t.get("name", "?") for t in result.tools), startup=session.startup.first))
        for note in result.notes:
            context.emit(Notice(note))
        for exchange in result.exchanges:
            context.judge(PhaseName.PROBE, exchange)


def catalogue_context(context: RunContext) -> CatalogueContext:
    """What the catalogue is built from: the era, the first callable tool, the capabilities, a listed URI."""
    result = context.probe
    assert result is not None
    uris = [r["uri"] for r in result.declared.get(TargetKind.RESOURCE, []) if isinstance(r.get("uri"), str)]
    return CatalogueContext(result.era, result.version, _first_tool(result.tools, context.selection()),
                            result.capabilities, uris[0] if uris else None)


def _first_tool(tools: list[dict], selection: Selection) -> str | None:
    """The first tool the selection lets mcpfuzz call (the catalogue calls it with bad arguments)."""
    for tool in tools:
        if isinstance(tool.get("name"), str) and skip_reason(TOOLS, tool, selection) is None:
            return tool["name"]
    return None


@dataclass(frozen=True)
class LintPhase:
    """The lint rules on what the server declares, each problem a `lint` finding (mcpfuzz.lint)."""

    name: str = PhaseName.LINT.value

    def skip_reason(self, context: RunContext) -> str | None:
        if OracleId.LINT not in context.config.oracles:
            return "the lint oracle is not selected"
        return None

    async def run(self, context: RunContext, session: Session) -> None:
        assert context.probe is not None
        context.emit(PhaseStarted(PhaseName.LINT))
        fresh = fresh_process_checks(context.probe, in_run=True)
        # Two process starts (the check's, then one handshaken again): only while the calls keep their share.
        if fresh and not context.budget.fits(2 * context.budget.restart_cost, context.budget.protocol_deadline):
            fresh = False
            context.emit(Notice(f"lint: the check on a fresh process (initialize asking for a version the server "
                                f"announces) left out to keep the run's time for calling targets (each new process "
                                f"takes about {context.budget.restart_cost:.1f}s to start here); raise --budget to "
                                "run it"))
        try:
            # Its share, as every phase about the protocol: thousands of declarations on a loaded machine would
            # otherwise spend the calls' time on rules.
            problems = await lint(session, context.probe, in_run=True, fresh_checks=fresh,
                                  until=context.budget.protocol_deadline)
        except (HarnessError, ServerStartError) as error:
            context.emit(Notice(f"the lint phase stopped: {error}"))
            return
        except RulesCut as cut:
            context.emit(Notice(f"lint: left out to keep the run's time for calling targets ({cut}); raise --budget "
                                "to run it"))
            return
        for finding in lint_findings(problems, context.probe.era.value, context.probe.version):
            if context.findings.add_observed(finding) is not None:
                context.emit(FindingFound(finding))


async def _run_replayable(context: RunContext, session: Session, replayable: Replayable,
                          what: str) -> Exchange | None:
    """A saved case on a fresh server in its own era and version; None, said, when the server cannot run it."""
    try:
        with speaking(session, replayable.era, replayable.version or None):
            return await run_case(session, replayable.case)
    except (HarnessError, ServerStartError) as error:
        context.emit(Notice(f"{what} could not be replayed: {error}"))
        return None


def _case_cost(context: RunContext, case: Case) -> float:
    """What a case is expected to take before it starts: a new process costs the server's start-up time."""
    return context.budget.restart_cost if case.fresh else 0.0


def _saved_before(root: Path, written: Collection[Path]) -> bool:
    """Whether the corpus holds a transcript this run did not write (what the probe found is saved as found; the
    manifest and half-written files are no transcripts)."""
    return root.is_dir() and any(path.resolve() not in written for path in root.rglob("*.json")
                                 if path.name != MANIFEST and not path.name.startswith(TEMP_PREFIX))


def _in_this_workspace(context: RunContext, replayables: list[Replayable]) -> list[Replayable]:
    """A --security transcript's frames moved to this run's workspace; without --security it is skipped, said:
    its oracles are off and its server has no workspace, so replaying it would call it fixed wrongly. A finding the
    hook in the server saw is skipped, said, by a run that loads no hook, for the same reason."""
    kept = []
    for replayable in replayables:
        if replayable.security is not None and context.security is None:
            context.emit(Notice(f"corpus: {replayable.path.name} skipped: it is a --security finding, replayed only "
                                "with --security (or by `mcpfuzz replay`)", level="info"))
        elif needs_observation(replayable.case.expect, replayable.oracle) and context.observation is None:
            context.emit(Notice(f"corpus: {replayable.path.name} skipped: it is a finding of what the server was "
                                "seen doing, replayed only with --observe or --security (or by `mcpfuzz replay`)",
                                level="info"))
        elif replayable.security is None:
            kept.append(replayable)
        else:
            assert context.security is not None
            kept.append(replace(replayable, case=context.security.relocate(replayable.case, replayable.security)))
    return kept


@dataclass(frozen=True)
class RegressionPhase:
    """Replay the corpus first: a saved failure that still fails is a finding; a fixed one is marked."""

    name: str = PhaseName.REGRESSION.value

    def skip_reason(self, context: RunContext) -> str | None:
        store = context.corpus.store
        if store is None or not _saved_before(store.root, context.corpus.written):
            return "no corpus"
        if not context.config.replay_corpus:
            return "--no-replay"
        return None

    async def run(self, context: RunContext, session: Session) -> None:
        store = context.corpus.store
        assert store is not None and context.probe is not None
        if not store.root.is_dir():
            return
        replayables, broken = await anyio.to_thread.run_sync(load_replayables, [store.root])
        for outcome in broken:
            context.emit(Notice(f"corpus: {outcome.path.name} skipped: {outcome.reason}"))
        # What this run found before the replay (the probe's findings, saved as found) is not a regression.
        replayables = [r for r in replayables if r.path.resolve() not in context.corpus.written]
        replayables = _in_this_workspace(context, replayables)
        if not replayables:
            return
        context.emit(PhaseStarted(PhaseName.REGRESSION, len(replayables)))
        until = context.budget.protocol_deadline
        for done, replayable in enumerate(replayables):
            if not context.budget.fits(_case_cost(context, replayable.case), until):
                context.emit(Notice(f"corpus: {len(replayables) - done} of {len(replayables)} transcripts were not "
                                    "replayed, to keep the run's time for calling targets (raise --budget to replay "
                                    "them all, or `mcpfuzz replay` them)"))
                return
            exchange = await _run_replayable(context, session, replayable, f"corpus: {replayable.path.name}")
            if exchange is None:
                continue
            judged = context.judge(PhaseName.REGRESSION, exchange)
            unusable = unusable_replay(replayable, exchange)
            if unusable:
                context.emit(Notice(f"corpus: {replayable.path.name} could not be judged: {unusable}"))
                continue
            if not any(failure.oracle == replayable.oracle for failure, _, _ in judged):
                store.mark(replayable.path, status="fixed")
                context.emit(Notice(f"corpus: {replayable.path.name} is fixed", level="info"))


@dataclass(frozen=True)
class BaselineReplayPhase:
    """Replay each baseline entry's transcript, so whether it still fails is known, not left to chance."""

    name: str = "baseline"

    def skip_reason(self, context: RunContext) -> str | None:
        return "no --baseline" if context.config.baseline is None else None

    async def run(self, context: RunContext, session: Session) -> None:
        baseline = context.config.baseline
        assert baseline is not None
        until = context.budget.protocol_deadline
        for entry in baseline.entries:
            if entry.transcript is None or time.monotonic() > until:
                continue
            try:
                replayable = from_transcript(Path(f"baseline:{entry.fingerprint}"), entry.transcript)
            except CaseFormatError as error:
                context.emit(Notice(f"baseline: {entry.describe()} cannot be replayed: {error}"))
                continue
            if replayable.security is not None and context.security is not None:
                replayable = replace(replayable, case=context.security.relocate(replayable.case, replayable.security))
            exchange = await _run_replayable(context, session, replayable, f"baseline: {entry.describe()}")
            if exchange is not None:
                context.judge(PhaseName.REGRESSION, exchange)


async def run_cases(context: RunContext, session: Session, phase: PhaseName, cases: Iterable[Case]) -> None:
    """Cases in order (pipelined where they may be), then the ones that need a fresh process one by one, each
    while it fits in the protocol phases' time; what is left out is said with its count."""
    cases = list(cases)
    context.emit(PhaseStarted(phase, len(cases)))
    until = context.budget.protocol_deadline
    ordinary = [case for case in cases if not case.fresh]
    fresh = [case for case in cases if case.fresh]
    done = await _run_in_order(context, session, phase, ordinary, until)
    if done == len(ordinary):
        for case in fresh:
            if not context.budget.fits(_case_cost(context, case), until):
                break
            try:
                exchange = await run_case(session, case)
            except (HarnessError, ServerStartError) as error:
                context.server_lost(error, phase)
                return
            except Exception as error:  # a bug of mcpfuzz's own ends this case only
                context.note_internal(error, f"{case.target}: {case.title}")
                done += 1
                continue
            context.judge(phase, exchange)
            done += 1
    if done < len(cases):
        cost = context.budget.restart_cost
        why = f" (each new process takes about {cost:.1f}s to start here)" if fresh and cost >= 1 else ""
        context.emit(Notice(f"{phase}: {len(cases) - done} of {len(cases)} cases left out to keep the run's time "
                            f"for calling targets{why}; raise --budget to run them all"))


async def _run_in_order(context: RunContext, session: Session, phase: PhaseName, cases: list[Case],
                        until: float) -> int:
    """The cases through `run_in_order` until `until`; how many were judged."""
    done = 0
    async with aclosing(run_in_order(session, cases, run_alone=run_case)) as exchanges:
        while time.monotonic() < until or not done:  # the first case always runs: a phase never does nothing
            restarts = session.restarts
            try:
                exchange = await anext(exchanges)
            except StopAsyncIteration:
                break
            except (HarnessError, ServerStartError) as error:
                context.server_lost(error, phase)
                return len(cases)  # nothing more can run: not said as left out for time
            if session.restarts > restarts and not exchange.case.fresh:
                context.emit(ServerRestarted("restarted after the previous case"))
            context.judge(phase, exchange)
            done += 1
    return done


@dataclass(frozen=True)
class CataloguePhase:
    """The fixed malformed frames, the HTTP family, cases of several requests at once, and the session pile-up."""

    name: str = PhaseName.CATALOGUE.value

    def skip_reason(self, context: RunContext) -> str | None:
        return None if PhaseName.CATALOGUE in context.config.phases else "not in --phases"

    async def run(self, context: RunContext, session: Session) -> None:
        built = catalogue_context(context)
        cases = [*catalogue(built), *await _http_cases(context, session, built),
                 *await _multi_frame_cases(context, session, built)]
        await run_cases(context, session, PhaseName.CATALOGUE, cases)
        if "session-leak" in context.config.oracles:
            await _session_pileup(context, session)


async def _http_cases(context: RunContext, session: Session, built: CatalogueContext) -> list[Case]:
    """The HTTP family, over streamable HTTP only (legacy HTTP+SSE has no status-level rules to check)."""
    if session.transport is not TransportKind.STREAMABLE_HTTP:
        return []
    mirrored = None
    # Only a tool that mirrors an argument needs prepared arguments here; the catalogue never waits for the rest of
    # the preparation (a big schema takes seconds to prepare, every target's preparation tens of them).
    if built.era is Era.MODERN and context.preparation is not None and mirrors_any(context.preparation.plan.targets):
        # Prepared by the background thread, not beside it: two threads drawing at once can trip CPython 3.11's
        # ast module (Hypothesis reads lambdas' source), so the one preparation is awaited.
        plan = await context.preparation.finished()
        mirrored = await anyio.to_thread.run_sync(mirrored_call, plan.targets)
    builder = FrameBuilder(built.era, built.version, next_id=HTTP_FIRST_ID)
    return list(http_cases(builder, tool=built.tool, has_session=bool(session.server.session_id), mirrored=mirrored))


async def _multi_frame_cases(context: RunContext, session: Session, built: CatalogueContext) -> list[Case]:
    """Cases of several requests sent together (one write on stdio, POSTs over streamable HTTP): a request
    cancelled at once, read-only requests in flight at once (tools annotated readOnlyHint: true among
    them), and (stdio) a subscriptions/listen ended by the client. Legacy HTTP+SSE answers on its GET stream,
    where nothing tells which POST an answer belongs to."""
    if session.transport not in (TransportKind.STDIO, TransportKind.STREAMABLE_HTTP) or context.probe is None:
        return []
    await context.hypothesis().ready()
    planned = context.preparation.plan.targets if context.preparation is not None else []
    tool_calls = await anyio.to_thread.run_sync(read_only_tool_calls, planned)
    builder = FrameBuilder(built.era, built.version, next_id=CANCEL_FIRST_ID)
    list_methods = [t.list_method for t in target_types().values()
                    if t.capability in built.capabilities and t.list_method is not None]
    uris = [r["uri"] for r in context.probe.declared.get(TargetKind.RESOURCE, []) if isinstance(r.get("uri"), str)
            and not context.selection().excludes(TargetKind.RESOURCE.label(r["uri"]))]
    cases = (cancel_case(builder, built.capabilities), concurrent_case(builder, list_methods, uris, tool_calls),
             # Over HTTP a listen is an SSE stream the client ends by closing it: stdio only.
             listen_case(builder, built.capabilities, built.resource)
             if session.transport is TransportKind.STDIO else None)
    return [case for case in cases if case is not None]


async def _session_pileup(context: RunContext, session: Session) -> None:
    """Streamable HTTP with --launch: a burst of refused requests must not make the server grow."""
    budget = context.budget
    # A run that counts its examples sends the whole burst (only --budget ends it): cut by the clock, a loaded
    # machine's burst would be too short to judge, and the finding would depend on the machine's speed.
    until = budget.protocol_deadline if budget.counted else min(time.monotonic() + PILEUP_SECONDS,
                                                                budget.protocol_deadline)
    try:
        verdict = await check_session_pileup(session, deadline=until)
    except (HarnessError, ServerStartError) as error:
        context.emit(Notice(f"the session pile-up check stopped: {error}"))
        return
    if verdict is not None:
        received = (f"<{verdict.refused} refused requests in {verdict.seconds:.1f}s>",
                    *received_lines(verdict.exchange)[:2])
        context.observed(verdict.failure, received, "a refused request leaves nothing behind on the server")


@dataclass(frozen=True)
class LifecyclePhase:
    """Requests before the handshake and odd handshakes, each on a fresh process, each settled by a barrier; and
    (2026-07-28) each declared list on fresh connections, compared with the connection in use's."""

    name: str = PhaseName.LIFECYCLE.value

    def skip_reason(self, context: RunContext) -> str | None:
        return None if PhaseName.LIFECYCLE in context.config.phases else "not in --phases"

    async def run(self, context: RunContext, session: Session) -> None:
        assert context.probe is not None
        probe = context.probe
        identity = list_identity_cases(FrameBuilder(probe.era, probe.version, next_id=IDENTITY_FIRST_ID),
                                       probe.capabilities) if OracleId.LIST_IDENTITY in context.config.oracles else []
        with thorough(session):
            await run_cases(context, session, PhaseName.LIFECYCLE, [*identity, *lifecycle(probe.era)])


@dataclass(frozen=True)
class VerifySoFarPhase:
    """Findings so far re-run on a fresh server while there is time: an unverified finding is worth less than the
    calls this time would have bought, so it stays within the protocol phases' share."""

    name: str = "verify"

    def skip_reason(self, context: RunContext) -> str | None:
        if not any(phase in context.config.phases for phase in CALL_PHASES):
            return "the run's end verifies (no call phase follows)"
        return None

    async def run(self, context: RunContext, session: Session) -> None:
        await verify(context, session, context.budget.protocol_deadline, final=False)
