"""The auth phase's requests: each request kind sent with each bad token, and the metadata a refusal points to.

A protected server is probed over its own HTTP client (not the session's): a bad token must never reach the
session's connection, whose requests carry the run's good token. The list and the tool call go on a session opened
with the good token, as a client that lost or swapped its token would send them.
"""

from __future__ import annotations

import contextlib
import json
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlencode, urlsplit, urlunsplit

import httpx

from mcpfuzz.engine.auth.bad_tokens import OTHER_AUDIENCE, BadToken, forged_tokens
from mcpfuzz.jsonrpc.issued_secrets import remember
from mcpfuzz.oracles.auth import (
    Attempt,
    is_local,
    judge_attempt,
    judge_authorization_server,
    judge_no_resource_metadata,
    judge_resource_metadata,
    judge_served,
)
from mcpfuzz.oracles.base import Failure
from mcpfuzz.transport.auth.challenge import parse_challenge
from mcpfuzz.transport.auth.client_credentials import ClientCredentialsSource
from mcpfuzz.transport.auth.discovery import (
    authorization_server_urls,
    fetch_json,
    first_document,
    resource_metadata_urls,
)
from mcpfuzz.transport.auth.errors import AuthError
from mcpfuzz.transport.auth.keeper import TokenKeeper
from mcpfuzz.transport.auth.token import jwt_claims
from mcpfuzz.transport.http_headers import ACCEPT_BOTH, SESSION_HEADER, VERSION_HEADER

BODY_SHOWN = 300
LEGACY_VERSION = "2025-11-25"  # the handshake the probes open sessions with (a 2026-07-28 server keeps serving it)
METHODS = ("initialize", "tools/list", "tools/call")


@dataclass
class AuthVerdict:
    """What the probes saw: each failure with the lines it received and what was expected; notes for the user."""

    failures: list[tuple[Failure, tuple[str, ...], str]] = field(default_factory=list)
    attempts: list[Attempt] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class ProbeTarget:
    """The protected server: its URL, the good Authorization header, and where more tokens come from."""

    url: str
    authorization: str
    keeper: TokenKeeper | None
    tool: str | None  # a tool to call (None: the server lists none the run may call)
    version: str = LEGACY_VERSION
    # True when the run was told to get tokens (a command, OAuth): the server is meant to be protected. A static
    # Authorization header alone does not say so: a server that serves every request without a token then just
    # does not check tokens (a note, no finding).
    asserted: bool = False


async def probe_auth(target: ProbeTarget, timeout: float) -> AuthVerdict:
    """Every bad token on every request kind, then the metadata rules; findings and notes in the verdict."""
    verdict = AuthVerdict()
    async with httpx.AsyncClient(timeout=timeout, follow_redirects=False, trust_env=False) as client:
        session, status = await _open_session(client, target)
        if session is None and status is None:
            verdict.notes.append("auth probes skipped: initialize with the run's token got no answer")
            return verdict
        if status is not None and not 200 <= status < 300:
            verdict.notes.append(f"auth probes skipped: initialize with the run's token got HTTP {status} (is the "
                                 "token right for this server?)")
            return verdict
        good = target.authorization.removeprefix("Bearer ").strip()
        tokens = forged_tokens(good, _expired(target.keeper), await _other_audience(target.keeper))
        for method in METHODS:
            if method == "tools/call" and target.tool is None:
                continue
            for token in tokens:
                attempt = await _attempt(client, target, method, token, session)
                verdict.attempts.append(attempt)
                verdict.failures.extend((f, attempt.lines(), _expected(f.oracle)) for f in judge_attempt(attempt))
        bare = [a for a in verdict.attempts if a.token_id == "none"]
        if not target.asserted and bare and all(a.served for a in bare):
            verdict.notes.append("auth probes: the server served every request without a token, so it checks no "
                                 "token (the Authorization header given is not needed); no auth finding")
        else:
            verdict.failures.extend((f, a.lines(), _expected(f.oracle)) for f, a in judge_served(verdict.attempts))
            await _judge_metadata(client, target.url, verdict)
        if session is not None:
            await _close(client, target, session)
    return verdict


def _expected(oracle: str) -> str:
    if oracle == "auth-required":
        return "a request without a valid token for this server is refused with HTTP 401"
    return "a refusal is HTTP 401 with WWW-Authenticate: Bearer resource_metadata=... naming served metadata"


def _headers(target: ProbeTarget, authorization: str | None, session: str | None) -> dict[str, str]:
    headers = {"Accept": ACCEPT_BOTH, "Content-Type": "application/json"}
    if authorization is not None:
        headers["Authorization"] = authorization
    if session is not None:
        headers[SESSION_HEADER] = session
        headers[VERSION_HEADER] = target.version
    return headers


