"""Over streamable HTTP: a server refusing the protocol version mcpfuzz asked for, and which version to try next."""

from __future__ import annotations

import re
from dataclasses import dataclass

from mcpfuzz.jsonrpc.exchange import Exchange
from mcpfuzz.jsonrpc.versions import LEGACY_VERSIONS, UNSUPPORTED_VERSION_CODE, UNSUPPORTED_VERSION_CODE_RC

# Streamable HTTP, where these refusals come from, begins with 2025-03-26: stepping down stops there.
OLDEST_FALLBACK = "2025-03-26"
VERSION_CODES = (UNSUPPORTED_VERSION_CODE, UNSUPPORTED_VERSION_CODE_RC)
# A plain 400 is a version refusal when its words are about the version (the header, or "protocol version").
NAMES_VERSION = re.compile(r"mcp-protocol-version|protocol[ _-]?version", re.IGNORECASE)


@dataclass(frozen=True)
class VersionRefusal:
    """A 400 refusing `requested`: its JSON-RPC code, if any, and the versions it lists (`data.supported`)."""

    requested: str
    status: int
    code: int | None
    supported: tuple[str, ...]

    def next_version(self) -> str | None:
        """The newest legacy version the refusal lists below `requested`, else the next older one mcpfuzz knows
        (not below 2025-03-26); None when nothing is left to try."""
        listed = [v for v in LEGACY_VERSIONS if v in self.supported and v < self.requested]
        if listed:
            return max(listed)
        older = [v for v in LEGACY_VERSIONS if OLDEST_FALLBACK <= v < self.requested]
        return max(older) if older else None

    def notice(self, version: str) -> str:
        """What the user is told once: the refusal, and the version tried instead."""
        how = f"{self.status}, {self.code}" if self.code is not None else str(self.status)
        listed = version in self.supported
        why = "the newest it lists" if listed else "the next older version mcpfuzz knows"
        return f"the server refused protocol version {self.requested} over HTTP ({how}); retrying with {version}, {why}"


def version_refusal(exchange: Exchange, requested: str) -> VersionRefusal | None:
    """The exchange's answer, when it is a 400 refusing the version (None otherwise, and on stdio).

    2026-07-28 basic/transports/streamable-http, "Protocol Version Header": a version the server does not
    implement gets 400 and an UnsupportedProtocolVersionError (-32022, -32004 in the release candidate) whose
    `data.supported` lists the versions it does; "Backward Compatibility": the client retries with one of those.
    2025-06-18 and 2025-11-25 "Protocol Version Header": an unsupported header gets 400 with no body fixed, so a
    plain 400 (or a JSON-RPC error of another code) that speaks of the protocol version is a refusal too.
    """
    http = exchange.http
    if http is None or http.status != 400:
        return None
    for arrival in exchange.responses():
        message = arrival.incoming.message
        error = message.get("error") if isinstance(message, dict) else None
        if not isinstance(error, dict):
            continue
        code = error.get("code")
        if code in VERSION_CODES:
            data = error.get("data")
            listed = data.get("supported") if isinstance(data, dict) else None
            supported = tuple(v for v in listed if isinstance(v, str)) if isinstance(listed, list) else ()
            return VersionRefusal(requested, 400, code, supported)
        if NAMES_VERSION.search(str(error.get("message"))):
            return VersionRefusal(requested, 400, code if isinstance(code, int) else None, ())
    if NAMES_VERSION.search(http.body.decode("utf-8", "replace")):
        return VersionRefusal(requested, 400, None, ())
    return None

