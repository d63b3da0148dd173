"""The one place that knows every kind of target: which connection it gets, and which one a transcript names."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from mcpfuzz.jsonrpc.transport_kind import TransportKind
from mcpfuzz.transport.base import ConnectionCallbacks, ConnectionOptions, HoldsStandby, ServerConnection
from mcpfuzz.transport.http_target import HttpTarget, detect_transport
from mcpfuzz.transport.legacy_sse import LegacySseServer
from mcpfuzz.transport.memory import MemoryServer, MemoryTarget
from mcpfuzz.transport.stdio import StdioServer, inherited_env
from mcpfuzz.transport.stdio_target import StdioTarget
from mcpfuzz.transport.streamable_http import StreamableHttpServer
from mcpfuzz.transport.target import ServerKind

# A server under test: a command to run (stdio), an HTTP endpoint, or a Python handler in this process.
# Each is a TargetDescription; `kind` tells them apart (and narrows this union for mypy).
ServerTarget = StdioTarget | HttpTarget | MemoryTarget

UrlOpener = Callable[[HttpTarget, ConnectionCallbacks, ConnectionOptions], ServerConnection]

# The transports a URL may speak, by the kind `detect_transport` (or --transport) names.
URL_TRANSPORTS: dict[TransportKind, UrlOpener] = {
    TransportKind.STREAMABLE_HTTP: StreamableHttpServer,
    TransportKind.LEGACY_SSE: LegacySseServer,
}


async def open_connection(target: ServerTarget, callbacks: ConnectionCallbacks,
                          options: ConnectionOptions) -> ServerConnection:
    """The connection for a target, to be entered by the caller; a URL's transport is detected first.

    A URL with `{port}` gets a free port here, kept by the connection across restarts.
    """
    if target.kind is ServerKind.MEMORY:
        return MemoryServer(target, callbacks, options)
    if target.kind is ServerKind.URL:
        bound = target.on_free_port()
        kind = await detect_transport(bound, options.timeout)
        return URL_TRANSPORTS[kind](bound, callbacks, options)
    return StdioServer(target.command, on_line=callbacks.on_line, on_exit=callbacks.on_exit,
                       max_line=options.max_line, write_timeout=options.write_timeout, env=inherited_env(options.env),
                       cwd=target.cwd)


def standby_holder(connection: ServerConnection) -> HoldsStandby | None:
    """The connection, when it can keep a standby process (stdio); None otherwise."""
    return connection if isinstance(connection, StdioServer) else None


def standby_refusal(target: ServerTarget) -> str:
    """Why a server mcpfuzz starts gets no standby process ("" when it gets one, or mcpfuzz starts nothing)."""
    if target.kind is not ServerKind.URL or not target.launch:
        return ""
    if not target.picks_port:
        return ("the --launch command listens on a fixed port, so two of its processes cannot run at once (with "
                "`{port}` in the URL and the command each process gets a port of its own)")
    return "mcpfuzz keeps a standby process for stdio servers only"


def target_from_json(data: Mapping[str, Any]) -> ServerTarget | None:
    """The server a transcript's server block names (a URL or a command); None when it names none."""
    return HttpTarget.from_json(data) or StdioTarget.from_json(data)