def _frame(method: str, rid: int, target: ProbeTarget) -> bytes:
    params: dict[str, Any] = {}
    if method == "initialize":
        params = {"protocolVersion": target.version, "capabilities": {},
                  "clientInfo": {"name": "mcpfuzz-auth-probe", "version": "0"}}
    elif method == "tools/call":
        params = {"name": target.tool, "arguments": {}}
    return json.dumps({"jsonrpc": "2.0", "id": rid, "method": method, "params": params}).encode()


async def _open_session(client: httpx.AsyncClient, target: ProbeTarget) -> tuple[str | None, int | None]:
    """initialize and notifications/initialized with the good token: the session id (None for a stateless server)."""
    try:
        response = await client.post(target.url, content=_frame("initialize", 1, target),
                                     headers=_headers(target, target.authorization, None))
        session = response.headers.get(SESSION_HEADER)
        await response.aread()
        if response.status_code < 300:
            await client.post(target.url, content=b'{"jsonrpc":"2.0","method":"notifications/initialized"}',
                              headers=_headers(target, target.authorization, session))
        return session, response.status_code
    except httpx.HTTPError:
        return None, None


async def _close(client: httpx.AsyncClient, target: ProbeTarget, session: str) -> None:
    with contextlib.suppress(httpx.HTTPError):
        await client.delete(target.url, headers=_headers(target, target.authorization, session))


async def _attempt(client: httpx.AsyncClient, target: ProbeTarget, method: str, token: BadToken,
                   session: str | None) -> Attempt:
    url = target.url
    if token.query_token is not None:
        parts = urlsplit(url)
        query = "&".join(q for q in (parts.query, urlencode({"access_token": token.query_token})) if q)
        url = urlunsplit((parts.scheme, parts.netloc, parts.path, query, ""))
    use_session = session if method != "initialize" else None
    try:
        response = await client.post(url, content=_frame(method, 100 + METHODS.index(method), target),
                                     headers=_headers(target, token.authorization, use_session))
    except httpx.HTTPError as error:
        return Attempt(method, token.title, token.id, None, None, body=f"<no answer: {type(error).__name__}>")
    body = response.text[:BODY_SHOWN]
    return Attempt(method, token.title, token.id, response.status_code, response.headers.get("www-authenticate"),
                   response.headers.get("content-type", ""), body)


def _expired(keeper: TokenKeeper | None) -> str | None:
    """A token the run used earlier whose JWT `exp` has passed (None when there is none yet)."""
    for token in reversed(keeper.retired if keeper is not None else []):
        claims = jwt_claims(token.value)
        exp = claims.get("exp") if claims else None
        if isinstance(exp, (int, float)) and exp < time.time():
            return token.value
    return None


async def _other_audience(keeper: TokenKeeper | None) -> str | None:
    """With OAuth client credentials: a real token of the authorization server, for another resource (RFC 8707)."""
    source = keeper.origin if keeper is not None else None  # a worker's own source, not the lead's loan
    if not isinstance(source, ClientCredentialsSource):
        return None
    try:
        token = await source.fetch(resource=OTHER_AUDIENCE)
    except AuthError:
        return None
    remember(token.value)
    return token.value


async def _judge_metadata(client: httpx.AsyncClient, url: str, verdict: AuthVerdict) -> None:
    """The first 401's challenge: its resource metadata, and a local authorization server's metadata."""
    refused = next((a for a in verdict.attempts if a.status == 401), None)
    if refused is None:
        return
    challenge = parse_challenge(refused.www_authenticate)
    urls: Sequence[str] = resource_metadata_urls(url, challenge)
    if challenge is None or not challenge.resource_metadata:
        well_known, _ = await first_document(client, list(urls))
        verdict.failures.extend((f, refused.lines(), _expected(f.oracle))
                                for f in judge_no_resource_metadata(refused, well_known))
        if well_known is None:
            return
        fetched = well_known
    else:
        fetched = await fetch_json(client, urls[0])
    failures = list(judge_resource_metadata(fetched, url))
    verdict.failures.extend((f, (f"<GET {fetched.url}: {fetched.said or fetched.status}>",), _expected(f.oracle))
                            for f in failures)
    servers = fetched.document.get("authorization_servers") if fetched.document else None
    for issuer in servers if isinstance(servers, list) else []:
        if isinstance(issuer, str) and is_local(issuer):
            found, tried = await first_document(client, authorization_server_urls(issuer))
            verdict.failures.extend((f, (f"<GET {', '.join(t.url for t in tried)}>",), _expected(f.oracle))
                                    for f in judge_authorization_server(issuer, found, tuple(tried)))
