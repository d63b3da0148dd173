"""One server under test: frames out, lines in, each case judged in its own window."""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO

import anyio
import anyio.abc

from mcpfuzz.engine.session.tracking import BoundedDict
from mcpfuzz.jsonrpc.encode import dumps, error_response, request, response, with_meta
from mcpfuzz.jsonrpc.exchange import (
    ID_CURRENT,
    ID_EARLIER,
    ID_MISSING,
    ID_NULL,
    ID_UNKNOWN,
    Arrival,
    Exchange,
    ProcessEnd,
)
from mcpfuzz.jsonrpc.expectation import METHOD_NOT_FOUND, Expectation
from mcpfuzz.jsonrpc.frame import Case
from mcpfuzz.jsonrpc.http_reply import HttpReply
from mcpfuzz.jsonrpc.ids import ABSENT, IdKey, id_key
from mcpfuzz.jsonrpc.incoming import REQUEST, RESPONSE, RESPONSE_BATCH, Incoming, classify, split_batch
from mcpfuzz.jsonrpc.versions import LATEST_LEGACY, Era, modern_meta
from mcpfuzz.transport.errors import ConnectionClosed, TransportError, WriteTimeout
from mcpfuzz.transport.http_target import HttpTarget, detect_transport, open_http
from mcpfuzz.transport.legacy_sse import LegacySseServer
from mcpfuzz.transport.stdio import StdioServer, inherited_env
from mcpfuzz.transport.streamable_http import StreamableHttpServer

ServerConnection = StdioServer | StreamableHttpServer | LegacySseServer

HARNESS_FIRST_ID = 10_000
LATE_BARRIER_WAIT = 1.0
# Frames of the current process kept for reproductions: the handshake is all that is read back, and a
# soak sends millions of frames to one process.
LOG_LIMIT = 64


@dataclass
class SessionOptions:
    """Timing and size limits of a session."""

    timeout: float = 5.0
    grace: float = 0.25
    max_line: int = 8 * 1024 * 1024
    write_timeout: float = 5.0
    env: dict[str, str] | None = None
    frame_log: Path | None = None


@dataclass
class _Pending:
    """A request of the harness itself (barrier, handshake) waiting for its reply."""

    event: anyio.Event = field(default_factory=anyio.Event)
    reply: Incoming | None = None


# Stands in for a harness request once its reply was handed over: a second answer is still recognised
# as a repeat, and the reply itself (a tools/list result can be megabytes) is not kept for the session.
_ANSWERED: Any = object()


@dataclass
class _Window:
    """The case currently open: arrivals are attributed to it."""

    exchange: Exchange
    ids: frozenset[IdKey]
    started: float


class HarnessError(Exception):
    """A request of the harness itself got no usable answer."""


