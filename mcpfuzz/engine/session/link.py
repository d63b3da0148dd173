"""What the session lends its helpers (delivery, patience): the connection, sending with its ids, and liveness."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

import anyio

from mcpfuzz.engine.session.collector import Collector, Pending
from mcpfuzz.engine.session.options import SessionOptions
from mcpfuzz.jsonrpc.http_reply import HttpReply
from mcpfuzz.jsonrpc.ids import ABSENT
from mcpfuzz.transport.base import ServerConnection


class Link(Protocol):
    """A connection to the server under test as the helpers see it: every frame they send goes through it, so it
    is logged and counted, and every harness request gets an id of the session's."""

    server: ServerConnection
    options: SessionOptions
    collector: Collector  # what came back, and the waiting for it
    write_lock: anyio.Lock  # held while frames go out that must not interleave with others
    notice: Callable[[str], bool]  # say something to the user; False when nobody listens

    @property
    def alive(self) -> bool:
        """True while the server can be talked to."""

    def next_id(self) -> int:
        """A fresh integer id for a harness request."""

    async def send_frame(self, data: bytes, http_headers: tuple[tuple[str, str | None], ...] = ()
                         ) -> HttpReply | None:
        """Send one frame; over HTTP, what its request got."""

    async def send_frames(self, frames: tuple[bytes, ...]) -> None:
        """Several frames in one write, in order."""

    def log_sent(self, frames: tuple[bytes, ...]) -> None:
        """Frames that went out by the connection directly (each its own POST): logged and counted as sent."""

    def barrier_frame(self) -> tuple[bytes, Pending]:
        """A cheap request whose reply proves the server read and handled everything before it, not yet sent."""

    async def send_barrier(self) -> Pending | None:
        """The barrier request alone; None when it could not be sent."""

    async def notify(self, method: str, params: Any = ABSENT) -> None:
        """Send a notification of the harness."""

    def startup_until(self) -> float | None:
        """While the current process has answered nothing yet: the latest its first answer may come."""
