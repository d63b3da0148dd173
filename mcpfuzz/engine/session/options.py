"""A session's limits: how long answers may take, how big a line may be, what the harness declares."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from mcpfuzz.engine.client.capabilities import ALL_CAPABILITIES, ClientCapability
from mcpfuzz.transport.base import DEFAULT_STARTUP_TIMEOUT


@dataclass
class SessionOptions:
    """Timing and size limits of a session."""

    timeout: float = 5.0  # how long any answer may take before the server is asked whether it is alive
    startup_timeout: float = DEFAULT_STARTUP_TIMEOUT  # a process mcpfuzz started: how long until its first answer
    call_timeout: float = 30.0  # a valid call to a server proven alive: how long before it counts as dropped
    grace: float = 0.25
    max_line: int = 8 * 1024 * 1024
    write_timeout: float = 5.0
    env: dict[str, str] | None = None
    frame_log: Path | None = None
    plain_jsonrpc: bool = False  # a plain JSON-RPC 2.0 server: no handshake; the barrier is an unknown method
    standby: bool = True  # keep a standby process for restarts of a server slow to start (stdio)
    # A standby whenever the connection can hold one, not only for a server measured slow to start: in a run that
    # counts its examples the same seed sends the same frames, and a start measured slow on a loaded machine would
    # decide which process a fresh case runs on, and so whether the cases after it need a handshake.
    standby_always: bool = False
    # Declared in the legacy handshake and answered when the server asks (--client-capabilities).
    client_capabilities: frozenset[ClientCapability] = ALL_CAPABILITIES
