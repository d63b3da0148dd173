"""The lint phase: read what the server declares, send a few cheap requests, and run the lint rules on it all."""

from __future__ import annotations

from functools import partial
from typing import Any

import anyio

from mcpfuzz.engine.events import Finding, Sample, fingerprint_of
from mcpfuzz.engine.session.session import Session
from mcpfuzz.engine.surface.listing import list_everything
from mcpfuzz.engine.surface.probe import ProbeResult
from mcpfuzz.jsonrpc import expectation as ex
from mcpfuzz.jsonrpc.exchange import ID_CURRENT, ID_UNKNOWN, Exchange
from mcpfuzz.jsonrpc.frame import Case
from mcpfuzz.jsonrpc.oracle_ids import OracleId
from mcpfuzz.jsonrpc.versions import LATEST_LEGACY, LEGACY_VERSIONS, Era
from mcpfuzz.lint import builtin as _rules  # noqa: F401  (registers the rules now; see _rules below)
from mcpfuzz.lint.declarations import short
from mcpfuzz.lint.model import Declared, LintSeverity, Problem
from mcpfuzz.lint.registry import run_rules
from mcpfuzz.oracles.base import Severity
from mcpfuzz.strategies.messages import FrameBuilder, initialize_params

# _rules: imported with the run, before any background thread, as CPython 3.11 can fail ("AST constructor recursion
# depth mismatch") when two threads parse source at once, and target preparation runs in one.
UNKNOWN_METHOD = "mcpfuzz/no-such-method"
HANDSHAKE_CASES = {"discover-first": "server/discover", "initialize": "initialize"}


def _answer(exchange: Exchange) -> Any:
    for arrival in exchange.arrivals:
        if arrival.id_tag == ID_CURRENT:
            return arrival.incoming.message
    return None


async def _ask(session: Session, method: str, params: Any, case_id: str) -> Exchange:
    rid = session.next_id()
    expect = ex.method_not_found(rid) if method == UNKNOWN_METHOD else ex.any_answer(rid, method)
    return await session.run_case(Case(case_id, "lint", method, session.message(method, params, rid), expect,
                                       patient=True))


def _handshake_result(probe: ProbeResult, method: str) -> Any:
    """The result the probe's handshake (`initialize` or `server/discover`) was answered with, or None."""
    result = None
    for exchange in probe.exchanges:
        if HANDSHAKE_CASES.get(exchange.case.id) == method:
            reply = _answer(exchange)
            result = reply.get("result") if isinstance(reply, dict) else None
    return result


def fresh_process_checks(probe: ProbeResult, *, in_run: bool) -> bool:
    """Whether `lint` starts fresh processes of its own (two: the check's, then one handshaken again for what
    follows): initialize asking for a legacy version a modern server announces, and (legacy, outside `run`) a
    request before initialize, whose rule is advice that `run` never files."""
    if probe.era is Era.MODERN:
        return _legacy_announced(_handshake_result(probe, "server/discover")) is not None
    return not in_run


async def gather(session: Session, probe: ProbeResult, *, fresh_checks: bool = True,
                 before_initialize: bool = True) -> Declared:
    """The snapshot the rules judge: the probe's handshake, every list, a liveness request and an unknown method.

    `fresh_checks` adds the checks on a fresh process (the session is handshaken again afterwards): in the legacy
    era a request before `initialize` (when `before_initialize`), in the modern era `initialize` asking for a
    legacy version the server announces.
    """
    modern = probe.era is Era.MODERN
    declared = Declared(probe.era.value, probe.version, "server/discover" if modern else "initialize")
    exchanges = list(probe.exchanges)
    declared.handshake = _handshake_result(probe, declared.handshake_method)
    if session.server.session_id:
        declared.session_ids.append(session.server.session_id)
    listings = await list_everything(session, declared.capabilities)
    declared.lists = listings.outcomes
    exchanges += listings.exchanges
    method, params = session.liveness_request()
    declared.liveness_method = method
    liveness = await _ask(session, method, params, "liveness")
    unknown = await _ask(session, UNKNOWN_METHOD, {}, "unknown-method")
    declared.liveness_reply, declared.unknown_method_reply = _answer(liveness), _answer(unknown)
    exchanges += [liveness, unknown]
    if fresh_checks and before_initialize and not modern:
        exchanges.append(await _before_initialize(session, declared))
    announced = _legacy_announced(declared.handshake) if fresh_checks and modern else None
    if announced is not None:
        exchanges.append(await _initialize_announced(session, declared, announced))
    for exchange in exchanges:
        for arrival in exchange.responses():
            declared.responses.append(arrival.incoming.message)
            if arrival.id_tag == ID_UNKNOWN:
                declared.unknown_ids.append(arrival.incoming.message.get("id"))
    return declared


def _legacy_announced(result: Any) -> str | None:
    """The latest legacy version a modern server's supportedVersions lists, if any."""
    supported = result.get("supportedVersions") if isinstance(result, dict) else None
    listed = [v for v in supported if v in LEGACY_VERSIONS] if isinstance(supported, list) else []
    return max(listed) if listed else None


async def _initialize_announced(session: Session, declared: Declared, version: str) -> Exchange:
    """initialize asking for a legacy version the modern server announces, on a fresh process."""
    builder = FrameBuilder(Era.LEGACY, version)
    rid = session.next_id()
    case = Case("initialize-announced", "lint", f"initialize asking for {version}",
                builder.frame("initialize", initialize_params(version), rid), ex.any_answer(rid, "initialize"),
                fresh=True, era=Era.LEGACY, patient=True)
    session.recycle()
    exchange = await session.run_case(case)
    declared.announced = (version, _answer(exchange))
    await _ready_again(session)
    return exchange


