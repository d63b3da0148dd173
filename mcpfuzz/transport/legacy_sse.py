"""The HTTP+SSE transport of protocol 2024-11-05: one GET stream carries every answer; frames are POSTed."""

from __future__ import annotations

import contextlib
import json
from collections.abc import Mapping
from urllib.parse import urljoin

import anyio
import anyio.abc
import httpx

from mcpfuzz.jsonrpc.exchange import ProcessEnd
from mcpfuzz.jsonrpc.http_reply import BODY_SNIPPET, HttpReply
from mcpfuzz.jsonrpc.transport_kind import TransportKind
from mcpfuzz.transport.base import ConnectionCallbacks, ConnectionOptions, DeliveryKind
from mcpfuzz.transport.errors import ConnectionClosed, ServerStartError
from mcpfuzz.transport.http_client import POST_ERRORS, header
from mcpfuzz.transport.http_connection import HttpConnection
from mcpfuzz.transport.http_headers import SESSION_HEADER, set_header
from mcpfuzz.transport.http_target import HttpTarget
from mcpfuzz.transport.sse import SseParser


def endpoint_of(data: str, sse_url: str) -> tuple[str, str | None]:
    """The POST URL (relative ones resolved against the SSE URL) and a session id, from an endpoint event.

    2024-11-05 sends a URI; some servers send JSON `{"url": ..., "sessionId": ...}` instead.
    """
    text = data.strip()
    if text.startswith("{"):
        with contextlib.suppress(ValueError):
            shaped = json.loads(text)
            if isinstance(shaped, dict) and isinstance(shaped.get("url"), str):
                session = shaped.get("sessionId")
                return urljoin(sse_url, shaped["url"]), session if isinstance(session, str) else None
    return urljoin(sse_url, text), None


class LegacySseServer(HttpConnection):
    """A 2024-11-05 server: answers arrive in order on the SSE stream, so barriers work as on stdio."""

    kind = TransportKind.LEGACY_SSE
    # Every frame is a POST of its own, its answer on the one SSE stream, in order: a barrier settles it.
    delivery = DeliveryKind.SHARED_STREAM

    def __init__(self, target: HttpTarget, callbacks: ConnectionCallbacks, options: ConnectionOptions) -> None:
        super().__init__(target, callbacks, options)
        self._stream_scope: anyio.CancelScope | None = None
        self.endpoint: str | None = None
        self._open = False

    async def _close(self) -> None:
        self._close_stream()

    @property
    def alive(self) -> bool:
        """True while the SSE stream is open."""
        return self._open and self.launched_alive

    async def start(self) -> None:
        """Open a new SSE stream (a new session) and wait for its endpoint event."""
        self._close_stream()
        self.end, self.endpoint, self.session_id = None, None, None
        await self._start_process()
        if self.auth is not None:
            await self.auth.current()  # the stream and each POST carry the run's token (renewed when due)
        ready = anyio.Event()
        problem: list[str] = []
        assert self._group is not None
        self._group.start_soon(self._stream, ready, problem)
        with anyio.move_on_after(self.timeout):
            await ready.wait()
        if self.endpoint is None:
            self._close_stream()
            why = problem[0] if problem else f"no endpoint event within {self.timeout:g}s"
            raise ServerStartError(f"{self.url} did not open an HTTP+SSE session: {why}")
        self.starts += 1

    async def kill(self) -> None:
        """Close the stream (and kill the launched process)."""
        self._close_stream()
        await self._kill_process()

    async def send(self, data: bytes, extra_headers: Mapping[str, str | None] | None = None) -> HttpReply:
        """POST one frame to the endpoint; the answer comes on the stream."""
        if not self.alive or self.endpoint is None or self._client is None:
            raise ConnectionClosed("the SSE stream is closed")
        if self.auth is not None:
            await self.auth.current()
        headers = {"Content-Type": "application/json", **self._authorized}
        if self.session_id:
            headers[SESSION_HEADER] = self.session_id
        for name, value in (extra_headers or {}).items():
            set_header(headers, name, value)
        reply = HttpReply(transport=TransportKind.LEGACY_SSE, sent_session_id=self.session_id)
        assert self._poster is not None
        try:
            response = await self._poster.post(self.endpoint, data, headers)
            try:
                reply.status = response.status
                reply.content_type = header(response, b"content-type") or ""
                # The answer comes on the stream: of the POST's own body only its start and size are kept.
                body = bytearray()
                async for chunk in response.aiter_stream():
                    reply.body_size += len(chunk)
                    if len(body) < BODY_SNIPPET:
                        body += chunk[:BODY_SNIPPET - len(body)]
                reply.body = bytes(body)
            finally:
                await response.aclose()
        except POST_ERRORS as error:
            reply.error = f"{type(error).__name__}: {error}"[:200]
            raise ConnectionClosed(f"POST to {self.endpoint} failed: {reply.error}") from None
        finally:
            reply.done = True
        return reply

    async def _stream(self, ready: anyio.Event, problem: list[str]) -> None:
        assert self._client is not None
        scope = anyio.CancelScope()
        self._stream_scope = scope
        headers = {"Accept": "text/event-stream", **self._authorized}
        try:
            with scope:
                async with self._client.stream("GET", self.url, headers=headers,
                                               timeout=httpx.Timeout(None, connect=self.timeout)) as response:
                    kind = response.headers.get("content-type", "")
                    if response.status_code != 200 or "text/event-stream" not in kind:
                        problem.append(f"GET answered HTTP {response.status_code} {kind}".strip())
                        ready.set()
                        return
                    self._open = True
                    parser = SseParser(self._max_line)
                    async for chunk in response.aiter_raw():
                        for event in parser.feed(chunk):
                            if event.event == "endpoint" and self.endpoint is None:
                                self.endpoint, self.session_id = endpoint_of(event.data, self.url)
                                ready.set()
                            elif event.event == "message" and event.data.strip():
                                data = event.data.encode("utf-8", "surrogateescape")
                                self._on_line(data, len(data))
        except httpx.HTTPError as error:
            problem.append(f"{type(error).__name__}: {error}"[:200])
        finally:
            ready.set()
            if scope is self._stream_scope and self._open and not scope.cancel_called:
                # The server ended the stream on its own: for this transport that is the connection dying.
                self._open = False
                self.end = ProcessEnd(None, "")
                if self._launched is None:
                    self._on_exit(self.end)
            elif scope is self._stream_scope:
                self._open = False

    def _close_stream(self) -> None:
        if self._stream_scope is not None:
            self._stream_scope.cancel()
        self._open = False
