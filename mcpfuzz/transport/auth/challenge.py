"""The `WWW-Authenticate: Bearer ...` challenge of a 401 or 403 (RFC 6750 section 3, RFC 9728 section 5.1)."""

from __future__ import annotations

import re
from dataclasses import dataclass

_PARAM = re.compile(r'([A-Za-z0-9_.-]+)\s*=\s*(?:"((?:\\.|[^"\\])*)"|([^\s,]+))')


@dataclass(frozen=True)
class Challenge:
    """A parsed challenge: its scheme and its parameters (names lower-case)."""

    scheme: str
    params: dict[str, str]

    @property
    def bearer(self) -> bool:
        """True for the Bearer scheme (case-insensitive, RFC 9110 section 11.1)."""
        return self.scheme.lower() == "bearer"

    @property
    def resource_metadata(self) -> str | None:
        """The protected resource metadata URL the challenge names (RFC 9728 section 5.1)."""
        return self.params.get("resource_metadata")

    @property
    def error(self) -> str | None:
        """The RFC 6750 error code (`invalid_token`, `insufficient_scope`)."""
        return self.params.get("error")


def parse_challenge(value: str | None) -> Challenge | None:
    """The first challenge of a WWW-Authenticate value; None when there is none."""
    if not value or not value.strip():
        return None
    scheme, _, rest = value.strip().partition(" ")
    params = {m.group(1).lower(): (m.group(2) if m.group(2) is not None else m.group(3))
              for m in _PARAM.finditer(rest)}
    return Challenge(scheme, {k: v.replace('\\"', '"') for k, v in params.items()})
