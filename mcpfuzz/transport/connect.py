"""The one place that knows every transport: which connection a server target gets."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from mcpfuzz.jsonrpc.transport_kind import TransportKind
from mcpfuzz.transport.base import ConnectionCallbacks, ConnectionOptions, ServerConnection
from mcpfuzz.transport.http_target import HttpTarget, detect_transport
from mcpfuzz.transport.legacy_sse import LegacySseServer
from mcpfuzz.transport.memory import MemoryServer, MemoryTarget
from mcpfuzz.transport.stdio import StdioServer, inherited_env
from mcpfuzz.transport.streamable_http import StreamableHttpServer

# A server under test: a command to run (stdio), an HTTP endpoint, or a Python handler in this process.
ServerTarget = Sequence[str] | HttpTarget | MemoryTarget

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
    if isinstance(target, MemoryTarget):
        return MemoryServer(target, callbacks, options)
    if isinstance(target, HttpTarget):
        bound = target.on_free_port()
        kind = await detect_transport(bound, options.timeout)
        return URL_TRANSPORTS[kind](bound, callbacks, options)
    return StdioServer(target, on_line=callbacks.on_line, on_exit=callbacks.on_exit, max_line=options.max_line,
                       write_timeout=options.write_timeout, env=inherited_env(options.env))
