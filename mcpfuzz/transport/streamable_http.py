"""Streamable HTTP (2025-03-26 and later): every frame is one POST; answers come as JSON or an SSE stream."""

from __future__ import annotations

import contextlib
from collections.abc import Mapping

import anyio
import anyio.abc
import httpcore
import httpx

from mcpfuzz.jsonrpc.exchange import ProcessEnd
from mcpfuzz.jsonrpc.http_reply import BODY_SNIPPET, HttpReply
from mcpfuzz.jsonrpc.param_headers import ANNOTATION, ParamHeader, param_headers
from mcpfuzz.jsonrpc.transport_kind import TransportKind
from mcpfuzz.transport.auth.errors import AuthError
from mcpfuzz.transport.base import ConnectionCallbacks, ConnectionOptions, DeliveryKind
from mcpfuzz.transport.errors import ConnectionClosed, ServerStartError
from mcpfuzz.transport.http_client import POST_ERRORS, header
from mcpfuzz.transport.http_connection import HttpConnection
from mcpfuzz.transport.http_headers import (
    ACCEPT_BOTH,
    SESSION_HEADER,
    get_header,
    mcp_headers,
    modern_version,
    parse_body,
    set_header,
)
from mcpfuzz.transport.http_target import HttpTarget
from mcpfuzz.transport.launched import host_port, port_open
from mcpfuzz.transport.sse import SseParser

CLOSE_TIMEOUT = 2.0
SESSION_HEADER_KEY = SESSION_HEADER.lower().encode()
SESSION_PROBE = b'{"jsonrpc":"2.0","id":"mcpfuzz-session-probe","method":"ping"}'


