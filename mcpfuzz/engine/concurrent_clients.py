"""The isolation phase's clients: several at once on one streamable HTTP server, the same JSON-RPC ids on each.

Each client has its own HTTP connection pool, and in the legacy era its own session; a stateless 2026-07-28 server
gets concurrent connections instead. A round sends one request per client at once, all with the same id; each
client reads its own answer (a JSON body or an SSE stream) to its end. Every session opened here is closed here.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import anyio
import httpx

from mcpfuzz.jsonrpc.versions import Era, modern_meta
from mcpfuzz.oracles.base import Failure
from mcpfuzz.oracles.isolation import Asked, Heard, judge_round
from mcpfuzz.transport.http_headers import ACCEPT_BOTH, SESSION_HEADER, mcp_headers, parse_body
from mcpfuzz.transport.sse import SseParser

CLIENTS = 3
# 2026-07-28: each client's request asks its own log level (the third none: it may get no log at all).
LOG_LEVELS_ASKED = ("debug", "error", None)
LOG_LEVEL_KEY = "io.modelcontextprotocol/logLevel"
# Once a client's own answer is in, how long its stream is read on for another answer (a correct server ends it).
LINGER = 0.5
CONTROL_ID = 1000  # the control round's ids: CONTROL_ID + 10 * client + the round's id, distinct per client
EXPECTED = ("each client gets exactly the answers and request-scoped notifications of its own requests, whatever ids "
            "other clients use; 2026-07-28: no log below a request's log level, none when it asks none")


@dataclass(frozen=True)
class IsolationTarget:
    """The server: its URL, the run's headers (its token included), era and version, what the clients ask."""

    url: str
    headers: dict[str, str]
    era: Era
    version: str
    tool: str | None  # a tool callable with no arguments, or None
    methods: tuple[str, ...]  # requests whose results differ in shape: the declared lists, ping or server/discover
    timeout: float


