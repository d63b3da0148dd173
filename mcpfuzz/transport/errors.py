"""Transport failures, phrased for the person running mcpfuzz."""

from __future__ import annotations


class TransportError(Exception):
    """The server cannot be reached or started."""


class ServerStartError(TransportError):
    """The server command could not be started at all (not found, not executable)."""


class ConnectionClosed(TransportError):
    """The server closed its input or exited while we were writing."""


class WriteTimeout(TransportError):
    """The server stopped reading its input: a write did not complete in time."""
