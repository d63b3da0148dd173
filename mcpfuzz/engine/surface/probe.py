"""Phase 1: start the server, find its era, handshake, list what it declares (tools, and every other target kind)."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from mcpfuzz.engine.client.capabilities import declared_capabilities
from mcpfuzz.engine.errors import UnusableServer
from mcpfuzz.engine.session.session import HarnessError, ServerLost, Session
from mcpfuzz.engine.surface.targets import TargetType, target_types
from mcpfuzz.engine.surface.version_fallback import version_refusal
from mcpfuzz.jsonrpc.exchange import ID_CURRENT, Exchange, ProcessEnd
from mcpfuzz.jsonrpc.expectation import Expectation
from mcpfuzz.jsonrpc.frame import Case
from mcpfuzz.jsonrpc.handshake_order import INITIALIZED
from mcpfuzz.jsonrpc.ids import show_id
from mcpfuzz.jsonrpc.incoming import Incoming
from mcpfuzz.jsonrpc.oracle_ids import OracleId
from mcpfuzz.jsonrpc.parts.listing import ListingCheck
from mcpfuzz.jsonrpc.target_kind import TargetKind
from mcpfuzz.jsonrpc.versions import LATEST_LEGACY, LATEST_MODERN, MODERN_VERSIONS, Era, era_of
from mcpfuzz.strategies.lifecycle import discover_first, initialize_case

MAX_LIST_PAGES = 100


@dataclass
class ProbeResult:
    """What the server told us about itself, and the judged exchanges of the probe."""

    era: Era
    version: str
    capabilities: dict = field(default_factory=dict)
    server_info: dict = field(default_factory=dict)
    declared: dict[TargetKind, list[dict]] = field(default_factory=dict)  # each kind's listed declarations
    exchanges: list[Exchange] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    @property
    def tools(self) -> list[dict]:
        """The tools the server listed."""
        return self.declared.get(TargetKind.TOOL, [])


def _answer(exchange: Exchange) -> Incoming | None:
    for arrival in exchange.arrivals:
        if arrival.id_tag == ID_CURRENT:
            return arrival.incoming
    return None


USAGE_SIGNS = ("usage:", "unrecognized arguments", "unknown option", "unknown argument", "invalid option")


def _exit_tip(end: ProcessEnd) -> str:
    """What to try when the server exits before the handshake: its own usage error says mcpfuzz's options may have
    gone after `--`, where they are the server's; a clean exit at once is often a wrapper that detached it."""
    if any(sign in end.stderr_tail.lower() for sign in USAGE_SIGNS):
        return ("the server refused its command line: mcpfuzz's own options go before `--` (`mcpfuzz run "
                "[OPTIONS] -- CMD [ARGS]`), everything after it is the server's")
    if end.returncode == 0:
        return ("the command ended without an error before answering: if it starts the server in the background "
                "or in a session of its own (setsid, nohup, a daemon), run the server itself in the foreground")
    return "run the command by hand: does it start and wait for input on stdin?"


def _unusable(session: Session, what: str, tip: str, *, silent: bool = False) -> UnusableServer:
    return UnusableServer(what, stderr_tail=session.server.stderr.text(15) or
                          (session.server.end.stderr_tail if session.server.end else ""), tip=tip, silent=silent)


def _frame_words(frame: bytes) -> str:
    """A frame by its method (`notifications/initialized`), or its first bytes when it names none."""
    try:
        message = json.loads(frame)
    except ValueError:
        message = None
    method = message.get("method") if isinstance(message, dict) else None
    return f"`{method}`" if isinstance(method, str) else repr(frame[:80].decode("utf-8", "replace"))


def _death(session: Session, end: ProcessEnd, step: str) -> str:
    """How the server ended at a step of the handshake: its exit status, the frame it died on, its last stdout line
    (its stderr follows in the error)."""
    frames = [_frame_words(frame) for frame in list(session.wire.log)[-2:]]
    last_frame = f"; the last frames it was sent: {', then '.join(frames)}" if len(frames) == 2 else \
        f"; the last frame it was sent: {frames[0]}" if frames else ""
    stdout = session.last_line.decode("utf-8", "replace")
    last_line = f"; its last line on stdout: {stdout[:160]!r}" if stdout else "; it wrote nothing on stdout"
    return f"the server {end.describe()} {step}{last_frame}{last_line}"