@dataclass
class IsolationVerdict:
    """What the clients saw: failures with their lines, notes for the user, and how many requests went out."""

    failures: list[tuple[Failure, tuple[str, ...], str]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    requests: int = 0
    rounds: int = 0


@dataclass
class Client:
    """One client: its own connections and, in the legacy era, its session."""

    index: int
    http: httpx.AsyncClient
    session: str | None = None


async def probe_isolation(target: IsolationTarget) -> IsolationVerdict:
    """Open the clients, send each round at once, judge it; the sessions are closed whatever happens."""
    verdict = IsolationVerdict()
    async with contextlib.AsyncExitStack() as stack:
        clients = [Client(i, await stack.enter_async_context(
            httpx.AsyncClient(timeout=target.timeout, follow_redirects=False, trust_env=False)))
            for i in range(CLIENTS)]
        try:
            if target.era is Era.LEGACY and not await _open_sessions(clients, target, verdict):
                return verdict
            for round_asked in _rounds(target):
                heard = await _send_round(clients, target, round_asked, verdict)
                await _control_round(clients, target, heard, verdict)
                verdict.rounds += 1
                verdict.failures.extend((failure, lines, EXPECTED) for failure, lines in judge_round(heard))
        finally:
            if target.era is Era.LEGACY:
                await _close_sessions(clients, target)
    return verdict


def _rounds(target: IsolationTarget) -> list[list[Asked]]:
    """Round 1: every client sends the same request (the tool, with progress and logs); round 2: each a request whose
    result has another shape, so an answer that crossed over shows whose it is."""
    modern = target.era is Era.MODERN
    same = "tools/call" if target.tool else (target.methods[0] if target.methods else "ping")
    rounds = [[Asked(i, 1, same, f"mcpfuzz-isolation-1-{i}", LOG_LEVELS_ASKED[i % len(LOG_LEVELS_ASKED)] if modern
                     else None, judge_logs=modern) for i in range(CLIENTS)]]
    if len(set(target.methods)) >= 2:
        rounds.append([Asked(i, 2, target.methods[i % len(target.methods)], f"mcpfuzz-isolation-2-{i}",
                             judge_logs=modern) for i in range(CLIENTS)])
    return rounds


def _message(target: IsolationTarget, asked: Asked) -> dict[str, Any]:
    params: dict[str, Any] = {"name": target.tool, "arguments": {}} if asked.method == "tools/call" else {}
    meta: dict[str, Any] = modern_meta(target.version) if target.era is Era.MODERN else {}
    if asked.log_level is not None:
        meta[LOG_LEVEL_KEY] = asked.log_level
    if asked.progress_token is not None:
        meta["progressToken"] = asked.progress_token
    if meta:
        params["_meta"] = meta
    return {"jsonrpc": "2.0", "id": asked.rid, "method": asked.method, "params": params}


def _headers(target: IsolationTarget, client: Client, message: dict[str, Any]) -> dict[str, str]:
    headers = {**target.headers, "Accept": ACCEPT_BOTH, "Content-Type": "application/json"}
    headers.update(mcp_headers(message, target.version if target.era is Era.LEGACY else None))
    if client.session is not None:
        headers[SESSION_HEADER] = client.session
    return headers


async def _post(client: Client, target: IsolationTarget, message: dict[str, Any], heard: Heard) -> None:
    """Send one message; every message of its answer goes into `heard`, read until the answer ends (or its own
    response is in and the stream stays open LINGER seconds more, or the timeout passes)."""
    started = anyio.current_time()
    with anyio.move_on_after(target.timeout) as scope:
        try:
            async with client.http.stream("POST", target.url, content=json.dumps(message).encode(),
                                          headers=_headers(target, client, message)) as response:
                heard.status = response.status_code
                if message.get("method") == "initialize":
                    client.session = response.headers.get(SESSION_HEADER)
                if "text/event-stream" not in response.headers.get("content-type", ""):
                    _add(heard, await response.aread())
                    _answered(heard, started)
                    return
                parser = SseParser()
                async for chunk in response.aiter_bytes():
                    for event in parser.feed(chunk):
                        _add(heard, event.data.encode())
                    if _answered(heard, started):
                        scope.deadline = min(scope.deadline, anyio.current_time() + LINGER)
        except httpx.HTTPError as error:
            heard.ended = f"{type(error).__name__} after {len(heard.messages)} messages"
    if scope.cancelled_caught and not heard.answers():
        heard.ended = f"no answer within {target.timeout:g}s"


def _answered(heard: Heard, started: float) -> bool:
    """Whether the request's answer is in; the first time it is, when it came."""
    if not heard.answers():
        return False
    if heard.answered_at is None:
        heard.answered_at = anyio.current_time() - started
    return True


def _add(heard: Heard, data: bytes) -> None:
    if not data.strip():
        return  # an SSE event without data (a 2025-11-25 priming event), or an empty 202
    parsed = parse_body(data)
    heard.messages.extend(parsed if isinstance(parsed, list) else [parsed])


async def _send_round(clients: Sequence[Client], target: IsolationTarget, asked: Sequence[Asked],
                      verdict: IsolationVerdict) -> list[Heard]:
    heard = [Heard(a) for a in asked]
    async with anyio.create_task_group() as group:
        for client, one in zip(clients, heard, strict=True):
            group.start_soon(_post, client, target, _message(target, one.asked), one)
    verdict.requests += len(heard)
    return heard


async def _control_round(clients: Sequence[Client], target: IsolationTarget, heard: Sequence[Heard],
                         verdict: IsolationVerdict) -> None:
    """When a request was left unanswered while others were answered, the same requests go again at once with
    distinct ids (no progress token, no log level): all answered then, the answer was lost to the collision of ids,
    not to the load (a server that loses answers under load alone is the `concurrency` oracle's)."""
    lost = [h for h in heard if not h.answers() and (h.status is None or 200 <= h.status < 300)]
    # Lost beside answers that came early: a server that answers every one of them near the timeout (a slow request,
    # a loaded machine) may have missed it by a moment, which no collision of ids explains.
    early = [h for h in heard if h.answered_at is not None and h.answered_at < target.timeout / 2]
    if not lost or not early:
        return
    control = [Heard(replace(h.asked, rid=CONTROL_ID + h.asked.client * 10 + h.asked.rid, progress_token=None,
                             log_level=None)) for h in heard]
    async with anyio.create_task_group() as group:
        for client, one in zip(clients, control, strict=True):
            group.start_soon(_post, client, target, _message(target, one.asked), one)
    verdict.requests += len(control)
    apart = all(c.answers() for c in control)
    for one in lost:
        one.answered_apart = apart


async def _open_sessions(clients: Sequence[Client], target: IsolationTarget, verdict: IsolationVerdict) -> bool:
    """initialize and notifications/initialized on each client in turn (only the rounds need the clients at once: a
    server that sheds concurrent load still gets its sessions); False (with a note) when one fails."""
    heard = [Heard(Asked(c.index, 0, "initialize")) for c in clients]
    initialize = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": target.version, "capabilities": {},
        "clientInfo": {"name": "mcpfuzz-isolation", "version": "0"}}}
    for client, one in zip(clients, heard, strict=True):
        await _post(client, target, initialize, one)
    verdict.requests += len(heard)
    failed = next((h for h in heard if not h.answers() or "result" not in h.answers()[0]), None)
    if failed is not None:
        verdict.notes.append(f"isolation probes skipped: initialize on a new client got HTTP {failed.status}"
                             f"{', ' + failed.ended if failed.ended else ''}")
        return False
    initialized = {"jsonrpc": "2.0", "method": "notifications/initialized"}
    for client in clients:
        await _post(client, target, initialized, Heard(Asked(client.index, 0, "notifications/initialized")))
    verdict.requests += len(clients)
    return True


async def _close_sessions(clients: Sequence[Client], target: IsolationTarget) -> None:
    """DELETE every session opened, even when the phase is cancelled (a bounded wait)."""
    with anyio.CancelScope(shield=True), anyio.move_on_after(max(target.timeout, 1.0)):
        for client in clients:
            if client.session is None:
                continue
            headers = {**target.headers, SESSION_HEADER: client.session,
                       **mcp_headers({"method": "DELETE"}, target.version)}
            with contextlib.suppress(httpx.HTTPError):
                await client.http.delete(target.url, headers=headers)
