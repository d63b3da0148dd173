"""What both HTTP transports share: the client, the task group, and the optional `--launch` process."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import TypeVar

import anyio
import anyio.abc
import httpx

from mcpfuzz.jsonrpc.exchange import ProcessEnd
from mcpfuzz.jsonrpc.http_reply import HttpReply
from mcpfuzz.transport.auth.keeper import TokenKeeper, keeper_for
from mcpfuzz.transport.base import ConnectionCallbacks, ConnectionOptions
from mcpfuzz.transport.http_client import Poster, new_client
from mcpfuzz.transport.http_target import HttpTarget
from mcpfuzz.transport.launched import LaunchedServer
from mcpfuzz.transport.stderr_tail import StderrTail
from mcpfuzz.transport.stdio import inherited_env

Http = TypeVar("Http", bound="HttpConnection")


class HttpConnection:
    """A URL, the headers sent with every request, and the process behind it when mcpfuzz launched it."""

    # Set by a transport while it hands on a message read from a POST's own response (see ServerConnection).
    delivering: HttpReply | None = None

    def __init__(self, target: HttpTarget, callbacks: ConnectionCallbacks, options: ConnectionOptions) -> None:
        self.url = target.url
        self.argv = list(target.launch)
        self._on_line = callbacks.on_line
        self._on_exit = callbacks.on_exit
        self._headers = dict(target.headers)
        self.auth: TokenKeeper | None = keeper_for(target.auth, target.url) if target.auth is not None else None
        self.timeout = options.timeout
        self.call_timeout = max(options.call_timeout, options.timeout)
        self._max_line = options.max_line
        self._launched = (LaunchedServer(target.launch, self.url, on_exit=self._process_exit,
                                         env=inherited_env(target.launch_env(options.env)),
                                         start_timeout=options.startup_timeout)
                          if target.launch else None)
        self._client: httpx.AsyncClient | None = None
        self._poster: Poster | None = None
        self._group: anyio.abc.TaskGroup | None = None
        self.starts = 0
        self.end: ProcessEnd | None = None
        self.session_id: str | None = None
        self._no_stderr = StderrTail(1)

    async def __aenter__(self: Http) -> Http:
        self._client, transport = new_client(self.call_timeout, self.timeout)
        self._poster = Poster(self._client, transport)
        self._group = anyio.create_task_group()
        await self._group.__aenter__()
        if self._launched is not None:
            await self._launched.__aenter__()
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        with anyio.CancelScope(shield=True):
            await self._close()
        if self._launched is not None:
            await self._launched.__aexit__(*exc_info)
        # Scopes are exited where they were entered (outside any shield): anyio insists on it.
        assert self._group is not None and self._client is not None
        self._group.cancel_scope.cancel()
        await self._group.__aexit__(None, None, None)
        with anyio.CancelScope(shield=True):
            await self._client.aclose()

    async def _close(self) -> None:
        """Transport-specific cleanup at the end (shielded): end the session, close the stream."""

    @property
    def _authorized(self) -> dict[str, str]:
        """The headers of every request, with the current bearer token when the run keeps one."""
        token = self.auth.token if self.auth is not None else None
        return {**self._headers, "Authorization": f"Bearer {token.value}"} if token is not None else self._headers

    @property
    def launched_alive(self) -> bool:
        """True without --launch, else while the launched process runs."""
        return self._launched is None or self._launched.alive

    @property
    def stderr(self) -> StderrTail:
        """The launched process' log tail (nothing without --launch)."""
        return self._launched.stderr if self._launched is not None else self._no_stderr

    @property
    def pid(self) -> int | None:
        """The launched process' pid, if any."""
        return self._launched.process.pid if self._launched is not None else None

    @property
    def alive(self) -> bool:
        """Whether the server can be talked to (each transport decides)."""
        raise NotImplementedError

    async def send(self, data: bytes, extra_headers: Mapping[str, str | None] | None = None) -> HttpReply:
        """POST one frame (each transport decides where, and where its answer comes)."""
        raise NotImplementedError

    async def send_many(self, frames: Sequence[bytes]) -> None:
        """POST the frames one after the other (each waits for its response's headers, keeping their order)."""
        for frame in frames:
            await self.send(frame)

    async def wait_exit(self, timeout: float = math.inf) -> bool:
        """Wait for the launched process to end; without one, dead means unreachable."""
        if self._launched is not None:
            return await self._launched.wait_exit(timeout)
        return not self.alive

    async def _start_process(self) -> None:
        if self._launched is not None:
            await self._launched.start()

    async def _kill_process(self) -> None:
        if self._launched is not None:
            await self._launched.kill()

    def _process_exit(self, end: ProcessEnd) -> None:
        self.end = end
        self._on_exit(end)
