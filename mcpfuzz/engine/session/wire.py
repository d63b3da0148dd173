"""The session's side of the connection (a `Link`): frames out, logged and counted; harness requests with their ids."""

from __future__ import annotations

import contextlib
from collections import deque
from collections.abc import Callable, Iterator
from typing import Any, BinaryIO

import anyio

from mcpfuzz.engine.session.collector import Collector, Pending
from mcpfuzz.engine.session.options import SessionOptions
from mcpfuzz.engine.session.process import ProcessKeeper
from mcpfuzz.jsonrpc.encode import dumps, request, with_meta
from mcpfuzz.jsonrpc.http_reply import HttpReply
from mcpfuzz.jsonrpc.ids import ABSENT
from mcpfuzz.jsonrpc.incoming import Incoming
from mcpfuzz.jsonrpc.versions import Era, modern_meta
from mcpfuzz.transport.base import ServerConnection
from mcpfuzz.transport.errors import TransportError

HARNESS_FIRST_ID = 10_000
# Harness ids of requests sent aside (`Wire.aside`): a range of their own, so the run's other ids never shift.
ASIDE_HARNESS_FIRST_ID = 2**31
# Frames of the current process kept for reproductions: the handshake is all that is read back, and a
# soak sends millions of frames to one process.
LOG_LIMIT = 64
# The barrier of a plain JSON-RPC server: a method none serves, so any server answers it at once (-32601).
PLAIN_BARRIER = "mcpfuzz.barrier"

Speech = Callable[[], tuple[Era | None, str]]  # the era and protocol version frames are written in, as of now


class HarnessError(Exception):
    """A request of the harness itself got no usable answer."""


class Wire:
    """Every frame the session and its helpers send: written under one lock, counted, kept for reproductions and
    logged to --log-frames; every harness request gets a fresh id and its reply from the collector."""

    server: ServerConnection  # set once the session has opened it

    def __init__(self, options: SessionOptions, collector: Collector, processes: ProcessKeeper, speech: Speech,
                 notice: Callable[[str], bool]) -> None:
        self.options = options
        self.collector = collector
        self._processes = processes
        self._speech = speech
        self.notice = notice  # say something to the user; False when nobody listens
        self.write_lock = anyio.Lock(fast_acquire=True)
        self.frames_sent = 0
        self.log: deque[bytes] = deque(maxlen=LOG_LIMIT)  # the latest frames of the current process
        self.frame_log: BinaryIO | None = None  # --log-frames, while the session runs
        self._next_id = HARNESS_FIRST_ID
        self._aside_next_id = ASIDE_HARNESS_FIRST_ID
        self._aside = False  # within `aside()`: harness ids from their own range, frames kept out of --log-frames
        self._barriers: dict[tuple[str, str], tuple[bytes, bytes]] = {}  # era, version -> encoding around the id

    @property
    def alive(self) -> bool:
        """True while the server can be talked to."""
        return self.server.alive

    def next_id(self) -> int:
        """A fresh integer id for a harness request (from the range of requests sent aside, within `aside()`)."""
        if self._aside:
            self._aside_next_id += 1
            return self._aside_next_id
        self._next_id += 1
        return self._next_id

    @contextlib.contextmanager
    def aside(self) -> Iterator[None]:
        """Within the block, what is sent checks the timing of an answer rather than carrying the run's draws (a
        slow call sent again): its harness ids come from a range of their own and its frames stay out of
        --log-frames, so whether the machine was slow at one moment changes neither the frames logged nor an id."""
        outer, self._aside = self._aside, True
        try:
            yield
        finally:
            self._aside = outer

    async def send_frame(self, data: bytes, http_headers: tuple[tuple[str, str | None], ...] = ()
                         ) -> HttpReply | None:
        """Send one frame (stdio adds the newline; HTTP POSTs it and returns what the POST got)."""
        async with self.write_lock:
            reply = await self.server.send(data, dict(http_headers) if http_headers else None)
        self.log_sent((data,))
        return reply

    async def send_frames(self, frames: tuple[bytes, ...]) -> None:
        """Several frames in one write, in order (DeliveryKind.JOINED_STREAM)."""
        async with self.write_lock:
            await self.server.send_many(frames)
        self.log_sent(frames)

    def log_sent(self, frames: tuple[bytes, ...]) -> None:
        """Frames that went out: counted, kept for reproductions, and written to --log-frames (unless aside)."""
        self.frames_sent += len(frames)
        self.log.extend(frames)
        if self.frame_log is not None and not self._aside:
            self.frame_log.write(b"".join(frame + b"\n" for frame in frames))

    def message(self, method: str, params: Any = ABSENT, id: Any = ABSENT) -> bytes:
        """Encode a request of the session's era (modern requests carry `_meta`)."""
        era, version = self._speech()
        meta = modern_meta(version) if era is Era.MODERN else None
        return dumps(request(method, with_meta(params, meta), id))

    async def notify(self, method: str, params: Any = ABSENT) -> None:
        """Send a notification of the harness."""
        await self.send_frame(self.message(method, params))

    def startup_until(self) -> float | None:
        """While the current process has answered nothing yet: the latest its first answer may come."""
        return self._processes.startup_until(self.collector.first_answer)

    async def call(self, method: str, params: Any = ABSENT, *, timeout: float | None = None) -> Incoming:
        """Send a harness request and return its reply; HarnessError on silence or a dead server."""
        rid = self.next_id()
        pending = self.collector.expect_reply(rid)
        try:
            http = await self.send_frame(self.message(method, params, rid))
        except TransportError as error:
            raise HarnessError(f"{method}: {error}") from None
        await self.collector.wait_reply(pending, timeout or self.options.timeout, http,
                                        startup_until=self.startup_until())
        if pending.reply is None:
            what = "the server exited" if not self.alive else f"no reply within {timeout or self.options.timeout:g}s"
            raise HarnessError(f"{method}: {what}")
        return pending.reply

    def liveness_request(self) -> tuple[str, Any]:
        """The era's cheapest request, method and params (`ping`; `server/discover` in the modern era)."""
        if self.options.plain_jsonrpc:
            return PLAIN_BARRIER, ABSENT
        return ("server/discover", {}) if self._speech()[0] is Era.MODERN else ("ping", ABSENT)

    def barrier_frame(self) -> tuple[bytes, Pending]:
        """A cheap request whose reply proves the server read and handled everything before it."""
        rid = self.next_id()
        era, version = self._speech()
        key = (era.value if era else "", version)
        around = self._barriers.get(key)
        if around is None:
            # The encoding is the same for every barrier of an era and version but for the id: built once.
            head, _, tail = self.message(*self.liveness_request(), 0).partition(b'"id":0')
            around = self._barriers[key] = (head + b'"id":', tail)
        return around[0] + str(rid).encode() + around[1], self.collector.expect_reply(rid)

    async def send_barrier(self) -> Pending | None:
        """The barrier request alone (after a frame already sent)."""
        frame, pending = self.barrier_frame()
        try:
            await self.send_frame(frame)
        except TransportError:
            return None
        return pending