class Session:
    """Owns a server (a process or an HTTP endpoint, restarted as needed), the era, and the pending requests."""

    def __init__(self, target: Sequence[str] | HttpTarget, options: SessionOptions | None = None) -> None:
        self.options = options or SessionOptions()
        self.target = target
        self.server: ServerConnection
        if not isinstance(target, HttpTarget):
            self.server = StdioServer(target, on_line=self._on_line, on_exit=self._on_exit,
                                      max_line=self.options.max_line, write_timeout=self.options.write_timeout,
                                      env=inherited_env(self.options.env))
        self.transport = "stdio"
        self.era: Era | None = None
        self.version: str = LATEST_LEGACY
        self.ready = False
        self.frames_sent = 0
        self.restarts = 0  # restarts the server caused (crashes, hangs, lifecycle cases), not recycles
        self.process = 0  # which process (or HTTP session) this is: every start counts
        self._recycling = False
        self.log: deque[bytes] = deque(maxlen=LOG_LIMIT)  # the latest frames of the current process
        # Awaited before each case on a ready server (the soak's liveness ping and resource samples).
        self.before_case: Callable[[], Awaitable[None]] | None = None
        self._next_id = HARNESS_FIRST_ID
        self._pending: BoundedDict[IdKey, _Pending | Any] = BoundedDict()  # or _ANSWERED
        self._sent: BoundedDict[IdKey, int] = BoundedDict()
        self._answered: BoundedDict[IdKey, int] = BoundedDict()
        self._window: _Window | None = None
        # Set by the next line, exit or HTTP change; created only when someone waits (see `_wake`).
        self._changed: anyio.Event | None = None
        self._write_lock = anyio.Lock(fast_acquire=True)
        self._barriers: dict[tuple[str, str], tuple[bytes, bytes]] = {}  # era, version -> encoding around the id
        self._outbox: list[bytes] = []
        self.handshake_frames: list[bytes] = []
        self._group: anyio.abc.TaskGroup
        self._frame_log: BinaryIO | None = None

    async def __aenter__(self) -> Session:
        if self.options.frame_log is not None:
            self._frame_log = open(self.options.frame_log, "wb")  # noqa: SIM115 (closed in __aexit__)
        self._group = anyio.create_task_group()
        await self._group.__aenter__()
        if isinstance(self.target, HttpTarget):
            self.target = self.target.on_free_port()  # `{port}`: this server's own port, kept across restarts
            self.transport = await detect_transport(self.target, self.options.timeout)
            self.server = open_http(self.target, self.transport, on_line=self._on_line, on_exit=self._on_exit,
                                    on_change=self._wake, env=inherited_env(self.options.env),
                                    timeout=self.options.timeout, max_line=self.options.max_line)
        await self.server.__aenter__()
        return self

    async def __aexit__(self, *exc_info: object) -> bool | None:
        try:
            await self.server.__aexit__(*exc_info)
        finally:
            self._group.cancel_scope.cancel()
            await self._group.__aexit__(None, None, None)
            if self._frame_log is not None:
                self._frame_log.close()
        return None

    # -- process lifecycle ---------------------------------------------------------------------

    @property
    def alive(self) -> bool:
        """True while the server process runs."""
        return self.server.alive

    async def restart(self) -> None:
        """A fresh process with no handshake; all per-process state is forgotten."""
        if self.server.starts and not self._recycling:
            self.restarts += 1
        self._recycling = False
        self.process += 1
        await self.server.start()
        self.ready = False
        self.log.clear()
        self.handshake_frames = []
        self._pending.clear()
        self._sent.clear()
        self._answered.clear()

    def recycle(self) -> None:
        """Start the next case on a fresh server, for mcpfuzz's own bookkeeping (not counted as a restart)."""
        self.ready = False
        self._recycling = True

    async def ensure_ready(self) -> None:
        """Restart and redo the handshake of the known era when the server died or got stuck."""
        if self.alive and self.ready:
            return
        await self.restart()
        await self.handshake()

    async def handshake(self) -> None:
        """Era handshake, unjudged: initialize + initialized (legacy) or server/discover (modern)."""
        if self.era is Era.MODERN:
            await self.call("server/discover", {})
        else:
            from mcpfuzz.strategies.messages import initialize_params

            await self.call("initialize", initialize_params(self.version))
            await self.notify("notifications/initialized")
        self.handshake_frames = list(self.log)
        self.ready = True

    # -- sending -------------------------------------------------------------------------------

    def next_id(self) -> int:
        """A fresh integer id for a harness request."""
        self._next_id += 1
        return self._next_id

    async def send_frame(self, data: bytes, http_headers: tuple[tuple[str, str | None], ...] = ()
                         ) -> HttpReply | None:
        """Send one frame (stdio adds the newline; HTTP POSTs it and returns what the POST got)."""
        async with self._write_lock:
            reply = await self.server.send(data, dict(http_headers) if http_headers else None)
        self._sent_frames((data,))
        return reply

    async def _send_frames(self, frames: tuple[bytes, ...]) -> None:
        """Several frames in one write, in order (stdio only: one wake-up of the server, one write deadline)."""
        assert isinstance(self.server, StdioServer)
        async with self._write_lock:
            await self.server.write(b"".join(frame + b"\n" for frame in frames))
        self._sent_frames(frames)

    def _sent_frames(self, frames: tuple[bytes, ...]) -> None:
        self.frames_sent += len(frames)
        self.log.extend(frames)
        if self._frame_log is not None:
            self._frame_log.write(b"".join(frame + b"\n" for frame in frames))

    def message(self, method: str, params: Any = ABSENT, id: Any = ABSENT) -> bytes:
        """Encode a request of the session's era (modern requests carry `_meta`)."""
        meta = modern_meta(self.version) if self.era is Era.MODERN else None
        return dumps(request(method, with_meta(params, meta), id))

    async def notify(self, method: str, params: Any = ABSENT) -> None:
        """Send a notification of the harness."""
        await self.send_frame(self.message(method, params))

    async def call(self, method: str, params: Any = ABSENT, *, timeout: float | None = None) -> Incoming:
        """Send a harness request and return its reply; HarnessError on silence or a dead server."""
        rid = self.next_id()
        pending = self._expect_harness_reply(rid)
        try:
            http = await self.send_frame(self.message(method, params, rid))
        except TransportError as error:
            raise HarnessError(f"{method}: {error}") from None
        await self._wait_pending(pending, timeout or self.options.timeout, http)
        if pending.reply is None:
            what = "the server exited" if not self.alive else f"no reply within {timeout or self.options.timeout:g}s"
            raise HarnessError(f"{method}: {what}")
        return pending.reply

    def _expect_harness_reply(self, rid: int) -> _Pending:
        pending = _Pending()
        self._pending[id_key(rid)] = pending
        return pending

    async def _wait_pending(self, pending: _Pending, timeout: float, http: HttpReply | None = None) -> None:
        """Until the reply comes, the server dies, the timeout passes, or (HTTP) the POST ended without it."""
        with anyio.move_on_after(timeout):
            while pending.reply is None and self.alive and not (http is not None and http.done):
                await self._next_change()

    async def _next_change(self) -> None:
        """Until the next line, process exit or HTTP change (the caller holds the timeout)."""
        if self._changed is None:
            self._changed = anyio.Event()
        await self._changed.wait()

    def liveness_request(self) -> tuple[str, Any]:
        """The era's cheapest request, method and params (`ping`; `server/discover` in the modern era)."""
        return ("server/discover", {}) if self.era is Era.MODERN else ("ping", ABSENT)

    def _barrier_frame(self) -> tuple[bytes, _Pending]:
        """A cheap request whose reply proves the server read and handled everything before it."""
        rid = self.next_id()
        key = (self.era.value if self.era else "", self.version)
        around = self._barriers.get(key)
        if around is None:
            # The encoding is the same for every barrier of an era and version but for the id: built once.
            head, _, tail = self.message(*self.liveness_request(), 0).partition(b'"id":0')
            around = self._barriers[key] = (head + b'"id":', tail)
        return around[0] + str(rid).encode() + around[1], self._expect_harness_reply(rid)

    async def _send_barrier(self) -> _Pending | None:
        """The barrier request alone (after a frame already sent)."""
        frame, pending = self._barrier_frame()
        try:
            await self.send_frame(frame)
        except TransportError:
            return None
        return pending

    # -- cases ---------------------------------------------------------------------------------

    async def run_case(self, case: Case) -> Exchange:
        """Send one case and collect everything until it is answered, the server dies, or time runs out."""
        if case.fresh:
            await self.restart()
        else:
            await self.ensure_ready()
            if self.before_case is not None:
                await self.before_case()
                await self.ensure_ready()  # the hook may have found the server dead or stuck
        return await self.run_case_on_current(case)

    async def run_case_on_current(self, case: Case) -> Exchange:
        """Run a case on the process as it is (no restart, no handshake)."""
        for data in case.setup:
            await self._send_unjudged(data)
        exchange = Exchange(case, case.era or self.era or Era.LEGACY, self.version)
        exchange.frames = [*self.handshake_frames, *case.history, *case.setup, case.data]
        ids = _case_ids(case.expect)
        for key in ids:
            self._sent[key] = self._sent.get(key, 0) + 1
        window = _Window(exchange, ids, time.monotonic())
        self._window = window
        barrier = None
        # A valid request that will be waited for patiently is its own proof of life: the barrier
        # goes out only if it stays unanswered (to tell a dropped request from a stuck server).
        lean = case.patient and case.expect.well_formed and case.expect.reply
        try:
            if not lean and isinstance(self.server, StdioServer):
                # The frame and its barrier in one write, in that order: one wake-up of the server per case.
                frame, barrier = self._barrier_frame()
                await self._send_frames((case.data, frame))
            else:
                exchange.http = await self.send_frame(case.data, case.http_headers)
                if self.alive and not lean and self.server.needs_barrier:
                    barrier = await self._send_barrier()
        except (ConnectionClosed, WriteTimeout) as error:
            barrier = None
            if not isinstance(error, ConnectionClosed) or self.alive:
                exchange.write_error = str(error)
        try:
            await self._collect(window, barrier, case)
            late = lean or not self.server.needs_barrier
            if late and exchange.timed_out and self.alive and not exchange.write_error:
                barrier = await self._late_barrier()
        finally:
            self._window = None
        exchange.waited = time.monotonic() - window.started
        if barrier is not None:
            exchange.barrier_answered = barrier.reply is not None
        elif exchange.http is not None and self.server.replies_on_request:
            # The POST's complete response proves the server handled the frame (and is not stuck).
            exchange.barrier_answered = exchange.http.done and not exchange.http.error
        if not self.alive:
            await self.server.wait_exit(1.0)
            exchange.crash = self.server.end or ProcessEnd(None, self.server.stderr.text())
            self.ready = False
        elif exchange.write_error or exchange.barrier_answered is False:
            # Stuck (or deaf): start over before the next case, so one hang is one finding.
            await self.server.kill()
            self.ready = False
        exchange.stderr_tail = self.server.stderr.text(10)
        if case.fresh:
            self.ready = False  # a lifecycle case leaves the process in an odd state
        return exchange

    async def _late_barrier(self) -> _Pending | None:
        """After a silent timeout: does the server still answer anything?"""
        try:
            barrier = await self._send_barrier()
        except TransportError:
            return None
        if barrier is not None:
            await self._wait_pending(barrier, min(self.options.timeout, LATE_BARRIER_WAIT))
        return barrier

    async def _send_unjudged(self, data: bytes) -> None:
        """Setup frames of a case: sent, then a barrier, replies dropped."""
        try:
            http = await self.send_frame(data)
            if http is not None and self.server.replies_on_request:
                await self._wait_settled(http, self.options.timeout)
                return
            barrier = await self._send_barrier()
            if barrier is not None:
                await self._wait_pending(barrier, self.options.timeout)
        except TransportError:
            pass

    async def _wait_settled(self, http: HttpReply, timeout: float) -> None:
        with anyio.move_on_after(timeout):
            while not http.done and self.alive:
                await self._next_change()

    async def _collect(self, window: _Window, barrier: _Pending | None, case: Case) -> None:
        """Wait for the case's answer and the barrier; after the barrier, only a short grace."""
        start = window.started
        deadline = start + self.options.timeout
        grace_until: float | None = None
        http = window.exchange.http if self.server.replies_on_request else None
        while self.alive:
            # One cancel scope per wait, not per wake-up: its deadline moves in when the grace starts,
            # and when it fires the checks run once more (they end the wait).
            with anyio.CancelScope() as scope:
                while self.alive:
                    satisfied = _satisfied(case.expect, window.exchange)
                    now = time.monotonic()
                    if http is not None:
                        # Over streamable HTTP the end of the POST's response is the end of the frame's answer;
                        # the grace is for messages on the session's GET stream.
                        if http.done:
                            grace_until = grace_until or now + self.options.grace
                            if satisfied or now >= grace_until:
                                return
                    else:
                        barrier_done = barrier is None or barrier.reply is not None
                        if satisfied and barrier_done:
                            return
                        if barrier_done and not case.patient:
                            grace_until = grace_until or now + self.options.grace
                            if now >= grace_until:
                                return
                    if now >= deadline:
                        window.exchange.timed_out = True
                        return
                    until = min(deadline, grace_until or deadline)
                    scope.deadline = anyio.current_time() + (until - now)
                    await self._next_change()

    # -- receiving -----------------------------------------------------------------------------

    def _wake(self) -> None:
        # Waiters take the event and wait with no checkpoint in between: no waiter, nothing to set.
        changed, self._changed = self._changed, None
        if changed is not None:
            changed.set()

    def _on_exit(self, end: ProcessEnd) -> None:
        self._wake()

    def _on_line(self, line: bytes, size: int) -> None:
        incoming = classify(line, size)
        for part in split_batch(incoming) if incoming.kind == RESPONSE_BATCH else [incoming]:
            self._route(part)
        if self._outbox:
            self._flush_outbox()
        self._wake()

    def _route(self, incoming: Incoming) -> None:
        window = self._window
        if incoming.kind == REQUEST:
            self._answer_server_request(incoming)
            if window is not None:
                window.exchange.server_requests.append(incoming)
            return
        tag, count = "", 0
        if incoming.kind == RESPONSE:
            rid = incoming.id
            if rid is ABSENT:
                tag = ID_MISSING
            elif rid is None:
                tag = ID_NULL
            else:
                key = id_key(rid)
                count = self._answered.get(key, 0) + 1
                self._answered[key] = count
                pending = self._pending.get(key)
                if pending is not None and pending is not _ANSWERED and pending.reply is None:
                    pending.reply = incoming  # the waiter holds `pending`; the session forgets the reply
                    self._pending[key] = _ANSWERED
                    return
                if pending is not None:
                    tag = ID_EARLIER  # a second answer to a harness request
                elif window is not None and key in window.ids:
                    tag = ID_CURRENT
                elif key in self._sent:
                    tag = ID_EARLIER
                else:
                    tag = ID_UNKNOWN
        if window is not None:
            window.exchange.arrivals.append(
                Arrival(incoming, time.monotonic() - window.started, tag, count))

    def _answer_server_request(self, incoming: Incoming) -> None:
        """We declare no client capabilities: answer ping with {}, anything else with -32601."""
        message = incoming.message
        rid = message.get("id")
        if message.get("method") == "ping":
            reply = response(rid, {})
        else:
            reply = error_response(rid, METHOD_NOT_FOUND, "mcpfuzz serves no client capabilities")
        self._outbox.append(dumps(reply))

    def _flush_outbox(self) -> None:
        frames, self._outbox = self._outbox, []

        async def send_all() -> None:
            for frame in frames:
                try:
                    await self.send_frame(frame)
                except TransportError:
                    return

        self._group.start_soon(send_all)


def _case_ids(expect: Expectation) -> frozenset[IdKey]:
    ids = set()
    if expect.id is not ABSENT and expect.id is not None:
        ids.add(id_key(expect.id))
    ids.update(id_key(i) for i in expect.batch_ids)
    return frozenset(ids)


def _satisfied(expect: Expectation, exchange: Exchange) -> bool:
    """True once every reply the case is due has arrived."""
    if not expect.reply:
        return True
    responses = [a for a in exchange.arrivals if a.incoming.kind == RESPONSE]
    if expect.batch_ids and expect.well_formed:
        answered = {id_key(a.incoming.id) for a in responses if a.id_tag == ID_CURRENT}
        return all(id_key(i) in answered for i in expect.batch_ids)
    if expect.id_recoverable:
        return any(a.id_tag in (ID_CURRENT, ID_UNKNOWN) or (expect.null_id_ok and a.id_tag == ID_NULL)
                   for a in responses)
    return any(a.id_tag != ID_EARLIER for a in responses)
