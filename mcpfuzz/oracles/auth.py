"""Protected servers (MCP authorization, 2025-03-26 on): bad tokens must be refused, and refused by the rules.

Both oracles judge what the auth phase observed (`mcpfuzz.engine.auth.auth_probes`): each request kind sent
with each kind of bad token (`auth-required`), and each refusal with the metadata it points to (`auth-challenge`).
The rules and their sources are in docs/oracles.md ("Protected servers").
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from urllib.parse import urlsplit

from mcpfuzz.jsonrpc.oracle_ids import OracleId
from mcpfuzz.oracles.base import Failure, Severity, failure_class, register_run_check
from mcpfuzz.transport.auth.challenge import parse_challenge
from mcpfuzz.transport.auth.discovery import Fetched

AuthRequiredFailure = failure_class(OracleId.AUTH_REQUIRED, "Protected server served a request without a valid token")
AuthChallengeFailure = failure_class(OracleId.AUTH_CHALLENGE, "Refusal or metadata breaks the authorization rules")

register_run_check(AuthRequiredFailure, Severity.CRITICAL,
                   "a protected server serves initialize, a list or a tool call sent with no token, a garbage, "
                   "expired, unsigned (alg none), foreign-key or other-audience token, or the token in the URL query")
register_run_check(AuthChallengeFailure, Severity.MEDIUM,
                   "a refused token does not get 401 with WWW-Authenticate: Bearer naming resource_metadata (403 with "
                   "insufficient_scope), or the protected resource or authorization server metadata is missing, "
                   "malformed or names another resource")

TOOL_CALL = "tools/call"


@dataclass(frozen=True)
class Attempt:
    """One request sent with one kind of bad token, and what came back (never the token itself)."""

    method: str  # initialize, tools/list, tools/call
    token: str  # the kind of bad token, e.g. "a garbage token"
    token_id: str  # its short id, e.g. "garbage"
    status: int | None
    www_authenticate: str | None
    content_type: str = ""
    body: str = ""  # the start of the body

    @property
    def served(self) -> bool:
        """The request got past authentication: a 2xx answer (any JSON-RPC answer means the server read it)."""
        return self.status is not None and 200 <= self.status < 300

    def lines(self) -> tuple[str, ...]:
        """What the finding shows as received."""
        head = f"<{self.method} with {self.token}: HTTP {self.status}, {self.content_type or 'no content type'}"
        challenge = f", WWW-Authenticate: {self.www_authenticate}>" if self.www_authenticate \
            else ", no WWW-Authenticate>"
        return (head + challenge, *([self.body] if self.body else ()))


def judge_served(attempts: list[Attempt]) -> Iterator[tuple[Failure, Attempt]]:
    """`auth-required`: the bad tokens that were served, one finding per set of request kinds that served them (a
    server that checks only initialize serves every bad token on the others: one cause, one finding); each with the
    first served attempt, whose lines the finding shows."""
    by_token: dict[str, list[Attempt]] = {}
    for attempt in attempts:
        if attempt.served:
            by_token.setdefault(attempt.token_id, []).append(attempt)
    groups: dict[tuple[str, ...], list[list[Attempt]]] = {}
    for served in by_token.values():
        groups.setdefault(tuple(a.method for a in served), []).append(served)
    for methods, tokens in groups.items():
        severity = Severity.CRITICAL if TOOL_CALL in methods else Severity.HIGH
        titles = "; ".join(served[0].token for served in tokens)
        first = tokens[0][0]
        yield AuthRequiredFailure(severity, f"{' and '.join(methods)} served (HTTP {first.status}) when sent with "
                                  f"{titles}: a protected server MUST refuse a request without a valid token for it "
                                  "with 401", f"served:{','.join(methods)}:{','.join(t[0].token_id for t in tokens)}",
                                  server_wide=True), first


def judge_attempt(attempt: Attempt) -> Iterator[Failure]:
    """`auth-challenge`: a refusal of a bad token that breaks the rules (a served attempt is `judge_served`'s)."""
    if attempt.served:
        return
    if attempt.status is None:
        return
    if attempt.status >= 500:
        yield AuthChallengeFailure(Severity.MEDIUM, f"{attempt.method} sent with {attempt.token} got HTTP "
                                   f"{attempt.status}: the server failed on the token instead of refusing it with "
                                   "401", "5xx", server_wide=True)
        return
    challenge = parse_challenge(attempt.www_authenticate)
    if attempt.status == 403:
        if challenge is None or not challenge.bearer or challenge.error != "insufficient_scope":
            yield AuthChallengeFailure(Severity.LOW, f"{attempt.method} sent with {attempt.token} got HTTP 403 "
                                       "without WWW-Authenticate: Bearer error=\"insufficient_scope\"; 403 is for a "
                                       "valid token that lacks a scope, a bad token gets 401", "403", server_wide=True)
        return
    if attempt.status != 401:
        yield AuthChallengeFailure(Severity.MEDIUM, f"{attempt.method} sent with {attempt.token} was refused with "
                                   f"HTTP {attempt.status}; a missing, invalid or expired token MUST get 401",
                                   f"status:{attempt.status}", server_wide=True)
        return
    if challenge is None or not challenge.bearer:
        said = f"WWW-Authenticate {attempt.www_authenticate!r}" if attempt.www_authenticate else "no WWW-Authenticate"
        yield AuthChallengeFailure(Severity.MEDIUM, f"{attempt.method} sent with {attempt.token} got 401 with {said}; "
                                   "a 401 MUST carry a WWW-Authenticate challenge of the Bearer scheme "
                                   "(RFC 6750 section 3, RFC 9728 section 5.1)",
                                   "no-challenge", server_wide=True)


def judge_no_resource_metadata(attempt: Attempt, well_known: Fetched | None) -> Iterator[Failure]:
    """A 401 Bearer challenge without `resource_metadata`: low when the well-known URI serves it, else medium."""
    challenge = parse_challenge(attempt.www_authenticate)
    if attempt.status != 401 or challenge is None or not challenge.bearer or challenge.resource_metadata:
        return
    if well_known is not None and well_known.ok:
        yield AuthChallengeFailure(Severity.LOW, "the 401's WWW-Authenticate names no resource_metadata (the "
                                   f"well-known URI {well_known.url} serves it; the spec's SHOULD)",
                                   "no-resource-metadata", server_wide=True)
    else:
        yield AuthChallengeFailure(Severity.MEDIUM, "the 401's WWW-Authenticate names no resource_metadata and no "
                                   "well-known URI serves protected resource metadata: a client cannot find the "
                                   "authorization server (MCP authorization, RFC 9728)", "no-resource-metadata",
                                   server_wide=True)


def judge_resource_metadata(fetched: Fetched, server_url: str) -> Iterator[Failure]:
    """RFC 9728: the metadata is a JSON object whose `resource` is this server and names authorization servers."""
    if not fetched.ok:
        yield AuthChallengeFailure(Severity.MEDIUM, f"the protected resource metadata {fetched.url} the server points "
                                   f"to is not served: {fetched.said}", "resource-metadata:missing", server_wide=True)
        return
    document = fetched.document or {}
    resource = document.get("resource")
    if not isinstance(resource, str) or not same_resource(resource, server_url):
        yield AuthChallengeFailure(Severity.MEDIUM, f"the protected resource metadata at {fetched.url} names the "
                                   f"resource {resource!r}, not this server's URL {server_url} (RFC 9728 section "
                                   "3.3: a client MUST NOT use such metadata)", "resource-metadata:resource",
                                   server_wide=True)
    servers = document.get("authorization_servers")
    if not isinstance(servers, list) or not servers or not all(isinstance(s, str) for s in servers):
        yield AuthChallengeFailure(Severity.MEDIUM, f"the protected resource metadata at {fetched.url} has no "
                                   f"authorization_servers list (it has {servers!r}); MCP servers MUST name at least "
                                   "one", "resource-metadata:servers", server_wide=True)


def judge_authorization_server(issuer: str, fetched: Fetched | None, tried: tuple[Fetched, ...]) -> Iterator[Failure]:
    """RFC 8414: a local issuer's metadata is served, names the issuer itself and a token endpoint."""
    if fetched is None or not fetched.ok:
        said = "; ".join(f"{f.url}: {f.said or f.status}" for f in tried)
        yield AuthChallengeFailure(Severity.MEDIUM, f"the authorization server {issuer} is local, yet serves no "
                                   f"metadata (RFC 8414 or OpenID Connect discovery): {said}",
                                   "authorization-server:missing", server_wide=True)
        return
    document = fetched.document or {}
    if document.get("issuer") != issuer.rstrip("/") and document.get("issuer") != issuer:
        yield AuthChallengeFailure(Severity.MEDIUM, f"the authorization server metadata at {fetched.url} names the "
                                   f"issuer {document.get('issuer')!r}, not {issuer} (RFC 8414 section 3.3: it MUST "
                                   "be identical)", "authorization-server:issuer", server_wide=True)
    if not isinstance(document.get("token_endpoint"), str):
        yield AuthChallengeFailure(Severity.MEDIUM, f"the authorization server metadata at {fetched.url} has no "
                                   "token_endpoint", "authorization-server:token-endpoint", server_wide=True)


def same_resource(a: str, b: str) -> bool:
    """Two resource identifiers compared as URLs: scheme and host case-insensitive, a trailing slash aside."""
    pa, pb = urlsplit(a), urlsplit(b)
    return (pa.scheme.lower(), (pa.hostname or "").lower(), pa.port, pa.path.rstrip("/"), pa.query) == \
           (pb.scheme.lower(), (pb.hostname or "").lower(), pb.port, pb.path.rstrip("/"), pb.query)


def is_local(url: str) -> bool:
    """True for a URL on this machine's loopback (127.0.0.0/8, localhost, ::1)."""
    host = (urlsplit(url).hostname or "").lower()
    return host == "localhost" or host.startswith("127.") or host == "::1"