async def _before_initialize(session: Session, declared: Declared) -> Exchange:
    """tools/list as the first frame of a fresh process (legacy): served before the handshake or refused."""
    builder = FrameBuilder(Era.LEGACY, LATEST_LEGACY)
    rid = session.next_id()
    case = Case("request-before-initialize", "lint", "tools/list before initialize", builder.frame("tools/list", {},
                rid), ex.any_answer(rid, note="before the handshake any error is correct"), fresh=True,
                era=Era.LEGACY, patient=True)
    session.recycle()  # a fresh process for our own check, not a restart the server caused
    exchange = await session.run_case(case)
    declared.pre_init_reply = _answer(exchange)
    await _ready_again(session)
    return exchange


async def _ready_again(session: Session) -> None:
    """A fresh process with the era's handshake done, as before the check: what comes next (the HTTP cases ask
    whether there is a session) sees the server as the probe left it. Not a restart the server caused."""
    session.recycle()
    await session.ensure_ready()


async def lint(session: Session, probe: ProbeResult, *, in_run: bool = False,
               fresh_checks: bool = True, until: float | None = None) -> list[Problem]:
    """Every lint problem of the server the session talks to (in `run`, without the rules an oracle covers, and
    without the request before initialize: its rule is advice, never a finding of `run`, and costs two process
    starts); `fresh_checks` False leaves out every check on a fresh process; past `until`, no further rule starts
    (RulesCut).

    The rules are CPU work (thousands of schemas take seconds): they run in a worker thread, so the budget,
    Ctrl-C and SIGTERM still stop the run on time.
    """
    declared = await gather(session, probe, fresh_checks=fresh_checks, before_initialize=not in_run)
    return await anyio.to_thread.run_sync(partial(run_rules, declared, skip_covered=in_run, until=until),
                                          abandon_on_cancel=True)


# A lint error breaks a MUST in what the server declares (medium, as a wrong error code); a warning is a SHOULD
# or a trap (low); info is advice for `mcpfuzz lint`, not a finding of `run`.
FINDING_SEVERITY = {LintSeverity.ERROR: Severity.MEDIUM, LintSeverity.WARNING: Severity.LOW}


def lint_findings(problems: list[Problem], era: str, version: str) -> list[Finding]:
    """The `run` findings of lint problems: oracle `lint`, the rule id, the target when there is one."""
    findings = []
    for problem in problems:
        severity = FINDING_SEVERITY.get(problem.severity)
        if severity is None:
            continue
        received = (f"{problem.location}: {short(problem.value, 280)}",) if problem.value is not None else \
            (problem.location,)
        if problem.count > 1:
            # One flaw in several places: one finding on its first target, naming the others; its identity is
            # the flaw (rule, kind of target, evidence), not one of its places.
            also = tuple(t for t in problem.targets[1:])
            findings.append(Finding(
                oracle=OracleId.LINT.value, severity=severity, title=f"{problem.rule} {problem.name}",
                message=f"{problem.rule} in {problem.count} places, first at {problem.location}: {problem.message}",
                target=problem.targets[0], case_title=f"lint rule {problem.rule} ({problem.name})",
                expected=problem.fix, frames=(), received=received + tuple(problem.locations[1:MAX_PLACES]),
                key=f"{problem.rule}|{problem.evidence}", era=era, protocol_version=version, observed=True,
                rule=problem.rule, scope=problem.target if problem.target and problem.target.endswith("/*") else "",
                also_on=also,
                samples=tuple(Sample(location, 1, target) for location, target in
                              zip(problem.locations[:MAX_PLACES], _targets_of(problem), strict=False)),
                sample_count=problem.count,
                # The identity each place had as a finding of its own: a baseline that accepted one still does.
                grouped=tuple(fingerprint_of(OracleId.LINT.value, target, f"{problem.rule}|{location}")
                              for location, target in zip(problem.locations, _targets_of(problem), strict=False))))
            continue
        findings.append(Finding(
            oracle=OracleId.LINT.value, severity=severity, title=f"{problem.rule} {problem.name}",
            message=f"{problem.rule} at {problem.location}: {problem.message}", target=problem.target or "server",
            case_title=f"lint rule {problem.rule} ({problem.name})", expected=problem.fix, frames=(),
            received=received, key=f"{problem.rule}|{problem.location}", tool=problem.tool, era=era,
            protocol_version=version, observed=True, rule=problem.rule))
    return findings


MAX_PLACES = 20  # places of one flaw a run's finding lists (all of them in `mcpfuzz lint --json`)


def _targets_of(problem: Problem) -> list[str]:
    """The target of each of a grouped problem's locations, read from the location (`tools[NAME]...`)."""
    names = {t.split("/", 1)[1]: t for t in problem.targets if "/" in t}
    found = []
    for location in problem.locations:
        inside = location.split("[", 1)[1].split("]", 1)[0] if "[" in location else ""
        found.append(names.get(inside, problem.targets[0] if problem.targets else "server"))
    return found


def silent_handshake(era: str = "legacy", version: str = LATEST_LEGACY) -> list[Problem]:
    """The problems of a server that never answered the handshake (nothing else can be judged)."""
    return run_rules(Declared(era, version, "initialize", handshake_answered=False))
