"""Finishing a run: findings re-run on a fresh server, marked (SDK, baseline), saved, and the outcome told."""

from __future__ import annotations

import time
from dataclasses import replace
from functools import partial

from mcpfuzz.engine.alone_answers import run_case
from mcpfuzz.engine.attribution.known import explain
from mcpfuzz.engine.events import Finding, Notice, RunFinished, Upstream
from mcpfuzz.engine.judge import FindingSet, group_by_upstream, group_under_tools, name_the_share
from mcpfuzz.engine.observe.start import judge_planted, judge_with
from mcpfuzz.engine.plan.context import RunContext
from mcpfuzz.engine.plan.verdict import untested_reason
from mcpfuzz.engine.replied_frames import group_replied_frames
from mcpfuzz.engine.security.planted_run import plantable, run_planted
from mcpfuzz.engine.session.modes import patient_until, speaking, thorough
from mcpfuzz.engine.session.session import HarnessError, Session
from mcpfuzz.jsonrpc.case_json import case_from_json, case_to_json
from mcpfuzz.jsonrpc.exchange import Exchange
from mcpfuzz.jsonrpc.frame import Case
from mcpfuzz.jsonrpc.oracle_ids import OracleId
from mcpfuzz.jsonrpc.versions import PLAIN_JSONRPC, Era
from mcpfuzz.transport.errors import ServerStartError, TransportError
from mcpfuzz.transport.http_target import HttpTarget

MAX_VERIFIED = 50  # findings re-run on a fresh server at most, the most severe first
# What the report says of a plain JSON-RPC 2.0 server (`--jsonrpc`) in place of an MCP era and version.
PLAIN_ERA, PLAIN_VERSION = "jsonrpc", PLAIN_JSONRPC


async def verify(context: RunContext, session: Session, until: float, *, final: bool = True) -> None:
    """Re-run each finding's frames alone on a fresh server, as `mcpfuzz replay` will; mark the ones that fail again.

    A --security run's re-check plants a new workspace for each (its own canaries, none of the run's files). The
    most severe first, and of those the smallest; what the time leaves unchecked is said at the end (`final`).
    """
    pending = [f for f in context.findings.all() if f.case is not None and f.reproducible is None]
    pending.sort(key=lambda f: (-f.severity, sum(map(len, f.frames))))
    if not pending:
        return
    restarts = session.restarts
    unchecked = len(pending) - len(pending[:MAX_VERIFIED])
    planted = _planted(context)
    if planted and isinstance(context.config.target, HttpTarget):
        # A launched server listens on the run's port: the re-checks' servers need it (the run's starts again later).
        await session.server.kill()
        session.recycle()
    # A slow or wedged re-run waits no longer than verification's time: the run's budget holds.
    with thorough(session), patient_until(session, until):
        for done, finding in enumerate(pending[:MAX_VERIFIED]):
            if time.monotonic() + 0.5 > until:
                unchecked += len(pending[:MAX_VERIFIED]) - done
                break
            assert finding.case is not None
            if finding.oracle == OracleId.NO_HANG and time.monotonic() + _wedge_wait(session, finding) > until:
                unchecked += 1  # its re-run would be cut before it could hang again: the quicker ones go on
                continue
            case = case_from_json(case_to_json(finding.case), list(finding.frames))
            try:
                exchange = await _rerun(context, session, finding, case, until)
            except (HarnessError, ServerStartError, TransportError):
                break
            if exchange is None or exchange.cut_short:  # its wait was cut by verification's time: unchecked
                unchecked += len(pending[:MAX_VERIFIED]) - done
                break
            again = FindingSet().judge(exchange, (finding.oracle,))
            if context.canaries is not None and not planted:
                context.canaries.settle(exchange)
            context.findings.mark(finding, bool(again))
            if not again:
                context.emit(Notice(f"{finding.oracle} on {finding.target} did not fail again on a fresh server: "
                                    "saved and reported as not reproducible"))
    session.restarts = restarts  # fresh servers for re-runs are not restarts the server caused
    if unchecked and final:
        context.emit(Notice(f"no time left to re-run {unchecked} of {len(pending)} findings; they are saved "
                            "unchecked (raise --budget to verify them all)"))


def _planted(context: RunContext) -> bool:
    """True when each re-check plants a workspace of its own: a --security run of a server mcpfuzz starts."""
    return context.security is not None and context.target_as_given is not None \
        and plantable(context.target_as_given)


async def _rerun(context: RunContext, session: Session, finding: Finding, case: Case, until: float
                 ) -> Exchange | None:
    """The finding's case alone on a fresh server: in a --security run, in a newly planted workspace (nothing the run
    left in its own counts), else a fresh process of the run's session. None when verification's time cut it."""
    era = Era(finding.era) if finding.era else None
    if _planted(context):
        assert context.security is not None and context.target_as_given is not None
        return await run_planted(context.target_as_given, session.options, case, context.security.layout,
                                 era=era, version=finding.protocol_version or None, until=until,
                                 judged=partial(judge_planted, context))
    with speaking(session, era, finding.protocol_version or None):
        exchange = await run_case(session, case)
    if context.canaries is not None:
        context.canaries.look(exchange)
    if context.observation is not None:
        judge_with(context, exchange)
    return exchange