class StreamableHttpServer(HttpConnection):
    """One MCP endpoint URL, optionally a process behind it; "restart" means a new session (or process)."""

    kind = TransportKind.STREAMABLE_HTTP
    # The end of a POST's response settles its frame: no barrier request is needed to know it was handled.
    delivery = DeliveryKind.RESPONSE_PER_REQUEST

    def __init__(self, target: HttpTarget, callbacks: ConnectionCallbacks, options: ConnectionOptions) -> None:
        super().__init__(target, callbacks, options)
        self._on_change = callbacks.on_change
        self._scopes: set[anyio.CancelScope] = set()
        self.version: str | None = None
        self._started = False
        self._dead = False
        self._generation = 0
        self._listening = -1  # the generation whose GET stream was opened (one per session)
        # Each tool's mirrored arguments, learnt from the tools/list results that pass by; kept across sessions
        # and restarts (a tool's schema does not change with the connection), so every tools/call carries them.
        self.param_headers: dict[str, tuple[ParamHeader, ...]] = {}

    async def _close(self) -> None:
        with contextlib.suppress(Exception):
            await self._end_session()

    # -- the server-connection interface the session uses ----------------------------------------

    @property
    def alive(self) -> bool:
        """True while the endpoint answers (and the launched process, if any, runs)."""
        return self._started and not self._dead and self.launched_alive

    async def start(self) -> None:
        """A fresh session: end the old one, (re)start the process if launched, check the endpoint."""
        self._new_generation()
        with contextlib.suppress(Exception):
            await self._end_session()
        self.session_id, self.version, self.end, self._dead = None, None, None, False
        if self._launched is not None:
            await self._start_process()
        if self.auth is not None:
            await self.auth.current()  # a token source that fails stops the run here, saying why
        elif not await port_open(*host_port(self.url)):
            raise ServerStartError(f"cannot connect to {self.url} (connection refused); is the server running? "
                                   "Use --launch 'CMD' to let mcpfuzz start it")
        self._started = True
        self.starts += 1

    async def kill(self) -> None:
        """Abandon the session (and kill the process if launched); pending answers are dropped."""
        self._new_generation()
        with contextlib.suppress(Exception):
            await self._end_session()
        self._started = False
        await self._kill_process()

    async def send(self, data: bytes, extra_headers: Mapping[str, str | None] | None = None) -> HttpReply:
        """POST one frame as the raw body; returns once the response headers are in (or the timeout)."""
        if not self.alive:
            raise ConnectionClosed("the server is not reachable")
        message = parse_body(data)
        version = modern_version(message)
        if version is not None:
            self.version = version
        headers = {"Accept": ACCEPT_BOTH, "Content-Type": "application/json", **self._headers,
                   **mcp_headers(message, self.version, self.param_headers)}
        if self.session_id is not None:
            headers[SESSION_HEADER] = self.session_id
        token = None
        if self.auth is not None and not any(name.lower() == "authorization" for name in extra_headers or {}):
            token = await self.auth.current()  # a case that sets Authorization itself (an auth probe) keeps it
            headers["Authorization"] = f"Bearer {token}"
        for name, value in (extra_headers or {}).items():
            set_header(headers, name, value)
        reply = HttpReply(sent_session_id=get_header(headers, SESSION_HEADER))
        is_initialize = isinstance(message, dict) and message.get("method") == "initialize"
        headers_in = anyio.Event()
        assert self._group is not None
        self._group.start_soon(self._post, data, headers, reply, is_initialize, headers_in, self._generation, token)
        # Waiting for the status keeps the server's processing order the order of our frames.
        with anyio.move_on_after(self.timeout):
            await headers_in.wait()
        if self.session_id is not None and self._listening != self._generation and _is_initialized(message) \
                and reply.status is not None and reply.status < 300:
            # As the SDK clients do: the session's GET stream opens once notifications/initialized is accepted, never
            # between the initialize answer and it.
            self._listening = self._generation
            self._group.start_soon(self._listen, self._generation)
        return reply

    # -- internals -------------------------------------------------------------------------------

    async def _post(self, data: bytes, headers: dict[str, str], reply: HttpReply, is_initialize: bool,
                    headers_in: anyio.Event, generation: int, token: str | None = None) -> None:
        assert self._client is not None
        scope = anyio.CancelScope()
        self._scopes.add(scope)
        try:
            # The session decides when an answer is late; a slow tool's response may still be read to the end.
            with scope, anyio.move_on_after(self.call_timeout) as capped:
                assert self._poster is not None
                response = await self._poster.post(self.url, data, headers)
                if response.status == 401 and token is not None and self.auth is not None:
                    # The run's token expired or was revoked: a new one, and the frame again (the server refused it
                    # unread, so it is sent once as far as the server is concerned).
                    await response.aclose()
                    headers["Authorization"] = f"Bearer {await self.auth.rejected(token)}"
                    response = await self._poster.post(self.url, data, headers)
                try:
                    self._record_headers(reply, response, is_initialize, generation)
                    headers_in.set()
                    await self._read_body(response, reply, is_initialize, generation)
                finally:
                    await response.aclose()
                if reply.refused and reply.session_id and reply.session_id != reply.sent_session_id:
                    reply.session_live = await self._session_live(reply.session_id)
            if capped.cancelled_caught:
                reply.error = f"no complete response within {self.call_timeout:g}s"
        except AuthError as error:
            reply.error = str(error)  # no new token after a 401: this frame goes unanswered, the reason said
        except (httpx.HTTPError, *POST_ERRORS) as error:
            reply.error = _describe(error)
            if generation == self._generation:
                await self._check_reachable()
        finally:
            self._scopes.discard(scope)
            reply.done = True
            headers_in.set()
            self._on_change()

    def _record_headers(self, reply: HttpReply, response: httpcore.Response, is_initialize: bool,
                        generation: int) -> None:
        reply.status = response.status
        reply.content_type = header(response, b"content-type") or ""
        reply.session_id = header(response, SESSION_HEADER_KEY)
        if is_initialize and reply.session_id and self.session_id is None and generation == self._generation:
            self.session_id = reply.session_id

    async def _read_body(self, response: httpcore.Response, reply: HttpReply, is_initialize: bool,
                         generation: int) -> None:
        kind = reply.content_type.split(";")[0].strip().lower()
        if kind == "text/event-stream":
            parser = SseParser(self._max_line)
            async for chunk in response.aiter_stream():
                reply.body_size += len(chunk)
                for event in parser.feed(chunk):
                    # An event with empty data primes reconnection (an event id, nothing to deliver): no message.
                    if event.event == "message" and event.data.strip() and generation == self._generation:
                        self._deliver(event.data.encode("utf-8", "surrogateescape"), None, reply, is_initialize)
            return
        body = bytearray()
        async for chunk in response.aiter_stream():
            reply.body_size += len(chunk)
            if len(body) < self._max_line:
                body += chunk[: self._max_line - len(body)]
        if kind.endswith("json") and bytes(body).strip():
            if generation == self._generation:
                self._deliver(bytes(body), reply.body_size, reply, is_initialize)
        else:
            reply.body = bytes(body[:BODY_SNIPPET])

    def _deliver(self, data: bytes, size: int | None, reply: HttpReply, is_initialize: bool) -> None:
        reply.messages += 1
        if is_initialize:
            self._note_version(data)
        if ANNOTATION.encode() in data:  # only a tools/list page with mirrored arguments is worth parsing
            self._note_param_headers(data)
        # The session tells a window's cases apart by the POST each answer came on (the GET stream's are on none).
        self.delivering = reply
        try:
            self._on_line(data, size if size is not None else len(data))
        finally:
            self.delivering = None

    def _note_version(self, data: bytes) -> None:
        """The legacy version initialize settled on goes into MCP-Protocol-Version from now on."""
        answer = parse_body(data)
        result = answer.get("result") if isinstance(answer, dict) else None
        version = result.get("protocolVersion") if isinstance(result, dict) else None
        if isinstance(version, str):
            self.version = version

    def _note_param_headers(self, data: bytes) -> None:
        """The mirrored arguments of each tool a tools/list result declares (x-mcp-header)."""
        answer = parse_body(data)
        result = answer.get("result") if isinstance(answer, dict) else None
        tools = result.get("tools") if isinstance(result, dict) else None
        for tool in tools if isinstance(tools, list) else ():
            if isinstance(tool, dict) and isinstance(tool.get("name"), str):
                found = param_headers(tool.get("inputSchema"))
                if found:
                    self.param_headers[tool["name"]] = found

    async def _listen(self, generation: int) -> None:
        """The optional GET stream of a legacy session: server requests and notifications arrive here."""
        assert self._client is not None
        headers = {"Accept": "text/event-stream", **self._authorized}
        if self.session_id:
            headers[SESSION_HEADER] = self.session_id
        if self.version:
            headers.update(mcp_headers(None, self.version))
        with contextlib.suppress(httpx.HTTPError):
            async with self._client.stream("GET", self.url, headers=headers,
                                           timeout=httpx.Timeout(None, connect=self.timeout)) as response:
                if response.status_code != 200 or "text/event-stream" not in response.headers.get("content-type", ""):
                    return  # 405: the server offers no stream, which the spec allows
                parser = SseParser(self._max_line)
                async for chunk in response.aiter_raw():
                    if generation != self._generation:
                        return
                    for event in parser.feed(chunk):
                        if event.event == "message" and event.data.strip():
                            data = event.data.encode("utf-8", "surrogateescape")
                            self._on_line(data, len(data))

    async def _session_live(self, session_id: str) -> bool:
        """Does a session id a refusal handed out open a real session? A ping tells; a live one is ended.

        The SDKs put a fresh id on some refusals that then answers 404: that is not a leak.
        """
        assert self._client is not None
        headers = {"Accept": ACCEPT_BOTH, "Content-Type": "application/json", **self._authorized,
                   SESSION_HEADER: session_id, **mcp_headers(None, self.version)}
        response = await self._client.post(self.url, content=SESSION_PROBE, headers=headers)
        live = response.status_code < 400
        if live:
            with contextlib.suppress(httpx.HTTPError):
                await self._client.delete(self.url, headers={**self._authorized, SESSION_HEADER: session_id})
        return live

    async def _end_session(self) -> None:
        """DELETE the session we hold (a good citizen does not leave sessions behind)."""
        session_id, self.session_id = self.session_id, None
        if session_id is None or self._client is None or self._dead:
            return
        with anyio.move_on_after(CLOSE_TIMEOUT):
            await self._client.delete(self.url, headers={**self._authorized, SESSION_HEADER: session_id})

    def _new_generation(self) -> None:
        """Answers still in flight belong to the old session or process: cancel and forget them."""
        self._generation += 1
        for scope in list(self._scopes):
            scope.cancel()

    async def _check_reachable(self) -> None:
        """After a failed request: is the endpoint gone (a crash) or did just this request fail?"""
        if self._launched is not None or self._dead:
            return  # a launched process reports its own exit
        if not await port_open(*host_port(self.url)):
            self._dead = True
            self.end = ProcessEnd(None, "")
            self._on_exit(self.end)


def _describe(error: Exception) -> str:
    """A transport failure (of httpx or of httpcore underneath it) in words."""
    if isinstance(error, (httpx.ConnectError, httpcore.ConnectError)):
        return "connection refused"
    if isinstance(error, (httpx.RemoteProtocolError, httpcore.RemoteProtocolError)):
        return "the server closed the connection without a complete response"
    if isinstance(error, (httpx.TimeoutException, httpcore.TimeoutException)):
        return "timed out"
    return f"{type(error).__name__}: {error}"[:200]


def _is_initialized(message: object) -> bool:
    """True for the notifications/initialized message (after which a client opens the session's GET stream)."""
    return isinstance(message, dict) and message.get("method") == "notifications/initialized" and "id" not in message
