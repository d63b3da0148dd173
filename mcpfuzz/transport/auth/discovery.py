"""Where a protected MCP server's tokens come from: its 401, its protected resource metadata (RFC 9728) and its
authorization server's metadata (RFC 8414, or OpenID Connect discovery), as the MCP authorization spec orders them."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import httpx

from mcpfuzz.transport.auth.challenge import Challenge, parse_challenge
from mcpfuzz.transport.auth.errors import AuthError
from mcpfuzz.transport.http_headers import ACCEPT_BOTH

PRM_SUFFIX = "/.well-known/oauth-protected-resource"
# A minimal initialize: what a client sends first, so what a protected server must refuse with its challenge.
FIRST_REQUEST = json.dumps({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
    "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "mcpfuzz", "version": "0"}}})
SHOWN = 200  # characters of a body quoted in an error


@dataclass(frozen=True)
class Fetched:
    """One metadata document asked for: its URL, the status, and the JSON object (None when it was not one)."""

    url: str
    status: int | None
    document: dict[str, Any] | None
    said: str = ""  # what came back, in words, when it was no usable document

    @property
    def ok(self) -> bool:
        return self.status == 200 and self.document is not None


@dataclass(frozen=True)
class Discovery:
    """What discovery found: the challenge, the resource metadata and the authorization server's."""

    challenge: Challenge | None
    status: int | None
    resource: Fetched | None = None
    authorization_server: Fetched | None = None
    tried: tuple[Fetched, ...] = field(default=())

    @property
    def token_endpoint(self) -> str | None:
        doc = self.authorization_server.document if self.authorization_server else None
        endpoint = doc.get("token_endpoint") if doc else None
        return endpoint if isinstance(endpoint, str) else None

    @property
    def scope(self) -> str | None:
        """The scope to ask for when none is given: the challenge's `scope`, else the resource's `scopes_supported`
        (the order the MCP authorization spec's scope selection gives)."""
        if self.challenge is not None and self.challenge.params.get("scope"):
            return self.challenge.params["scope"]
        doc = self.resource.document if self.resource else None
        scopes = doc.get("scopes_supported") if doc else None
        if isinstance(scopes, list) and scopes and all(isinstance(s, str) for s in scopes):
            return " ".join(scopes)
        return None

    @property
    def resource_id(self) -> str | None:
        """The protected resource's identifier (RFC 9728 `resource`), the RFC 8707 `resource` to ask tokens for."""
        doc = self.resource.document if self.resource else None
        value = doc.get("resource") if doc else None
        return value if isinstance(value, str) else None


async def challenge_of(client: httpx.AsyncClient, url: str) -> tuple[int | None, Challenge | None]:
    """POST the first request without a token: the status and the challenge the server answers with."""
    try:
        response = await client.post(url, content=FIRST_REQUEST, headers={
            "Accept": ACCEPT_BOTH, "Content-Type": "application/json"})
    except httpx.HTTPError as error:
        raise AuthError(f"OAuth discovery: POST {url} without a token failed ({type(error).__name__})") from None
    return response.status_code, parse_challenge(response.headers.get("www-authenticate"))


async def fetch_json(client: httpx.AsyncClient, url: str) -> Fetched:
    """GET a metadata document; what came back, described when it is no JSON object."""
    try:
        response = await client.get(url, headers={"Accept": "application/json"})
    except httpx.HTTPError as error:
        return Fetched(url, None, None, f"no answer ({type(error).__name__})")
    body = response.text
    try:
        document = json.loads(body)
    except ValueError:
        document = None
    if response.status_code != 200 or not isinstance(document, dict):
        return Fetched(url, response.status_code, None,
                       f"HTTP {response.status_code}, {response.headers.get('content-type', 'no content type')}: "
                       f"{body[:SHOWN]!r}")
    return Fetched(url, response.status_code, document)


def resource_metadata_urls(url: str, challenge: Challenge | None) -> list[str]:
    """Where the protected resource metadata is: the challenge's URL, else the well-known URIs (path first)."""
    if challenge is not None and challenge.resource_metadata:
        return [challenge.resource_metadata]
    parts = urlsplit(url)
    path = parts.path.rstrip("/")
    urls = [urlunsplit((parts.scheme, parts.netloc, PRM_SUFFIX + path, "", ""))] if path else []
    return [*urls, urlunsplit((parts.scheme, parts.netloc, PRM_SUFFIX, "", ""))]


def authorization_server_urls(issuer: str) -> list[str]:
    """RFC 8414 section 3.1 and OpenID Connect discovery URLs of an issuer, in the order the MCP spec gives."""
    parts = urlsplit(issuer)
    path = parts.path.rstrip("/")

    def at(well_known: str) -> str:
        return urlunsplit((parts.scheme, parts.netloc, well_known + path, "", ""))

    if not path:
        return [at("/.well-known/oauth-authorization-server"), at("/.well-known/openid-configuration")]
    return [at("/.well-known/oauth-authorization-server"), at("/.well-known/openid-configuration"),
            urlunsplit((parts.scheme, parts.netloc, path + "/.well-known/openid-configuration", "", ""))]


async def first_document(client: httpx.AsyncClient, urls: list[str]) -> tuple[Fetched | None, list[Fetched]]:
    """The first URL that serves a JSON object, and every answer tried on the way."""
    tried = []
    for url in urls:
        fetched = await fetch_json(client, url)
        tried.append(fetched)
        if fetched.ok:
            return fetched, tried
    return None, tried


async def discover(client: httpx.AsyncClient, url: str) -> Discovery:
    """Follow the server's 401 to its token endpoint; AuthError naming each URL and what it answered."""
    status, challenge = await challenge_of(client, url)
    resource, tried = await first_document(client, resource_metadata_urls(url, challenge))
    if resource is None:
        said = f"with WWW-Authenticate {challenge.scheme!r}" if challenge else "and no WWW-Authenticate"
        raise AuthError(f"OAuth discovery: POST {url} without a token got HTTP {status} {said}; no protected "
                        f"resource metadata (RFC 9728): {_tried(tried)}")
    assert resource.document is not None
    servers = resource.document.get("authorization_servers")
    issuer = servers[0] if isinstance(servers, list) and servers and isinstance(servers[0], str) else None
    if issuer is None:
        raise AuthError(f"OAuth discovery: the protected resource metadata at {resource.url} names no "
                        f"authorization_servers (it has {sorted(resource.document)})")
    server, more = await first_document(client, authorization_server_urls(issuer))
    found = Discovery(challenge, status, resource, server, (*tried, *more))
    if server is None:
        raise AuthError(f"OAuth discovery: no authorization server metadata (RFC 8414) for the issuer {issuer}: "
                        f"{_tried(more)}")
    if found.token_endpoint is None:
        raise AuthError(f"OAuth discovery: the authorization server metadata at {server.url} has no token_endpoint")
    return found


def _tried(fetched: list[Fetched]) -> str:
    return "; ".join(f"{f.url} answered {f.said or 'HTTP ' + str(f.status)}" for f in fetched)