def _wedge_wait(session: Session, finding: Finding) -> float:
    """How long the re-run of a hang of a target that has answered before takes to fail again: the target's fair
    wait, then a fresh request's --timeout (0 for other hangs: silence to a frame is judged once the server
    answers the barrier)."""
    timeout = session.options.timeout
    bound = session.patience.answer_times.bound(finding.target, timeout)
    return 0.0 if bound is None else min(bound, session.options.call_timeout) + timeout


def attribute(context: RunContext, findings: tuple[Finding, ...]) -> tuple[Finding, ...]:
    """Mark the findings that are known behaviours of the server's SDK version, with the upstream link."""
    if context.sdk is None or context.session is None:
        return findings
    transport = context.session.transport.value
    marked = []
    for finding in findings:
        known = explain(context.sdk, transport, finding, finding.folded)
        if known is not None:
            finding = replace(finding, upstream=Upstream(context.sdk.describe(), known.behaviour, known.link))
        marked.append(finding)
    return tuple(marked)


def apply_baseline(context: RunContext, findings: tuple[Finding, ...]) -> tuple[Finding, ...]:
    """Mark the findings --baseline accepts; note its entries this run replayed and did not see again."""
    baseline = context.config.baseline
    if baseline is None:
        return findings
    found = {fingerprint for f in findings for fingerprint in (f.fingerprint, *f.grouped)}
    if context.probe is not None and not context.stopped:  # an interrupted run proves nothing stale
        context.stale = tuple(entry.describe() for entry in baseline.stale(found))
        for entry in baseline.unseen_unreplayable(found):
            context.emit(Notice(f"baseline: {entry.describe()} was not seen in this run; it has no transcript, "
                                "so it cannot be told stale"))
    accepted = baseline.fingerprints
    return tuple(replace(f, baselined=True) if f.fingerprint in accepted or accepted.intersection(f.grouped) else f
                 for f in findings)


def outcome(context: RunContext, findings: tuple[Finding, ...], corpus_paths: dict[str, str]) -> RunFinished:
    """The run's outcome as reporters see it (also a soak's checkpoint so far)."""
    stats = context.stats
    for adjust in context.report_adjusters:
        findings, stats = adjust(findings, stats)
    if context.shared is not None:  # found first by another machine: known, as if the corpus had held it
        findings = tuple(replace(f, known=True) if f.fingerprint in context.shared.elsewhere else f
                         for f in findings)
    probe = context.probe
    era = None if probe is None else PLAIN_ERA if context.plain else probe.era.value
    return RunFinished(stats, findings, probe.version if probe else None, era, context.stopped, context.error,
                       corpus_paths, context.stale, untested=untested_reason(context),
                       stack=None if context.sdk is None or context.plain else context.sdk.to_json(),
                       internal_errors=context.internal.entries())


def finish(context: RunContext, started: float) -> RunFinished:
    """After the last phase: counters in, findings marked and saved, the outcome told to every handler."""
    context.count_session()
    context.stats.duration = time.monotonic() - started
    context.stats.plan = plan_summary(context)
    if (limited := context.rate_limits.summary(context.stats.cases)) is not None:
        context.emit(limited)
    findings = apply_baseline(context, name_the_share(group_replied_frames(group_by_upstream(group_under_tools(
        attribute(context, tuple(context.findings.all()))))), context.stats.targets))
    finished = outcome(context, findings, context.save(findings))
    if context.shared is not None:
        for notice in context.shared.close(context.shared_status()):
            context.emit(notice)
    context.emit(finished)
    return finished


def plan_summary(context: RunContext) -> dict:
    """What was planned and what happened: each phase (ran or why not, its share of the run), and the targets
    declared, planned, called (the JSON report's `stats.plan`)."""
    elapsed = context.stats.duration
    split = context.budget.split(elapsed)
    began = context.budget.began
    phases = [{"name": name, "ran": not reason, **({"skipped": reason} if reason else {}),
               **({"started_s": round(began[name], 3)} if name in began else {}),
               "seconds": round(context.budget.spent.get(name, 0.0), 3), "share": split.get(name, 0.0)}
              for name, reason in context.phase_log]
    targets = context.targets
    called = context.stats.targets
    summary: dict = {"phases": phases}
    if targets is not None:
        planned = [target.label for target in targets.targets]
        summary["targets"] = {"planned": planned, "skipped": dict(targets.skipped),
                              "called": sum(1 for label in planned if called.get(label)),
                              "not_called": [label for label in planned if not called.get(label)]}
    return summary
