"""A protected MCP server on the real mcp 2.x SDK's own auth support, over streamable HTTP on 127.0.0.1.

The SDK is the resource server (AuthSettings with resource_server_url, validate_token_resource, a required scope);
the token verifier checks the RS256 JWTs of a real authorization server (tests/auth_server, oauth2-mock-server)
against its JWKS with PyJWT: signature, issuer, audience (this server's URL, RFC 8707) and expiry.

Each --bug plants one defect a protected server is known to ship; without one the server is correct:
  initialize-only  a request on a session is served with the token the session was opened with, whatever it carries
  garbage-500      a token that is no JWT makes the verifier raise: HTTP 500
  no-challenge     refusals lose their WWW-Authenticate header
  alg-none         an unsigned JWT (alg "none") is taken at its word
  any-audience     a token for any audience (resource) is accepted
  query-token      ?access_token= in the URL is taken as the token

--resource URL makes the server known by another resource identifier than its own URL (as behind a proxy), so that
servers on several ports take the same tokens.

Usage: python tests/servers/protected_server.py PORT ISSUER_URL [--bug NAME]... [--resource URL]
"""

from __future__ import annotations

import argparse
import json
from typing import Any

import jwt
import uvicorn
from mcp.server.auth.provider import AccessToken
from mcp.server.auth.settings import AuthSettings
from mcp.server.mcpserver import MCPServer
from starlette.types import ASGIApp, Message, Receive, Scope, Send

BUGS = ("initialize-only", "garbage-500", "no-challenge", "alg-none", "any-audience", "query-token")
SCOPE = "mcp"


class JwtVerifier:
    """The SDK's TokenVerifier over the authorization server's JWKS (plus the planted bugs of the verifier)."""

    def __init__(self, issuer: str, resource: str, bugs: set[str]) -> None:
        self.issuer = issuer
        self.resource = resource
        self.bugs = bugs
        self.keys = jwt.PyJWKClient(f"{issuer}/jwks", cache_keys=True)

    async def verify_token(self, token: str) -> AccessToken | None:
        if "garbage-500" in self.bugs and token.count(".") != 2:
            raise ValueError(f"cannot split {token[:8]!r} into a JWT's three parts")
        try:
            if "alg-none" in self.bugs and jwt.get_unverified_header(token).get("alg") == "none":
                claims = jwt.decode(token, options={"verify_signature": False})
            else:
                key = self.keys.get_signing_key_from_jwt(token).key
                claims = jwt.decode(token, key, algorithms=["RS256"], issuer=self.issuer,
                                    audience=None if "any-audience" in self.bugs else self.resource,
                                    options={"verify_aud": "any-audience" not in self.bugs})
        except (jwt.PyJWTError, ValueError, KeyError):
            return None
        audience = self.resource if "any-audience" in self.bugs else claims.get("aud")
        return AccessToken(token=token, client_id=str(claims.get("sub", "client")),
                           scopes=str(claims.get("scope", "")).split(), expires_at=claims.get("exp"),
                           resource=audience if isinstance(audience, str) else None, subject=claims.get("sub"))


class Planted:
    """The planted bugs that live outside the verifier, as an ASGI layer around the SDK's app."""

    def __init__(self, app: ASGIApp, bugs: set[str]) -> None:
        self.app = app
        self.bugs = bugs
        self.session_tokens: dict[str, bytes] = {}

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = list(scope["headers"])
        if "query-token" in self.bugs:
            query = dict(part.split(b"=", 1) for part in scope.get("query_string", b"").split(b"&") if b"=" in part)
            if b"access_token" in query:
                headers = [(k, v) for k, v in headers if k != b"authorization"]
                headers.append((b"authorization", b"Bearer " + query[b"access_token"]))
        body, receive = await _buffered(receive) if scope["method"] == "POST" else (b"", receive)
        session = dict(headers).get(b"mcp-session-id")
        if "initialize-only" in self.bugs and session in self.session_tokens and not _is_initialize(body):
            headers = [(k, v) for k, v in headers if k != b"authorization"]
            headers.append((b"authorization", self.session_tokens[session]))
        token = dict(headers).get(b"authorization")
        scope = {**scope, "headers": headers}

        async def send_planted(message: Message) -> None:
            if message["type"] == "http.response.start":
                kept = list(message.get("headers", []))
                if "no-challenge" in self.bugs:
                    kept = [(k, v) for k, v in kept if k.lower() != b"www-authenticate"]
                given = dict(kept).get(b"mcp-session-id")
                if given and token and message["status"] < 300:
                    self.session_tokens[given] = token
                message = {**message, "headers": kept}
            await send(message)

        await self.app(scope, receive, send_planted)


async def _buffered(receive: Receive) -> tuple[bytes, Receive]:
    """The request body read whole, and a receive that hands it on again."""
    chunks, more = [], True
    while more:
        message = await receive()
        chunks.append(message.get("body", b""))
        more = message.get("more_body", False)
    body, given = b"".join(chunks), False

    async def again() -> dict[str, Any]:
        nonlocal given
        if not given:
            given = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()

    return body, again


def _is_initialize(body: bytes) -> bool:
    try:
        return json.loads(body).get("method") == "initialize"
    except (ValueError, AttributeError):
        return False


def build(port: int, issuer: str, bugs: set[str], resource: str | None = None) -> ASGIApp:
    resource = resource or f"http://127.0.0.1:{port}/mcp"
    app = MCPServer("protected-test-server", version="0.1.0", token_verifier=JwtVerifier(issuer, resource, bugs),
                    auth=AuthSettings(issuer_url=issuer, resource_server_url=resource, required_scopes=[SCOPE],
                                      validate_token_resource="any-audience" not in bugs))

    @app.tool()
    def echo(text: str) -> str:
        """Return the text unchanged."""
        return text

    @app.tool()
    def add(a: int, b: int) -> int:
        """Add two integers."""
        return a + b

    return Planted(app.streamable_http_app(host="127.0.0.1"), bugs)


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("port", type=int)
    parser.add_argument("issuer")
    parser.add_argument("--bug", action="append", default=[], choices=BUGS)
    parser.add_argument("--resource")
    args = parser.parse_args()
    uvicorn.run(build(args.port, args.issuer.rstrip("/"), set(args.bug), args.resource), host="127.0.0.1",
                port=args.port, log_level="warning")
