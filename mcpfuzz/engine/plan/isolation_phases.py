"""The isolation phase: concurrent clients on one streamable HTTP server with colliding JSON-RPC ids."""

from __future__ import annotations

from dataclasses import dataclass

import anyio

from mcpfuzz.engine.concurrent_clients import IsolationTarget, probe_isolation
from mcpfuzz.engine.events import Notice
from mcpfuzz.engine.plan.context import RunContext
from mcpfuzz.engine.session.session import Session
from mcpfuzz.jsonrpc.oracle_ids import OracleId
from mcpfuzz.jsonrpc.versions import Era
from mcpfuzz.transport.auth.keeper import TokenKeeper
from mcpfuzz.transport.base import TransportKind
from mcpfuzz.transport.http_headers import set_header

# At most, for the clients: a few dozen requests, most answered at once; an answer lost to another client is waited
# for up to --timeout. This only bounds a stuck server.
MAX_SECONDS = 60.0
# The lists whose results tell them apart, by the capability that declares each.
LIST_METHODS = (("tools", "tools/list"), ("resources", "resources/list"), ("prompts", "prompts/list"))


@dataclass(frozen=True)
class IsolationPhase:
    """Over streamable HTTP, every answer and request-scoped notification reaches only the client that asked, when
    clients send the same ids at once (`session-isolation`)."""

    name: str = "isolation"

    def skip_reason(self, context: RunContext) -> str | None:
        if OracleId.SESSION_ISOLATION.value not in context.config.oracles:
            return "session-isolation is not selected"
        if context.config.http is None:
            return "the server is not an HTTP URL"
        return None

    async def run(self, context: RunContext, session: Session) -> None:
        if session.transport is not TransportKind.STREAMABLE_HTTP:
            context.emit(Notice("isolation probes skipped: they need streamable HTTP"))
            return
        target = await _target(context, session)
        with anyio.move_on_after(MAX_SECONDS) as scope:
            verdict = await probe_isolation(target)
        if scope.cancelled_caught:
            context.emit(Notice(f"isolation probes stopped after {MAX_SECONDS:.0f}s"))
            return
        for note in verdict.notes:
            context.emit(Notice(note))
        if verdict.rounds:
            clients = "sessions" if target.era is Era.LEGACY else "connections"
            context.emit(Notice(f"isolation: {verdict.rounds} rounds of 3 concurrent {clients} with the same ids, "
                                f"{verdict.requests} requests, {len(verdict.failures)} crossed", level="info"))
        for failure, received, expected in verdict.failures:
            context.observed(failure, received, expected)


async def _target(context: RunContext, session: Session) -> IsolationTarget:
    """The server as the run reaches it (its URL, headers and current token), and what the clients will ask."""
    http = context.config.http
    assert http is not None
    server = session.server
    headers = dict(http.headers)
    keeper = getattr(server, "auth", None)
    if isinstance(keeper, TokenKeeper):
        set_header(headers, "Authorization", f"Bearer {await keeper.current()}")
    era = session.era or Era.LEGACY
    probe = context.probe
    capabilities = probe.capabilities if probe is not None else {}
    methods = [method for capability, method in LIST_METHODS if capability in capabilities]
    methods.append("ping" if era is Era.LEGACY else "server/discover")
    return IsolationTarget(str(getattr(server, "url", http.url)), headers, era, session.version, _tool(context),
                           tuple(methods), context.config.timeout)


def _tool(context: RunContext) -> str | None:
    """A tool annotated read-only that the clients may each call with no arguments (never an excluded one): several
    clients call it at once, so a tool that may change anything is never chosen."""
    probe = context.probe
    names = []
    for tool in probe.tools if probe is not None else []:
        name, annotations, schema = tool.get("name"), tool.get("annotations"), tool.get("inputSchema")
        if isinstance(name, str) and f"tool/{name}" not in context.config.exclude_targets \
                and isinstance(annotations, dict) and annotations.get("readOnlyHint") is True \
                and isinstance(schema, dict) and not schema.get("required"):
            names.append(name)
    return min(names) if names else None
