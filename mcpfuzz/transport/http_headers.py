"""The MCP headers of a POST, derived from its body the way a conforming client derives them."""

from __future__ import annotations

import base64
import json
from collections.abc import Mapping, Sequence
from typing import Any

from mcpfuzz.jsonrpc.param_headers import ParamHeader, mirrored

ACCEPT_BOTH = "application/json, text/event-stream"
SESSION_HEADER = "Mcp-Session-Id"
VERSION_HEADER = "MCP-Protocol-Version"
METHOD_HEADER = "Mcp-Method"
NAME_HEADER = "Mcp-Name"
META_VERSION_KEY = "io.modelcontextprotocol/protocolVersion"
# The 2025-06-18 revision introduced MCP-Protocol-Version on every request after initialize.
FIRST_VERSION_WITH_HEADER = "2025-06-18"
# Methods whose params.name or params.uri is mirrored into Mcp-Name (2026-07-28 streamable HTTP,
# "Standard Request Headers"), and the tasks extension's params.taskId ("Streamable HTTP: Routing Headers").
NAMED_METHODS = {"tools/call": "name", "prompts/get": "name", "resources/read": "uri", "tasks/get": "taskId",
                 "tasks/update": "taskId", "tasks/cancel": "taskId"}
SENTINEL_PREFIX, SENTINEL_SUFFIX = "=?base64?", "?="


def parse_body(body: bytes) -> Any:
    """The body as JSON, or None when it is not JSON (malformed frames are sent as they are)."""
    try:
        return json.loads(body)
    except (ValueError, UnicodeDecodeError, RecursionError):
        return None


def header_value(value: str) -> str:
    """A header value as the spec encodes it: plain visible ASCII, else the Base64 sentinel form."""
    plain = all(0x20 <= ord(c) <= 0x7E for c in value) and value == value.strip()
    looks_encoded = value.startswith(SENTINEL_PREFIX) and value.endswith(SENTINEL_SUFFIX)
    if plain and value and not looks_encoded:
        return value
    encoded = base64.b64encode(value.encode("utf-8", "surrogatepass")).decode("ascii")
    return f"{SENTINEL_PREFIX}{encoded}{SENTINEL_SUFFIX}"


def modern_version(message: Any) -> str | None:
    """The protocol version a modern request names in params._meta, if any."""
    if not isinstance(message, dict):
        return None
    params = message.get("params")
    meta = params.get("_meta") if isinstance(params, dict) else None
    version = meta.get(META_VERSION_KEY) if isinstance(meta, dict) else None
    return version if isinstance(version, str) else None


def mcp_headers(message: Any, session_version: str | None,
                param_headers: Mapping[str, Sequence[ParamHeader]] | None = None) -> dict[str, str]:
    """MCP-Protocol-Version, Mcp-Method and Mcp-Name for one message, and a modern tools/call's `Mcp-Param-*`.

    A modern request mirrors its own body; `initialize` carries no version, since it is where the version is
    negotiated (2025-06-18 basic/transports, "Protocol Version Header": the header goes on the requests after
    it), so the version of a refused server/discover never rides on the legacy handshake that follows it;
    anything else (a legacy request after initialize, a malformed frame) carries the session's negotiated
    version from 2025-06-18 on. `param_headers`: each tool's mirrored arguments (x-mcp-header), by tool name;
    a conforming client MUST send them (2026-07-28 streamable-http, "Custom Headers from Tool Parameters").
    """
    headers: dict[str, str] = {}
    version = modern_version(message)
    if version is not None:
        headers[VERSION_HEADER] = header_value(version)
        method = message.get("method")
        if isinstance(method, str):
            headers[METHOD_HEADER] = header_value(method)
            field = NAMED_METHODS.get(method)
            params = message.get("params")
            name = params.get(field) if field and isinstance(params, dict) else None
            if isinstance(name, str):
                headers[NAME_HEADER] = header_value(name)
            if method == "tools/call" and isinstance(name, str) and param_headers and name in param_headers:
                arguments = params.get("arguments") if isinstance(params, dict) else None
                for header, text in mirrored(arguments, param_headers[name]).items():
                    headers[header] = header_value(text)
    elif session_version is not None and session_version >= FIRST_VERSION_WITH_HEADER \
            and not (isinstance(message, dict) and message.get("method") == "initialize"):
        headers[VERSION_HEADER] = session_version
    return headers


def get_header(headers: Mapping[str, str], name: str) -> str | None:
    """A header's value, its name compared case-insensitively (RFC 9110)."""
    lowered = name.lower()
    return next((v for k, v in headers.items() if k.lower() == lowered), None)


def set_header(headers: dict[str, Any], name: str, value: str | None) -> None:
    """Replace a header case-insensitively; None removes it."""
    for key in [k for k in headers if k.lower() == name.lower()]:
        del headers[key]
    if value is not None:
        headers[name] = value
