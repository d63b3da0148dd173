"""A bearer token and when it expires, read from what a token command or a token endpoint answered."""

from __future__ import annotations

import base64
import json
import time
from dataclasses import dataclass
from typing import Any

# A token is renewed once this share of its lifetime is left (and at least MIN_MARGIN seconds before it ends), so a
# request in flight never carries one that expires on the way.
REFRESH_SHARE = 0.2
MIN_MARGIN = 2.0


class TokenFormatError(ValueError):
    """What a token source printed or answered holds no usable token."""


@dataclass(frozen=True)
class Token:
    """A bearer token; `expires_at` in time.monotonic() seconds (None: no lifetime known, renewed on a 401)."""

    value: str
    expires_at: float | None = None
    lifetime: float | None = None

    def due(self, now: float | None = None) -> bool:
        """True once the token should be renewed before use."""
        if self.expires_at is None or self.lifetime is None:
            return False
        margin = max(MIN_MARGIN, REFRESH_SHARE * self.lifetime)
        return (time.monotonic() if now is None else now) >= self.expires_at - margin

    @classmethod
    def issued(cls, value: str, expires_in: float | None) -> Token:
        """A token issued now; without `expires_in`, a JWT's own `exp` claim gives its lifetime."""
        value = value.strip()
        if not value or any(c.isspace() for c in value):
            raise TokenFormatError("the token is empty or has spaces in it")
        if expires_in is None:
            claims = jwt_claims(value)
            exp = claims.get("exp") if claims else None
            if isinstance(exp, (int, float)) and not isinstance(exp, bool):
                expires_in = exp - time.time()
        if expires_in is None:
            return cls(value)
        lifetime = max(0.0, float(expires_in))
        return cls(value, time.monotonic() + lifetime, lifetime)


def parse_token_output(text: str) -> Token:
    """A token command's output: the token alone, or JSON `{"access_token": ..., "expires_in": ...}`."""
    stripped = text.strip()
    if stripped.startswith("{"):
        try:
            data = json.loads(stripped)
        except ValueError as error:
            raise TokenFormatError(f"the output starts like JSON but is not JSON ({error})") from None
        return token_response(data)
    return Token.issued(stripped, None)


def token_response(data: Any) -> Token:
    """An OAuth token response (RFC 6749 section 5.1): `access_token` and an optional `expires_in`."""
    if not isinstance(data, dict) or not isinstance(data.get("access_token"), str):
        keys = sorted(data) if isinstance(data, dict) else type(data).__name__
        raise TokenFormatError(f"no string access_token in the JSON (it has {keys})")
    expires_in = data.get("expires_in")
    if isinstance(expires_in, str) and expires_in.isdigit():
        expires_in = int(expires_in)
    seconds = float(expires_in) if isinstance(expires_in, (int, float)) and not isinstance(expires_in, bool) else None
    return Token.issued(data["access_token"], seconds)


def jwt_claims(token: str) -> dict[str, Any] | None:
    """A JWT's payload, decoded without checking anything (None when the token is no JWT)."""
    parts = token.split(".")
    if len(parts) != 3:
        return None
    try:
        claims = json.loads(b64url_decode(parts[1]))
    except (ValueError, UnicodeDecodeError):
        return None
    return claims if isinstance(claims, dict) else None


def jwt_header(token: str) -> dict[str, Any] | None:
    """A JWT's header, decoded without checking anything (None when the token is no JWT)."""
    try:
        header = json.loads(b64url_decode(token.split(".")[0]))
    except (ValueError, UnicodeDecodeError):
        return None
    return header if isinstance(header, dict) and jwt_claims(token) is not None else None


def b64url_decode(part: str) -> bytes:
    """Base64url without padding (RFC 7515) to bytes."""
    return base64.urlsafe_b64decode(part + "=" * (-len(part) % 4))


def b64url_encode(data: bytes) -> str:
    """Bytes to base64url without padding (RFC 7515)."""
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")
