"""`mcpfuzz replay`: re-send a transcript's frames to a fresh server and re-run the oracles."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path

from mcpfuzz.corpus.store import CorpusError, CorpusStore
from mcpfuzz.engine.alone_answers import run_case
from mcpfuzz.engine.events import Finding
from mcpfuzz.engine.judge import FindingSet
from mcpfuzz.engine.observe.start import replay_observation
from mcpfuzz.engine.observe.watch import ObservationWatch
from mcpfuzz.engine.security.canary_watch import CanaryWatch
from mcpfuzz.engine.security.workspace import WORKSPACE_PLACEHOLDER, SecurityWorkspace
from mcpfuzz.engine.session.modes import speaking, thorough
from mcpfuzz.engine.session.session import HarnessError, Session, SessionOptions
from mcpfuzz.engine.transcripts import Replayable, from_transcript
from mcpfuzz.jsonrpc.case_json import CaseFormatError
from mcpfuzz.jsonrpc.exchange import Exchange
from mcpfuzz.jsonrpc.frame import Case
from mcpfuzz.jsonrpc.parts.observed import needs_observation
from mcpfuzz.jsonrpc.versions import PLAIN_JSONRPC
from mcpfuzz.strategies.payloads.canaries import CanaryLayout
from mcpfuzz.transport.connect import ServerTarget
from mcpfuzz.transport.errors import ServerStartError, TransportError

FIXED, FAILED, ERROR = "FIXED", "FAILED", "ERROR"


@dataclass
class ReplayOutcome:
    """One transcript replayed: FIXED, FAILED (with the findings) or ERROR (with the reason)."""

    path: Path
    status: str
    reason: str = ""
    replayable: Replayable | None = None
    findings: list[Finding] = field(default_factory=list)
    server: ServerTarget | None = None


def load_replayables(paths: list[Path]) -> tuple[list[Replayable], list[ReplayOutcome]]:
    """Transcripts from files and folders; broken ones come back as ERROR outcomes."""
    found: list[tuple[Path, dict | None, str]] = []
    for path in paths:
        if path.is_dir():
            try:
                good, broken = CorpusStore(path).load_all()
            except CorpusError as error:
                found.append((path, None, str(error)))
                continue
            found += [(p, data, "") for p, data in good] + [(p, None, reason) for p, reason in broken]
        else:
            try:
                found.append((path, CorpusStore(path.parent).load(path), ""))
            except CorpusError as error:
                found.append((path, None, str(error)))
    replayables, errors = [], []
    for path, data, reason in found:
        if data is None:
            errors.append(ReplayOutcome(path, ERROR, reason))
            continue
        try:
            replayables.append(from_transcript(path, data))
        except CaseFormatError as error:
            errors.append(ReplayOutcome(path, ERROR, f"the transcript cannot be replayed: {error}"))
    return replayables, errors


def judge_replay(replayable: Replayable, exchange: Exchange, oracles: tuple[str, ...]) -> tuple[str, list[Finding]]:
    """FAILED when the transcript's oracle fires again on the replayed exchange, else FIXED."""
    findings = FindingSet().judge(exchange, oracles)
    same = [f for f in findings if f.oracle == replayable.oracle]
    return (FAILED if same else FIXED), findings


async def replay_one(replayable: Replayable, server: ServerTarget | None, options: SessionOptions,
                     oracles: tuple[str, ...]) -> ReplayOutcome:
    """A fresh server, the transcript's frames, the oracles; the server is stopped afterwards.

    A --security transcript gets a fresh workspace with its canaries (removed afterwards, errors included): the
    server is started in it, the frames aim at it, and its hits folder is watched."""
    if server is None:
        return ReplayOutcome(replayable.path, ERROR, "the transcript names no server command; give one after `--`",
                             replayable)
    if replayable.version == PLAIN_JSONRPC:  # a plain JSON-RPC server: no handshake before the frames
        options = replace(options, plain_jsonrpc=True)
    if replayable.security is None and WORKSPACE_PLACEHOLDER in server.label:
        return ReplayOutcome(replayable.path, ERROR, f"{WORKSPACE_PLACEHOLDER} in the server's command is the "
                             "workspace of a --security finding, and this transcript is not one; write a folder in "
                             "its place", replayable, server=server)
    if replayable.security is None:
        return await _observed_replay(replayable, replayable.case, server, options, oracles, None, None)
    workspace = SecurityWorkspace.create()
    try:
        case = workspace.relocate(replayable.case, replayable.security)
        outcome = await _observed_replay(replayable, case, workspace.place(server), options, oracles,
                                         CanaryWatch(workspace.layout.hits, workspace.folder), workspace.layout)
        # The workspace is gone once this returns: the outcome shows the server with `{workspace}` as saved.
        return replace(outcome, server=server)
    finally:
        workspace.remove()


