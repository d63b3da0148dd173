"""Answers to the server's own requests (ping, elicitation, sampling, roots), sent back without blocking the reader."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

import anyio.abc

from mcpfuzz.engine.client.responder import ClientResponder
from mcpfuzz.jsonrpc.encode import dumps
from mcpfuzz.jsonrpc.incoming import Incoming
from mcpfuzz.transport.errors import TransportError

# Answers waiting to be sent, at most: a server that floods requests faster than it reads its answers
# gets no answer to the excess (a client may drop what it cannot serve), and mcpfuzz stays bounded.
MAX_OUTBOX = 1_000


class ServerRequests:
    """Ping gets {}; what the declared client capabilities cover gets the responder's answer; the rest -32601.

    Answers are queued while lines are read and sent by one task at a time (`flush`): the reader never
    waits on a write, and a flood of requests is neither a flood of tasks nor an unbounded queue.
    """

    def __init__(self, send: Callable[[bytes], Awaitable[object]], responder: ClientResponder) -> None:
        self._send = send
        self.responder = responder
        self._outbox: list[bytes] = []
        self._sending = False
        self.dropped = 0  # answers never sent because the outbox was full

    def answer(self, incoming: Incoming) -> None:
        """Queue the answer to one request of the server."""
        reply = self.responder.reply(incoming.message)
        if reply is None:
            return  # left unanswered on purpose (the open case's answer mode)
        if len(self._outbox) >= MAX_OUTBOX:
            self.dropped += 1
            return
        self._outbox.append(dumps(reply))

    def flush(self, group: anyio.abc.TaskGroup) -> None:
        """Send the queued answers in order from one task of `group` (a failed write drops the rest)."""
        if not self._outbox or self._sending:
            return  # the running task takes what was queued since
        self._sending = True

        async def send_all() -> None:
            try:
                while self._outbox:
                    frames, self._outbox = self._outbox, []
                    for frame in frames:
                        await self._send(frame)
            except TransportError:
                self._outbox.clear()
            finally:
                self._sending = False

        group.start_soon(send_all)
