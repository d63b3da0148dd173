"""The order of the legacy handshake as the official SDK clients send it (docs/handshake.md).

`initialize`, its answer awaited, then `notifications/initialized`, and only then any other request: nothing
goes between the initialize answer and `notifications/initialized`. A request there (a ping, a liveness
barrier) is a case of its own (`ping-before-initialized`), never part of mcpfuzz's own handshake.
"""

from __future__ import annotations

import json
from typing import Any

# The notification a client sends once `initialize` got a result (the exact bytes the session sends).
INITIALIZED = b'{"jsonrpc":"2.0","method":"notifications/initialized"}'


# The requests that open a session: what follows their answer is what the SDK clients send next, nothing else.
HANDSHAKE_METHODS = frozenset({"initialize", "server/discover"})


def _message(data: bytes) -> dict[str, Any] | None:
    """The frame as a JSON object, or None (a cheap test first: most frames name no handshake method)."""
    if b'"initialize"' not in data and b'"server/discover"' not in data:
        return None
    try:
        message = json.loads(data)
    except (ValueError, RecursionError):
        return None
    return message if isinstance(message, dict) else None


def initialize_id(data: bytes) -> Any:
    """The id of an `initialize` request frame (a JSON integer or string), or None when `data` is none."""
    message = _message(data)
    if message is None or message.get("method") != "initialize":
        return None
    rid = message.get("id")
    return rid if isinstance(rid, (int, str)) and not isinstance(rid, bool) else None


def is_handshake_request(data: bytes) -> bool:
    """True for an `initialize` or `server/discover` request frame (one with an id)."""
    message = _message(data)
    return message is not None and message.get("method") in HANDSHAKE_METHODS and "id" in message


def answered_then(data: bytes) -> tuple[bytes, ...]:
    """What a client sends once this frame's request got a result, before anything else: after an `initialize`
    request, `notifications/initialized`; after any other frame, nothing."""
    return (INITIALIZED,) if initialize_id(data) is not None else ()
