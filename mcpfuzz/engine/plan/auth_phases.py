"""The auth phase: on a protected HTTP server, every request kind with every bad token, and the refusal rules."""

from __future__ import annotations

from dataclasses import dataclass

import anyio

from mcpfuzz.engine.auth.auth_probes import LEGACY_VERSION, ProbeTarget, probe_auth
from mcpfuzz.engine.events import Notice
from mcpfuzz.engine.plan.context import RunContext
from mcpfuzz.engine.session.session import Session
from mcpfuzz.jsonrpc.oracle_ids import OracleId
from mcpfuzz.jsonrpc.versions import Era
from mcpfuzz.transport.auth.keeper import TokenKeeper
from mcpfuzz.transport.base import TransportKind
from mcpfuzz.transport.http_headers import get_header

AUTH_ORACLES = (OracleId.AUTH_REQUIRED.value, OracleId.AUTH_CHALLENGE.value)
# At most, for the probes: a fixed few dozen requests (about a second on an idle machine), worth more than the calls
# they displace, so they are not cut to the protocol phases' share of the budget; this only bounds a stuck server.
MAX_SECONDS = 60.0


@dataclass(frozen=True)
class AuthPhase:
    """A protected server (a token given by --auth-token-command, --oauth-client-id or an Authorization header)
    must refuse every bad token on every request kind, by the rules (`auth-required`, `auth-challenge`)."""

    name: str = "auth"

    def skip_reason(self, context: RunContext) -> str | None:
        config = context.config
        if not any(oracle in config.oracles for oracle in AUTH_ORACLES):
            return "auth-required and auth-challenge are not selected"
        http = config.http
        if http is None:
            return "the server is not an HTTP URL"
        if http.auth is None and get_header(dict(http.headers), "Authorization") is None:
            return "no token given (--auth-token-command, --oauth-client-id or --header 'Authorization: ...')"
        return None

    async def run(self, context: RunContext, session: Session) -> None:
        if session.transport is not TransportKind.STREAMABLE_HTTP:
            context.emit(Notice("auth probes skipped: they need streamable HTTP"))
            return
        server = session.server
        keeper = getattr(server, "auth", None)
        keeper = keeper if isinstance(keeper, TokenKeeper) else None
        http = context.config.http
        assert http is not None
        authorization = (f"Bearer {await keeper.current()}" if keeper is not None
                         else get_header(dict(http.headers), "Authorization"))
        assert authorization is not None
        version = session.version if session.era is Era.LEGACY and session.version else LEGACY_VERSION
        target = ProbeTarget(str(getattr(server, "url", http.url)), authorization, keeper, _tool(context), version,
                             asserted=http.auth is not None)
        seconds = MAX_SECONDS
        with anyio.move_on_after(seconds) as scope:
            verdict = await probe_auth(target, context.config.timeout)
        if scope.cancelled_caught:
            context.emit(Notice(f"auth probes stopped after {seconds:.0f}s (the budget's share for them)"))
            return
        for note in verdict.notes:
            context.emit(Notice(note))
        if verdict.attempts:
            kinds = len({a.token_id for a in verdict.attempts})
            served = sum(a.served for a in verdict.attempts)
            context.emit(Notice(f"auth: {len(verdict.attempts)} requests with {kinds} kinds of bad token, "
                                f"{served} served"))
        for failure, received, expected in verdict.failures:
            context.observed(failure, received, expected)


def _tool(context: RunContext) -> str | None:
    """A tool the run may call: read-only ones first, never an excluded one."""
    probe = context.probe
    tools = [t for t in (probe.tools if probe is not None else []) if isinstance(t.get("name"), str)
             and f"tool/{t['name']}" not in context.config.exclude_targets]
    tools.sort(key=lambda t: not (t.get("annotations") or {}).get("readOnlyHint", False))
    return tools[0]["name"] if tools else None