async def _sdk_handshake(session: Session) -> None:
    """The era's handshake exactly as the SDK clients send it, on a fresh process (after the probe's own one ended
    the process), then the era's liveness request, as a client's first request: UnusableServer, saying what the
    server did, when the server exits during either (a server that only leaves the request unanswered goes on)."""
    try:
        await session.ensure_ready()
        await session.call(*session.liveness_request())
    except HarnessError as error:
        if session.alive and not isinstance(error, ServerLost):
            return
        end = session.server.end or ProcessEnd(None, session.server.stderr.text())
        raise _unusable(session, f"the handshake as the SDK clients send it failed ({error}): "
                        + _death(session, end, "after answering initialize" if session.era is Era.LEGACY
                                 else "after its handshake"), _exit_tip(end)) from None


async def probe(session: Session, forced_version: str | None) -> ProbeResult:
    """Negotiate as the SDKs do: server/discover first; a result means modern, any error legacy."""
    result = ProbeResult(Era.LEGACY, LATEST_LEGACY)
    discovered: dict[str, Any] | None = None
    legacy_version = forced_version or LATEST_LEGACY
    if forced_version is None or era_of(forced_version) is Era.MODERN:
        requested = forced_version or LATEST_MODERN
        exchange = await session.run_case(discover_first(requested, session.next_id()))
        result.exchanges.append(exchange)
        reply = _answer(exchange)
        if exchange.crash is not None:
            result.notes.append("the server died on server/discover; continuing in the legacy era")
        elif reply is not None and reply.is_result and isinstance(reply.message.get("result"), dict):
            supported = reply.message["result"].get("supportedVersions")
            if forced_version is not None or (isinstance(supported, list)
                                              and any(v in MODERN_VERSIONS for v in supported)):
                discovered = reply.message["result"]
        elif forced_version is not None:
            raise _unusable(session, f"protocol {forced_version} was forced, but server/discover was not "
                            "answered with a result", "drop --protocol-version to let mcpfuzz negotiate")
        else:
            # Over HTTP a refusal of the version may list the ones the server speaks: the handshake asks for the
            # newest of them, as a client retries with a supported version (2026-07-28 basic/versioning).
            refusal = version_refusal(exchange, requested)
            fallback = refusal.next_version() if refusal is not None else None
            if refusal is not None and fallback is not None:
                result.notes.append(refusal.notice(fallback))
                legacy_version = fallback
    if discovered is not None:
        result.era, result.version = Era.MODERN, forced_version or LATEST_MODERN
        result.capabilities = discovered.get("capabilities") or {}
        meta = discovered.get("_meta")
        result.server_info = (meta.get("io.modelcontextprotocol/serverInfo") or {}) if isinstance(meta, dict) else {}
        session.era, session.version, session.ready = Era.MODERN, result.version, session.alive
        if not session.alive:
            await _sdk_handshake(session)
    else:
        await _legacy_handshake(session, result, legacy_version, forced=forced_version is not None)
    try:
        for target_type in target_types().values():
            if target_type.capability and target_type.capability in result.capabilities \
                    and target_type.list_method is not None:
                result.declared[target_type.kind] = await _list_declared(session, result, target_type)
    except HarnessError as error:  # only a server lost for good gets here: every other failure is retried
        raise _unusable(session, f"the server could not be brought back to list what it declares: {error}",
                        "run the server by hand to see why it no longer starts") from None
    for target_type in target_types().values():
        if target_type.capability in result.capabilities and target_type.derive is not None:
            result.declared[target_type.kind] = target_type.derive(result.declared)
    return result