async def _observed_replay(replayable: Replayable, case: Case, server: ServerTarget, options: SessionOptions,
                           oracles: tuple[str, ...], canaries: CanaryWatch | None, layout: CanaryLayout | None
                           ) -> ReplayOutcome:
    """`_replay_in` with the side effects of the case seen, when the server is a Python or Node program; a finding
    the hook saw cannot be judged again without it (an ERROR, not FIXED)."""
    observed = replay_observation(server, layout, options.env or {})
    needed = needs_observation(case.expect, replayable.oracle)
    if isinstance(observed, str):
        if needed:
            return ReplayOutcome(replayable.path, ERROR, f"the finding was seen by the hook mcpfuzz loads into the "
                                 f"server, and this server cannot be given it: {observed}", replayable, server=server)
        return await _replay_in(replayable, case, server, options, oracles, canaries)
    setup, watch = observed
    try:
        options = replace(options, env={**(options.env or {}), **setup.env})
        outcome = await _replay_in(replayable, case, server, options, oracles, canaries, watch)
    finally:
        setup.remove()
    if needed and outcome.status != ERROR and not watch.seeing:
        return replace(outcome, status=ERROR, findings=[], reason="the finding was seen by the hook mcpfuzz loads "
                       "into the server, and the hook never started in it (another interpreter?)")
    return outcome


async def _replay_in(replayable: Replayable, case: Case, server: ServerTarget, options: SessionOptions,
                     oracles: tuple[str, ...], canaries: CanaryWatch | None,
                     watch: ObservationWatch | None = None) -> ReplayOutcome:
    """The case sent to a fresh `server` and judged (with the hit files `canaries` saw, when it watches any, and
    the side effects `watch` saw)."""
    try:
        async with Session(server, options) as session:
            with speaking(session, replayable.era, replayable.version or None), thorough(session):
                exchange = await run_case(session, case)
    except (ServerStartError, HarnessError, TransportError) as error:
        return ReplayOutcome(replayable.path, ERROR, f"the server could not be run: {error}", replayable,
                             server=server)
    if exchange.crash is not None and not exchange.arrivals:
        # It ended without a word: a crash on the frame, or a command that never ran a server (a path that is not
        # there). Only a server that can be started says anything about the transcript.
        refusal = await start_refusal(replayable, server, options)
        if refusal:
            tail = exchange.crash.stderr_tail.strip().splitlines()[-1:] or [refusal]
            return ReplayOutcome(replayable.path, ERROR, f"the server never started: it {exchange.crash.describe()} "
                                 f"before answering anything: {tail[0][:200]}", replayable, server=server)
    unusable = unusable_replay(replayable, exchange)
    if unusable:
        return ReplayOutcome(replayable.path, ERROR, unusable, replayable, server=server)
    if canaries is not None:
        canaries.look(exchange)
    if watch is not None:
        watch.look(exchange)
        if not watch.seeing:
            exchange.observation = None
    status, findings = judge_replay(replayable, exchange, oracles)
    return ReplayOutcome(replayable.path, status, "", replayable, findings, server)


async def start_refusal(replayable: Replayable, server: ServerTarget, options: SessionOptions) -> str:
    """Why a fresh `server` does not answer its handshake and a liveness request ('' when it does: it starts)."""
    try:
        async with Session(server, options) as session:
            with speaking(session, replayable.era, replayable.version or None):
                await session.ensure_ready()
                await session.call(*session.liveness_request())
    except (ServerStartError, HarnessError, TransportError) as error:
        return str(error) or type(error).__name__
    return ""


def unusable_replay(replayable: Replayable, exchange: Exchange) -> str:
    """Why a replay says nothing about the transcript's own failure ('' when it does): the server died or stopped
    answering, and the transcript is not about a crash or a hang. Such a replay is neither FIXED nor FAILED."""
    if replayable.oracle in ("no-crash", "no-hang"):
        return ""
    if exchange.crash is not None:
        tail = exchange.crash.stderr_tail.strip().splitlines()[-1:] or ["(stderr was empty)"]
        return f"the server {exchange.crash.describe()} before the replay could be judged: {tail[0][:200]}"
    if exchange.barrier_answered is False or exchange.write_error:
        return ("the server did not answer a request sent after the frame (still starting, or stuck); raise "
                "--timeout if it starts slowly")
    return ""
