"""Answers to the server's own requests (sampling, roots, ping, ...), sent back without blocking the reader."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

import anyio.abc

from mcpfuzz.jsonrpc.encode import dumps, error_response, response
from mcpfuzz.jsonrpc.expectation import METHOD_NOT_FOUND
from mcpfuzz.jsonrpc.incoming import Incoming
from mcpfuzz.transport.errors import TransportError


class ServerRequests:
    """We declare no client capabilities: ping gets {}, anything else -32601.

    Answers are queued while lines are read and sent by a task (`flush`): the reader never waits on a write.
    """

    def __init__(self, send: Callable[[bytes], Awaitable[object]]) -> None:
        self._send = send
        self._outbox: list[bytes] = []

    def answer(self, incoming: Incoming) -> None:
        """Queue the answer to one request of the server."""
        message = incoming.message
        rid = message.get("id")
        if message.get("method") == "ping":
            reply = response(rid, {})
        else:
            reply = error_response(rid, METHOD_NOT_FOUND, "mcpfuzz serves no client capabilities")
        self._outbox.append(dumps(reply))

    def flush(self, group: anyio.abc.TaskGroup) -> None:
        """Send the queued answers in order, in a task of `group` (a failed write drops the rest)."""
        if not self._outbox:
            return
        frames, self._outbox = self._outbox, []

        async def send_all() -> None:
            for frame in frames:
                try:
                    await self._send(frame)
                except TransportError:
                    return

        group.start_soon(send_all)
