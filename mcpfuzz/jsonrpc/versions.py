"""MCP protocol versions and the two eras they belong to."""

from __future__ import annotations

from enum import Enum

LEGACY_VERSIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
MODERN_VERSIONS = ("2026-07-28",)
KNOWN_VERSIONS = LEGACY_VERSIONS + MODERN_VERSIONS
LATEST_LEGACY = "2025-11-25"
LATEST_MODERN = "2026-07-28"

# What reports and transcripts name as the version of a plain JSON-RPC 2.0 server (`run --jsonrpc`, no MCP).
PLAIN_JSONRPC = "JSON-RPC 2.0"

# Only this revision has JSON-RPC batches (added 2025-03-26, removed 2025-06-18).
BATCH_VERSION = "2025-03-26"

META_VERSION_KEY = "io.modelcontextprotocol/protocolVersion"
META_CAPABILITIES_KEY = "io.modelcontextprotocol/clientCapabilities"
META_CLIENT_INFO_KEY = "io.modelcontextprotocol/clientInfo"

UNSUPPORTED_VERSION_CODE = -32022
UNSUPPORTED_VERSION_CODE_RC = -32004  # the 2026-07-28 release candidate's code; some servers still send it


class Era(str, Enum):
    """Legacy: initialize handshake and sessions. Modern: stateless, `_meta` on every request."""

    LEGACY = "legacy"
    MODERN = "modern"


def era_of(version: str) -> Era:
    """The era a protocol version belongs to (unknown future dates count as modern)."""
    return Era.LEGACY if version < MODERN_VERSIONS[0] else Era.MODERN


def modern_meta(version: str = LATEST_MODERN) -> dict:
    """The `_meta` every modern-era request carries; no client capabilities are declared."""
    return {
        META_VERSION_KEY: version,
        META_CAPABILITIES_KEY: {},
        META_CLIENT_INFO_KEY: {"name": "mcpfuzz", "version": _own_version()},
    }


def _own_version() -> str:
    from mcpfuzz import __version__

    return __version__
