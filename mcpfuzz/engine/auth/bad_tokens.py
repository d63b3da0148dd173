"""The bad tokens a protected server must refuse, made from the run's good one (its claims, when it is a JWT)."""

from __future__ import annotations

import json
import secrets
import time
from dataclasses import dataclass
from typing import Any

import jwt
from cryptography.hazmat.primitives.asymmetric import ec, rsa

from mcpfuzz.transport.auth.token import b64url_encode, jwt_claims, jwt_header

OTHER_AUDIENCE = "https://other-resource.mcpfuzz.invalid/mcp"
HOUR = 3600


@dataclass(frozen=True)
class BadToken:
    """One way a token can be wrong: the Authorization header to send (None: none) and the token for the URL query."""

    id: str
    title: str
    authorization: str | None
    query_token: str | None = None


def forged_tokens(good: str, expired: str | None, other_audience: str | None) -> list[BadToken]:
    """Every bad token that can be made for `good`: no token, garbage, expired, alg none, another key, another
    audience, the good token in the URL query. The JWT-based ones need `good` to be a JWT; `expired` is a token the
    server issued that has expired, `other_audience` one its authorization server issued for another resource (only
    the authorization server can sign one: a forged one would be refused for its signature, testing nothing new)."""
    tokens = [BadToken("none", "no token", None),
              BadToken("garbage", "a garbage token", f"Bearer mcpfuzz-garbage-{secrets.token_hex(12)}")]
    header, claims = jwt_header(good), jwt_claims(good)
    key = _own_key(header) if header is not None else None
    if expired is not None:
        tokens.append(BadToken("expired", "an expired token the authorization server issued", f"Bearer {expired}"))
    elif header is not None and claims is not None:
        now = int(time.time())
        old = {**claims, "iat": now - 2 * HOUR, "nbf": now - 2 * HOUR, "exp": now - HOUR}
        tokens.append(BadToken("expired", "an expired token (the good one's claims, an hour past, signed anew)",
                               f"Bearer {_signed(header, old, key)}"))
    if header is not None and claims is not None:
        tokens.append(BadToken("alg-none", "an unsigned JWT (alg none) with the good token's claims",
                               f"Bearer {unsigned(header, claims)}"))
        tokens.append(BadToken("other-key", "a JWT with the good token's claims signed with another key",
                               f"Bearer {_signed(header, claims, key)}"))
    if other_audience is not None:
        tokens.append(BadToken("other-audience", "a token the authorization server issued for another resource",
                               f"Bearer {other_audience}"))
    tokens.append(BadToken("query", "the valid token in the URL query (access_token) instead of the header", None,
                           query_token=good))
    return tokens


def unsigned(header: dict[str, Any], claims: dict[str, Any]) -> str:
    """An RFC 7519 section 6 unsecured JWT: alg none, the claims, an empty signature."""
    head = {**{k: v for k, v in header.items() if k != "kid"}, "alg": "none", "typ": "JWT"}
    return ".".join((b64url_encode(json.dumps(head).encode()), b64url_encode(json.dumps(claims).encode()), ""))


def _own_key(header: dict[str, Any]) -> tuple[str, Any]:
    """A key of mcpfuzz's own in the good token's algorithm family, and the algorithm to sign with."""
    alg = str(header.get("alg", "RS256"))
    if alg.startswith(("RS", "PS")):
        return alg, rsa.generate_private_key(public_exponent=65537, key_size=2048)
    if alg.startswith("ES"):
        curve = {"ES384": ec.SECP384R1(), "ES512": ec.SECP521R1()}.get(alg, ec.SECP256R1())
        return alg, ec.generate_private_key(curve)
    if alg.startswith("HS"):
        return alg, secrets.token_bytes(64)
    return "RS256", rsa.generate_private_key(public_exponent=65537, key_size=2048)


def _signed(header: dict[str, Any], claims: dict[str, Any], key: tuple[str, Any] | None) -> str:
    """The claims signed with mcpfuzz's own key (the good token's `kid` kept, so the server looks up its own key)."""
    assert key is not None
    alg, secret = key
    extra = {k: v for k, v in header.items() if k not in ("alg", "typ")}
    return jwt.encode(claims, secret, algorithm=alg, headers=extra)
