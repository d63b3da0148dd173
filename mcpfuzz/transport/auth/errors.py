"""Why no token could be had: a failing token command, a discovery that went wrong, a refused client."""

from __future__ import annotations

from mcpfuzz.transport.errors import ServerStartError


class AuthError(ServerStartError):
    """No token could be obtained: the run cannot talk to the protected server (the message says why, no secret)."""