async def _legacy_handshake(session: Session, result: ProbeResult, version: str, *, forced: bool) -> None:
    """initialize (judged) + notifications/initialized, on the same process unless it died.

    Over HTTP an initialize refused for its version (400) is asked again with an older one, unless the version
    was forced; only the last attempt is judged (a refusal of a version the server does not speak is no bug).
    """
    session.era = Era.LEGACY
    if not session.alive or session.server.starts == 0:
        await session.restart()
    while True:
        session.version = version
        case = initialize_case(version, session.next_id(), discover_failed=not forced,
                               capabilities=declared_capabilities(session.options.client_capabilities))
        exchange = await session.run_case_on_current(case)
        refusal = None if forced else version_refusal(exchange, version)
        retry = refusal.next_version() if refusal is not None else None
        if refusal is None or retry is None:
            break
        result.notes.append(refusal.notice(retry))
        version = retry
    result.exchanges.append(exchange)
    reply = _answer(exchange)
    answered = reply is not None and reply.is_result and isinstance(reply.message.get("result"), dict)
    if exchange.crash is not None and not answered:
        raise _unusable(session, _death(session, exchange.crash, "during initialize, before answering it"),
                        _exit_tip(exchange.crash))
    if reply is None:
        noise = [a.incoming.text(80) for a in exchange.arrivals if a.incoming.kind in ("noise", "oversized")]
        if noise:
            raise _unusable(session, f"the server wrote {noise[0]!r} instead of answering initialize",
                            "is this an MCP server speaking JSON-RPC on stdout? Logs belong on stderr")
        others = [arrival.incoming for arrival in exchange.responses()]
        if others:
            # JSON-RPC 2.0 section 5: a response carries its request's id; say what came back instead.
            raise _unusable(session, f"initialize (id {show_id(case.expect.id)}) was answered with id "
                            f"{show_id(others[0].id)}: {others[0].text(160)}",
                            "the server must answer each request with that request's id")
        if exchange.http is not None:
            raise _unusable(session, f"initialize got no JSON-RPC answer: {exchange.http.describe()}",
                            "check that the URL is the server's MCP endpoint (often /mcp) and that it speaks MCP "
                            "over HTTP (--transport names the transport); raise --timeout for slow servers")
        raise _unusable(session, f"no answer to initialize within {exchange.waited:.1f}s",
                        "check that the command is an MCP stdio server; raise --startup-timeout for slow starters",
                        silent=True)
    if not reply.is_result or not isinstance(reply.message.get("result"), dict):
        raise _unusable(session, f"initialize was refused: {reply.text(200)}",
                        "try --protocol-version with a version the server supports")
    answer = reply.message["result"]
    agreed = answer.get("protocolVersion")
    result.version = agreed if isinstance(agreed, str) and era_of(agreed) is Era.LEGACY else version
    result.capabilities = answer.get("capabilities") if isinstance(answer.get("capabilities"), dict) else {}
    result.server_info = answer.get("serverInfo") if isinstance(answer.get("serverInfo"), dict) else {}
    session.version = result.version
    if exchange.crash is not None:
        # Answered, then gone: on notifications/initialized (sent by the session on the result) or on the barrier
        # after it; a finding of the initialize case. The handshake as the SDK clients send it decides the run.
        result.notes.append(_death(session, exchange.crash, "after answering initialize") +
                            "; the handshake is tried again as the SDK clients send it")
        await _sdk_handshake(session)
        return
    # The session sent notifications/initialized once initialize got its result (`Case.answered_then`).
    session.handshake_frames = [case.data, INITIALIZED]
    session.ready = True


async def _list_declared(session: Session, result: ProbeResult, target_type: TargetType) -> list[dict]:
    """The kind's list method (tools/list, ...), every page, each judged (declared-served finds a cursor loop
    or a refusal; either ends the listing with a note)."""
    method, key = target_type.list_method, target_type.list_key
    assert method is not None
    declared: list[dict] = []
    cursor: str | None = None
    sent: tuple[str, ...] = ()
    for page_number in range(1, MAX_LIST_PAGES + 1):
        rid = session.next_id()
        case_id = method.replace("/", "-") + ("" if page_number == 1 else f"-page-{page_number}")
        listing = ListingCheck(target_type.capability, page_number, sent)
        expect = Expectation(judge=OracleId.DECLARED_SERVED, id=rid, result_ok=True, error_ok=True, well_formed=True,
                             method=method, note=f"the server declares `{target_type.capability}`", parts=(listing,))
        case = Case(case_id, "probe", f"{method}, page {page_number}",
                    session.message(method, {"cursor": cursor} if cursor else {}, rid), expect, patient=True)
        exchange = await session.run_case(case)
        result.exchanges.append(exchange)
        reply = _answer(exchange)
        if reply is None:
            got = _death(session, exchange.crash, f"on {method}") if exchange.crash else f"{method} got no answer"
            result.notes.append(f"{got}; fuzzing without {key}")
            break
        page = reply.message.get("result") if reply.is_result else None
        if not isinstance(page, dict):
            result.notes.append(f"{method} was refused: {reply.text(160)}")
            break
        declared += [item for item in page.get(key) or [] if isinstance(item, dict)]
        cursor = page.get("nextCursor")
        if not isinstance(cursor, str) or not cursor:
            break
        if cursor in sent:
            result.notes.append(f"{method} returned the cursor {cursor!r} twice; stopped paging")
            break
        sent += (cursor,)
    else:
        result.notes.append(f"{method} still had more after {MAX_LIST_PAGES} pages; fuzzing what they listed")
    return declared
