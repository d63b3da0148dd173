"""One server under test: frames out, lines in, each case judged in its own window."""

from __future__ import annotations

import contextlib
import time
from collections import deque
from collections.abc import Awaitable, Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

import anyio
import anyio.abc

from mcpfuzz.engine.client.capabilities import ALL_CAPABILITIES, ClientCapability, declared_capabilities
from mcpfuzz.engine.client.responder import ClientResponder
from mcpfuzz.engine.session.collector import Collector, IdBooks, Pending, Window, WindowSet
from mcpfuzz.engine.session.comebacks import Comebacks
from mcpfuzz.engine.session.server_requests import ServerRequests
from mcpfuzz.engine.session.standby import StandbyKeeper
from mcpfuzz.engine.session.startup import StartupTimes
from mcpfuzz.engine.session.wedge import AnswerTimes, CpuSample, times_its_target
from mcpfuzz.jsonrpc.client_check import AnswerMode
from mcpfuzz.jsonrpc.encode import dumps, request, with_meta
from mcpfuzz.jsonrpc.exchange import ID_CURRENT, Exchange, ProcessEnd
from mcpfuzz.jsonrpc.frame import Case, Posting
from mcpfuzz.jsonrpc.handshake_order import initialize_id, is_handshake_request
from mcpfuzz.jsonrpc.http_reply import HttpReply
from mcpfuzz.jsonrpc.ids import ABSENT
from mcpfuzz.jsonrpc.incoming import REQUEST, RESPONSE_BATCH, Incoming, classify, split_batch
from mcpfuzz.jsonrpc.parts.cancel import CancelCheck
from mcpfuzz.jsonrpc.parts.client import ClientCheck
from mcpfuzz.jsonrpc.parts.leniency import Lenient
from mcpfuzz.jsonrpc.versions import LATEST_LEGACY, Era, modern_meta
from mcpfuzz.transport.base import (
    DEFAULT_STARTUP_TIMEOUT,
    ConnectionCallbacks,
    ConnectionOptions,
    ServerConnection,
    TransportKind,
)
from mcpfuzz.transport.connect import ServerTarget, open_connection, standby_holder, standby_refusal
from mcpfuzz.transport.errors import ConnectionClosed, ServerStartError, TransportError, WriteTimeout

HARNESS_FIRST_ID = 10_000
# Harness ids of requests sent aside (`Session.aside`): a range of their own, so the run's other ids never shift.
ASIDE_HARNESS_FIRST_ID = 2**31
LATE_BARRIER_WAIT = 1.0
# Frames of the current process kept for reproductions: the handshake is all that is read back, and a
# soak sends millions of frames to one process.
LOG_LIMIT = 64
# Over streamable HTTP a window's cases go out as POSTs of their own, at most this many in flight at once.
POSTS_IN_FLIGHT = 8
# Statuses that refuse a request for the server's load, not for what it holds: the case is run again alone.
LOAD_REFUSALS = frozenset({429, 503})
# After a load refusal (or a POST that failed while others were in flight), cases go one at a time this long.
ALONE_AFTER_REFUSAL = 30.0


STARTUP_MARGIN = 2.0  # a measured start may take this many times its median before the case's own time counts


@dataclass
class SessionOptions:
    """Timing and size limits of a session."""

    timeout: float = 5.0  # how long any answer may take before the server is asked whether it is alive
    startup_timeout: float = DEFAULT_STARTUP_TIMEOUT  # a process mcpfuzz started: how long until its first answer
    call_timeout: float = 30.0  # a valid call to a server proven alive: how long before it counts as dropped
    grace: float = 0.25
    max_line: int = 8 * 1024 * 1024
    write_timeout: float = 5.0
    env: dict[str, str] | None = None
    frame_log: Path | None = None
    plain_jsonrpc: bool = False  # a plain JSON-RPC 2.0 server: no handshake; the barrier is an unknown method
    standby: bool = True  # keep a standby process for restarts of a server slow to start (stdio)
    # Declared in the legacy handshake and answered when the server asks (--client-capabilities).
    client_capabilities: frozenset[ClientCapability] = ALL_CAPABILITIES


# The barrier of a plain JSON-RPC server: a method none serves, so any server answers it at once (-32601).
PLAIN_BARRIER = "mcpfuzz.barrier"


@dataclass(frozen=True)
class _SetAside:
    """The process in use while a fresh case borrows the standby: what the session knew of it."""

    process: int
    log: deque[bytes]
    handshake_frames: list[bytes]
    books: IdBooks
    spawned_at: float | None


class HarnessError(Exception):
    """A request of the harness itself got no usable answer."""


class ServerLost(HarnessError):
    """The server failed to come back too many times in a row (RestartPolicy): it is not started again."""


class Session:
    """Owns a server connection (restarted as needed), the era, the handshake and the barrier; runs cases.

    What comes back is routed by its Collector; the server's own requests are answered by ServerRequests.
    """

    def __init__(self, target: ServerTarget, options: SessionOptions | None = None) -> None:
        self.options = options or SessionOptions()
        self.target = target
        self.server: ServerConnection  # opened for the target on entering the session
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
        self.on_notice: Callable[[str], None] | None = None  # what the user should hear of (said once each)
        # An error of mcpfuzz's own while reading a line of the server: the line is dropped, the session goes on.
        self.on_internal_error: Callable[[Exception, str], None] | None = None
        self._alone_until = 0.0  # monotonic: no window before then (the server refused a request for load)
        self._refusal_noted = False
        self._next_id = HARNESS_FIRST_ID
        self._aside_next_id = ASIDE_HARNESS_FIRST_ID
        self._aside = False  # within `aside()`: harness ids from their own range, frames kept out of --log-frames
        self._collector = Collector(lambda: self.server.alive)
        self.responder = ClientResponder(self.options.client_capabilities)
        self._server_requests = ServerRequests(self.send_frame, self.responder)
        self._write_lock = anyio.Lock(fast_acquire=True)
        self._barriers: dict[tuple[str, str], tuple[bytes, bytes]] = {}  # era, version -> encoding around the id
        self.handshake_frames: list[bytes] = []
        # Probe, lifecycle, replays and verification: a valid call's answer is followed by a barrier, so a second
        # answer written after the first (initialize answered twice) is seen every time, not by luck.
        self.thorough = False
        # A call phase's deadline (monotonic): a slow call is waited for until then at most, so one slow tool
        # cannot eat the phases after it (None: the whole --call-timeout).
        self.patience_until: float | None = None
        # The latest moment a busy call's fair wait (its target's answer times) may run to, past patience_until: a
        # wedge is judged whatever share of the run a phase had left (the run's own deadline still holds).
        self.wedge_until: float | None = None
        self.answer_times = AnswerTimes()  # each target's slowest answer: how long its next call may fairly take
        self._group: anyio.abc.TaskGroup
        self._frame_log: BinaryIO | None = None
        self.startup = StartupTimes()  # spawn to first answer, per process started cold
        self._spawned_at: float | None = None  # the current process' spawn (monotonic; None: not a process of ours)
        self._cold_spawn: float | None = None  # a cold start's spawn, until its first answer measures the start
        self._asked_at: float | None = None  # when the current process was asked for, until its first answer
        self._standby: StandbyKeeper
        self.comebacks = Comebacks()  # failed comebacks in a row: back-off, and a server given up on
        self.last_line = b""  # the current process' latest line on stdout (said when it fails the handshake)

    async def __aenter__(self) -> Session:
        if self.options.frame_log is not None:
            self._frame_log = open(self.options.frame_log, "wb")  # noqa: SIM115 (closed in __aexit__)
        self._group = anyio.create_task_group()
        await self._group.__aenter__()
        options = self.options
        self.server = await open_connection(
            self.target, ConnectionCallbacks(self._on_line, self._on_exit, self._collector.wake),
            ConnectionOptions(timeout=options.timeout, startup_timeout=options.startup_timeout,
                              call_timeout=options.call_timeout, max_line=options.max_line,
                              write_timeout=options.write_timeout, env=options.env))
        await self.server.__aenter__()
        self._standby = StandbyKeeper(standby_holder(self.server), standby_refusal(self.target),
                                      enabled=options.standby, notice=self._notice)
        return self

    async def __aexit__(self, *exc_info: object) -> bool | None:
        try:
            await self.server.__aexit__(*exc_info)
        finally:
            self._group.cancel_scope.cancel()
            await self._group.__aexit__(None, None, None)
            if self._frame_log is not None:
                self._frame_log.close()
            self.responder.close()
        return None

    # -- process lifecycle ---------------------------------------------------------------------

    @property
    def transport(self) -> TransportKind:
        """What carries the frames (known once the session is entered: a URL's transport is detected)."""
        return self.server.kind

    @property
    def alive(self) -> bool:
        """True while the server process runs."""
        return self.server.alive

    @property
    def standbys(self) -> int:
        """Standby processes started (see StandbyKeeper)."""
        return self._standby.standbys

    @property
    def warm_restarts(self) -> int:
        """Starts that took a standby process instead of starting one and waiting for it."""
        return self._standby.warm_starts

    @property
    def standby_pid(self) -> int | None:
        """The standby process' pid, while one is held."""
        holder = self._standby.holder
        return holder.standby_pid if holder is not None else None

    @property
    def standby_warm(self) -> bool:
        """True when a standby has run as long as the server's measured start: a restart now waits for nothing (a
        plan may keep cases that need a fresh process until then)."""
        holder, median = self._standby.holder, self.startup.median
        spawned = holder.standby_spawned_at if holder is not None and holder.has_standby else None
        return spawned is not None and median is not None and time.monotonic() - spawned >= median

    async def restart(self) -> None:
        """A fresh process with no handshake (a standby when one is held); all per-process state is forgotten."""
        if self.comebacks.lost:
            raise ServerLost(self.comebacks.verdict())
        holder, asked = self._standby.holder, time.monotonic()
        warm = self.warm_restarts
        self._new_process()
        await self.server.start()
        self.log.clear()
        self._collector.forget()
        if self.server.pid is None:
            # No process of ours: its start is not ours to wait for.
            self._spawned_at = self._cold_spawn = self._asked_at = None
        else:
            spawned = holder.spawned_at if holder is not None else None
            self._spawned_at = asked if spawned is None else spawned
            self._cold_spawn = None if self.warm_restarts > warm else self._spawned_at
            self._asked_at = asked

    def _new_process(self) -> None:
        """Counters and state of a process about to be in use (a restart mcpfuzz caused is not the server's)."""
        if self.server.starts and not self._recycling:
            self.restarts += 1
        self._recycling = False
        self.process += 1
        self.ready = False
        self.handshake_frames = []
        self.last_line = b""

    def _startup_until(self) -> float | None:
        """While the current process has answered nothing yet: the latest its first answer may come (its start may
        be slow; --startup-timeout counts from its spawn, a standby's too)."""
        if self._asked_at is None or self._spawned_at is None or self._collector.first_answer is not None:
            return None
        allowance = self.options.startup_timeout
        if self.startup.median is not None:
            # Once starts have been measured a new process is expected to answer within about that: a fresh case's
            # own answer must not ride on the whole --startup-timeout (a tool slower than --call-timeout would
            # never be a hang on a fresh server, so no such finding would reproduce).
            allowance = min(allowance, STARTUP_MARGIN * self.startup.median + 1.0)
        return self._spawned_at + allowance

    async def _answered(self) -> None:
        """After a case or the handshake: once the current process has answered, its start is measured (a cold
        one) and a standby is kept for the next restart."""
        first = self._collector.first_answer
        if first is None:
            return
        if self._asked_at is not None:
            self.startup.add_wait(max(0.0, first - self._asked_at))
            if self._cold_spawn is not None:
                self.startup.add(first - self._cold_spawn)
                self._standby.measured(self.startup)
            self._asked_at = self._cold_spawn = None
        await self._standby.tend(self.startup)

    def _notice(self, text: str) -> None:
        if self.on_notice is not None:
            self.on_notice(text)

    def recycle(self) -> None:
        """Start the next case on a fresh server, for mcpfuzz's own bookkeeping (not counted as a restart)."""
        self.ready = False
        self._recycling = True

    async def ensure_ready(self) -> None:
        """Restart and redo the handshake of the known era when the server died or got stuck; a server that does not
        come back is started again after a back-off, until the RestartPolicy gives it up (ServerLost)."""
        if self.alive and self.ready:
            return
        while True:
            await anyio.sleep(self.comebacks.wait())
            try:
                await self.restart()
                await self.handshake()
                if not self.alive:
                    raise HarnessError("the server exited right after its handshake")
            except ServerLost:
                raise
            except (HarnessError, ServerStartError) as error:
                self.comebacks.failed_once(self._failed_comeback(error), self.restarts)
                if self.comebacks.lost:
                    raise ServerLost(self.comebacks.verdict()) from None
                continue
            self.comebacks.came_back()
            return

    def _failed_comeback(self, error: Exception) -> str:
        """What a restart that did not come back ran into: the error, the exit status, the last stderr line."""
        end = self.server.end if not self.alive else None
        parts = [str(error)] + ([end.describe()] if end is not None else [])
        stderr = self.server.stderr.text(1).strip()
        return "; ".join(parts + ([f"stderr: {stderr[:200]}"] if stderr else []))

    async def handshake(self) -> None:
        """Era handshake, unjudged: initialize + initialized (legacy) or server/discover (modern); none for a plain
        JSON-RPC server."""
        if self.options.plain_jsonrpc:
            # No handshake: a barrier request waits out the process' start, so no case is judged on a server still
            # starting; it is no part of any reproduction, and silence here is the cases' to judge.
            with contextlib.suppress(HarnessError):
                await self.call(*self.liveness_request())
            self.log.clear()
        elif self.era is Era.MODERN:
            await self.call("server/discover", {})
        else:
            from mcpfuzz.strategies.messages import initialize_params

            await self.call("initialize", initialize_params(
                self.version, declared_capabilities(self.options.client_capabilities)))
            await self.notify("notifications/initialized")
        self.handshake_frames = list(self.log)
        self.ready = True
        if self._asked_at is not None or self._standby.active:  # rarely: after a start, or to keep a standby
            await self._answered()

    # -- sending -------------------------------------------------------------------------------

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
        async with self._write_lock:
            reply = await self.server.send(data, dict(http_headers) if http_headers else None)
        self._sent_frames((data,))
        return reply

    async def _send_frames(self, frames: tuple[bytes, ...]) -> None:
        """Several frames in one write, in order (where the transport `joins_writes`)."""
        async with self._write_lock:
            await self.server.send_many(frames)
        self._sent_frames(frames)

    def _sent_frames(self, frames: tuple[bytes, ...]) -> None:
        self.frames_sent += len(frames)
        self.log.extend(frames)
        if self._frame_log is not None and not self._aside:
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
        pending = self._collector.expect_reply(rid)
        try:
            http = await self.send_frame(self.message(method, params, rid))
        except TransportError as error:
            raise HarnessError(f"{method}: {error}") from None
        await self._collector.wait_reply(pending, timeout or self.options.timeout, http,
                                         startup_until=self._startup_until())
        if pending.reply is None:
            what = "the server exited" if not self.alive else f"no reply within {timeout or self.options.timeout:g}s"
            raise HarnessError(f"{method}: {what}")
        return pending.reply

    def liveness_request(self) -> tuple[str, Any]:
        """The era's cheapest request, method and params (`ping`; `server/discover` in the modern era)."""
        if self.options.plain_jsonrpc:
            return PLAIN_BARRIER, ABSENT
        return ("server/discover", {}) if self.era is Era.MODERN else ("ping", ABSENT)

    def _barrier_frame(self) -> tuple[bytes, Pending]:
        """A cheap request whose reply proves the server read and handled everything before it."""
        rid = self.next_id()
        key = (self.era.value if self.era else "", self.version)
        around = self._barriers.get(key)
        if around is None:
            # The encoding is the same for every barrier of an era and version but for the id: built once.
            head, _, tail = self.message(*self.liveness_request(), 0).partition(b'"id":0')
            around = self._barriers[key] = (head + b'"id":', tail)
        return around[0] + str(rid).encode() + around[1], self._collector.expect_reply(rid)

    async def _send_barrier(self) -> Pending | None:
        """The barrier request alone (after a frame already sent)."""
        frame, pending = self._barrier_frame()
        try:
            await self.send_frame(frame)
        except TransportError:
            return None
        return pending

    # -- cases ---------------------------------------------------------------------------------

    async def run_case(self, case: Case, *, timeout: float | None = None) -> Exchange:
        """Send one case and collect everything until it is answered, the server dies, or time runs out.

        `timeout` replaces --timeout for this case (a target's own, from the config file's [targets]). A case that
        needs a fresh process runs on the standby, when one is held, beside the process in use, which the cases
        after it find as it was (no restart for them); else on a process started for it.
        """
        if case.fresh:
            aside = await self._borrow_standby()
            if aside is not None:
                try:
                    return await self.run_case_on_current(case, timeout=timeout)
                finally:
                    with anyio.CancelScope(shield=True):  # the session goes on after a phase's deadline
                        await self._return_borrowed(aside)
            await self.restart()
        else:
            await self._ready_for_cases()
        return await self.run_case_on_current(case, timeout=timeout)

    async def _borrow_standby(self) -> _SetAside | None:
        """The standby in use for one case, the ready process kept aside with its state; None when there is none."""
        holder = self._standby.holder
        if holder is None or not (self.ready and self.alive and holder.has_standby):
            return None
        asked = time.monotonic()
        if not await holder.borrow_standby():
            return None
        aside = _SetAside(self.process, self.log, self.handshake_frames, self._collector.set_aside(),
                          self._spawned_at)
        self._new_process()
        self.log = deque(maxlen=LOG_LIMIT)
        self._spawned_at, self._asked_at, self._cold_spawn = holder.spawned_at, asked, None
        return aside

    async def _return_borrowed(self, aside: _SetAside) -> None:
        """The borrowed process is killed; the one set aside is in use again, as it was (if it still runs)."""
        holder = self._standby.holder
        assert holder is not None
        await holder.return_borrowed()
        self.process, self.log, self.handshake_frames = aside.process, aside.log, aside.handshake_frames
        self._collector.restore(aside.books)
        self._spawned_at, self._asked_at, self._cold_spawn = aside.spawned_at, None, None
        self.ready = self.alive

    async def _ready_for_cases(self) -> None:
        """A ready server, with the before-case hook run (it may find the server dead or stuck: ready again)."""
        await self.ensure_ready()
        if self.before_case is not None:
            await self.before_case()
            await self.ensure_ready()

    async def run_case_on_current(self, case: Case, *, timeout: float | None = None) -> Exchange:
        """Run a case on the process as it is (no restart, no handshake), the server's requests answered as the
        case's client check says (valid answers otherwise)."""
        client = case.expect.part(ClientCheck)
        if client is None:
            return await self._run_case_on_current(case, timeout=timeout)
        self.responder.mode = client.mode
        try:
            return await self._run_case_on_current(case, timeout=timeout)
        finally:
            self.responder.mode = AnswerMode.ACCEPT

    async def _run_case_on_current(self, case: Case, *, timeout: float | None = None) -> Exchange:
        for data in case.setup:
            await self._send_unjudged(data)
        exchange = Exchange(case, case.era or self.era or Era.LEGACY, self.version)
        exchange.frames = [*self.handshake_frames, *case.history, *case.setup, case.data]
        window = self._collector.open(exchange)
        barrier = None
        # A valid request that will be waited for patiently is its own proof of life: the barrier
        # goes out only if it stays unanswered (to tell a dropped request from a stuck server).
        patient_call = lean = waits_for_own_answer(case)
        try:
            if not lean and self.server.joins_writes:
                # The frame and its barrier in one write, in that order: one wake-up of the server per case.
                frame, barrier = self._barrier_frame()
                pause = cancel.pause if (cancel := case.expect.part(CancelCheck)) is not None else 0.0
                if pause > 0:  # work in flight: the request first, the rest once it has run a while
                    first, _, rest = case.data.partition(b"\n")
                    await self._send_frames((first,))
                    await anyio.sleep(pause)
                    await self._send_frames((rest, frame))
                else:
                    await self._send_frames((case.data, frame))
            elif case.posts is not Posting.ONE and self.server.replies_on_request:
                exchange.posts = await self.send_posts(case)
                exchange.http = exchange.posts[-1] if exchange.posts else None
            else:
                exchange.http = await self.send_frame(case.data, case.http_headers)
                if self.alive and not lean and self.server.needs_barrier:
                    barrier = await self._send_barrier()
        except (ConnectionClosed, WriteTimeout) as error:
            barrier = None
            if not isinstance(error, ConnectionClosed) or self.alive:
                exchange.write_error = str(error)
        try:
            http = exchange.http if self.server.replies_on_request else None
            await self._collector.collect(window, barrier, case, http=http, timeout=timeout or self.options.timeout,
                                          grace=self.options.grace, startup_until=self._startup_until())
            late = lean or not self.server.needs_barrier
            if late and exchange.timed_out and self.alive and not exchange.write_error:
                barrier = await self._late_barrier()
            alive = barrier is not None and barrier.reply is not None and self.alive and not exchange.write_error
            # The process runs but answered the liveness request no more than the call: a server whose one thread
            # (or event loop) is busy with this very call. Slow is not stuck either: it gets the same limit, and only
            # silence to its end is a hang. Over streamable HTTP the liveness request went on a POST of its own.
            busy = (not alive and barrier is not None and self.alive and not exchange.write_error
                    and (self.server.needs_barrier or self.server.replies_on_request))
            # A lenient call (a lone surrogate, which a parser may refuse) went out with its barrier; once that is
            # answered, its own answer may still be on the way: it gets the same limit as a valid call.
            if (patient_call or case.expect.has(Lenient)) and case.slow_ok and exchange.timed_out and (alive or busy):
                # Slow is not dropped: a valid call to a server that answers pings gets the call limit,
                # and each progress notification moves that limit on.
                exchange.timed_out, exchange.extended, exchange.blocked = False, True, busy
                whole = max(self.options.call_timeout, timeout or 0.0)  # a target's own timeout may be longer
                bound = self.answer_times.bound(case.target, self.options.timeout) if busy else None
                shortened = bound is not None and bound < whole
                # Busy far longer than this target ever took: a fair wait ends sooner (progress still extends).
                await self._wait_longer(window, barrier if busy else None, case, http,
                                        bound if bound is not None and shortened else whole, 2 * whole,
                                        fair_wait=shortened)
                if shortened and busy and exchange.timed_out and not exchange.cut_short and self.alive:
                    # Past the fair wait: a fresh request decides (silence to the end of --call-timeout needs no
                    # proof: an answer after it comes too late). A server that answers again, the liveness request,
                    # the fresh one or the call, is slow, not stuck: the call gets all of --call-timeout after all.
                    if not exchange.progress_count() and not (barrier is not None and barrier.reply is not None):
                        fresh = await self._check_wedged(exchange)
                        barrier = fresh if fresh is not None and fresh.reply is not None else barrier
                    answered = (barrier is not None and barrier.reply is not None) \
                        or any(a.id_tag == ID_CURRENT for a in exchange.responses())
                    if answered and not exchange.wedged and self.alive:
                        exchange.timed_out = False
                        await self._wait_longer(window, barrier, case, http, whole, 2 * whole)
                answering = barrier is not None and barrier.reply is not None
                if exchange.timed_out and (exchange.progress_count() or exchange.cut_short) and self.alive \
                        and answering:
                    # Still working at the limit (or the phase is over): not dropped. Tell the server to stop.
                    # A server that answered nothing, not even the liveness request, keeps its verdict: stuck.
                    await self._cancel(case.expect.id, "still working when mcpfuzz stopped waiting")
            # A handshake request answered is followed by what the SDK clients send next and by nothing else:
            # notifications/initialized after an initialize result, before any barrier (docs/handshake.md).
            followed = patient_call and await self._send_answered_then(case, exchange)
            if self.thorough and lean and barrier is None and self.server.needs_barrier and self.alive \
                    and not exchange.write_error and (followed or not is_handshake_request(case.data)):
                # Answered: a request now (never in the handshake's own write, which some SDKs cannot take) keeps
                # the window open for a second answer written right after the first. It only waits: a server may
                # rightly ignore it (before initialize), so its silence is nobody's finding.
                await self._late_barrier(self.options.timeout)
        finally:
            self._collector.close()
        exchange.waited = time.monotonic() - window.started
        own = [a.at for a in exchange.responses() if a.id_tag == ID_CURRENT]
        if own and times_its_target(case) and exchange.crash is None:
            self.answer_times.note(case.target, own[0])
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
        if self._asked_at is not None or self._standby.active:  # rarely: after a start, or to keep a standby
            await self._answered()
        return exchange

    async def _send_answered_then(self, case: Case, exchange: Exchange) -> bool:
        """The frames a client sends once the case's request got a result (`Case.answered_then`), in its window;
        True when they went out."""
        if not case.answered_then or not self.alive or not any(
                a.id_tag == ID_CURRENT and a.incoming.is_result for a in exchange.arrivals):
            return False
        try:
            for frame in case.answered_then:
                await self.send_frame(frame)
        except TransportError:
            return False
        return True

    async def _wait_longer(self, window: Window, barrier: Pending | None, case: Case, http: HttpReply | None,
                           limit: float, most: float, *, fair_wait: bool = False) -> None:
        """A call that outlived --timeout waited for on to `limit` from its start (each progress notification moving
        that on, up to `most`), never past the end of its phase (`exchange.cut_short` then); but a busy call's fair
        wait (`fair_wait`: bounded by its target's answer times) may run past it, to the run's own deadline, so a
        wedge is judged whatever share of the run its phase had left."""
        exchange = window.exchange
        if self.patience_until is not None:
            until = self.patience_until
            if fair_wait and self.wedge_until is not None:
                until = max(until, min(window.started + limit, self.wedge_until))
            room = max(0.0, until - window.started)
            exchange.cut_short = room < limit
            limit, most = min(limit, room), min(most, room)
        await self._collector.collect(window, barrier, case, http=http, timeout=limit, grace=self.options.grace,
                                      progress_extends=self.options.timeout, most=most)

    async def send_posts(self, case: Case) -> list[HttpReply]:
        """Each line of a case its own POST (`case.posts`: in order, or all at once); returns once every response
        has ended, the server died, or --timeout passed, so answers on any of them are in the case's window."""
        lines = case.data.split(b"\n")
        replies: list[HttpReply | None] = [None] * len(lines)
        failures: list[TransportError] = []

        async def post(index: int) -> None:
            try:
                replies[index] = await self.server.send(lines[index])
            except TransportError as error:  # raised below, once, as a single send would raise it
                failures.append(error)

        async with self._write_lock:
            if case.posts is Posting.AT_ONCE:
                async with anyio.create_task_group() as group:
                    for index in range(len(lines)):
                        group.start_soon(post, index)
            else:
                for index in range(len(lines)):
                    await post(index)  # returns once its response headers are in: the server has the request
                    if failures:
                        break
        self._sent_frames(tuple(lines))
        if failures:
            raise failures[0]
        sent = [reply for reply in replies if reply is not None]
        until = time.monotonic() + self.options.timeout
        for reply in sent:
            await self._collector.wait_settled(reply, max(0.0, until - time.monotonic()))
        return sent

    # -- pipelined windows ---------------------------------------------------------------------

    @property
    def pipelines(self) -> bool:
        """True when several cases may be in flight at once: in one write settled by one barrier (stdio, memory), or
        each a POST of its own (streamable HTTP, unless the server lately refused a request for load)."""
        if self.thorough:
            return False
        if self.server.replies_on_request:
            return time.monotonic() >= self._alone_until
        return self.server.joins_writes and self.server.needs_barrier

    def may_share(self, case: Case) -> bool:
        """True when the case may share a window: told by id on stdio (`Case.pipelinable`), by its own POST over
        streamable HTTP (`Case.shares_posts`)."""
        return case.shares_posts if self.server.replies_on_request else case.pipelinable

    def fresh_ids(self, case: Case) -> bool:
        """True when no id of the case was sent to the current server yet (its answers can only be its own)."""
        return not self._collector.was_sent(case.expect)

    async def run_window(self, cases: Sequence[Case]) -> list[Exchange] | None:
        """Send pipelinable cases in one write with one barrier after them; each answer goes to its case by id.
        Over streamable HTTP each case is a POST of its own instead, several in flight, each settled by the end of
        its own response (`_post_window`).

        Returns one exchange per case, each as an isolated run would have recorded it, or None when the
        window saw anything it cannot attribute to exactly one case (an answer with id null or a stranger's
        id, a notification, a request of the server, a crash, silence): the server is then stopped, and the
        caller runs the same cases one by one, on a fresh process (a restart it did not cause, not counted).
        """
        await self._ready_for_cases()
        era = self.era or Era.LEGACY
        exchanges = [Exchange(case, case.era or era, self.version) for case in cases]
        for exchange in exchanges:
            exchange.frames = [*self.handshake_frames, *exchange.case.history, exchange.case.data]
        shared = self._collector.open_shared(exchanges, by_post=self.server.replies_on_request)
        refusal = ""
        try:
            barrier = None
            if shared.by_post:
                refusal = await self._post_window(shared)
            else:
                frame, barrier = self._barrier_frame()
                try:
                    await self._send_frames((*(case.data for case in cases), frame))
                except TransportError as error:
                    shared.unsettle(f"the write failed: {error}")
            await self._collector.collect_shared(shared, barrier, timeout=self.options.timeout,
                                                 grace=self.options.grace)
        finally:
            self._collector.close()
        # A server that died did not refuse for load (its POSTs fail just before its exit is seen): run alone.
        if refusal and not await self.server.wait_exit(self.options.grace):
            self._back_off(refusal)
        if shared.unsettled:
            if self.alive:
                await self.server.kill()
            self.ready = False
            self.recycle()
            return None
        waited, stderr_tail = time.monotonic() - shared.started, self.server.stderr.text(10)
        for exchange in exchanges:
            case = exchange.case
            exchange.waited, exchange.stderr_tail = waited, stderr_tail
            # An isolated valid call that was answered never sent its barrier: the same record here (over HTTP the
            # complete response stands for the barrier, as alone).
            exchange.barrier_answered = True if shared.by_post else None if waits_for_own_answer(case) else True
        if self._asked_at is not None or self._standby.active:  # rarely: after a start, or to keep a standby
            await self._answered()
        return exchanges

    async def _post_window(self, shared: WindowSet) -> str:
        """Each case of a window its own POST, at most POSTS_IN_FLIGHT at once, each waited for to the end of its
        response; returns once all have ended, or --timeout has passed.

        A load refusal (429, 503) or a failed POST unsettles the window, and is returned (else ""): under load
        a server may refuse what it would answer alone, and the case must be judged alone. No case is sent once
        the window is unsettled. The frames are logged in case order, whatever order the POSTs went out in.
        """
        posts: dict[int, HttpReply] = {}
        starting = 0  # POSTs whose request is going out (their response headers not in yet)
        refusal = ""

        async def post(index: int, window: Window) -> None:
            nonlocal starting
            try:
                reply = await self.server.send(window.exchange.case.data)
            except TransportError as error:
                shared.unsettle(f"a POST failed: {error}")
                reply = None
            starting -= 1
            if reply is None:
                shared.unsettle("a frame went out with no POST of its own")
            else:
                posts[index] = window.exchange.http = reply
                self._collector.claim(shared, window, reply)
            self._collector.wake()

        def in_flight() -> int:
            nonlocal refusal
            count = starting
            for reply in posts.values():
                if not reply.done:
                    count += 1
                elif reply.error or reply.status in LOAD_REFUSALS:
                    refusal = refusal or reply.describe()
                    shared.unsettle(f"refused while other POSTs were in flight: {reply.describe()}")
                elif reply.status is not None and reply.status >= 500:
                    # Alone it may be answered: a server error under concurrency is not this case's to own.
                    shared.unsettle(f"a server error while other POSTs were in flight: {reply.describe()}")
            return count

        # One task sends each POST (`send` returns once its response headers are in); this one task waits for the
        # responses to end, so a message or an ended response wakes one waiter, not one per POST. No write lock:
        # POSTs need no order, and the answer to a server's request must not wait for the window.
        with anyio.move_on_after(self.options.timeout):
            async with anyio.create_task_group() as group:
                for index, window in enumerate(shared.windows):
                    while in_flight() >= POSTS_IN_FLIGHT and self.alive:
                        await self._collector.changed()
                    if shared.unsettled or not self.alive:
                        break
                    starting += 1
                    group.start_soon(post, index, window)
                # Every POST to its end even once the window is unsettled: the cases run alone next find the
                # server idle.
                while in_flight() and self.alive:
                    await self._collector.changed()
        self._sent_frames(tuple(w.exchange.case.data for i, w in enumerate(shared.windows) if i in posts))
        return refusal

    def _back_off(self, why: str) -> None:
        """A load refusal: cases go one at a time for a while (said once per session)."""
        self._alone_until = time.monotonic() + ALONE_AFTER_REFUSAL
        if not self._refusal_noted and self.on_notice is not None:
            self._refusal_noted = True
            self.on_notice(f"the server refused a request while others were in flight ({why}): those cases were "
                           f"run again one at a time, and cases go one at a time for {ALONE_AFTER_REFUSAL:g}s "
                           "after each such refusal")

    async def _cancel(self, request_id: Any, reason: str) -> None:
        """notifications/cancelled for a request of ours (MCP: the receiver should stop work on it)."""
        with contextlib.suppress(TransportError):
            await self.notify("notifications/cancelled", {"requestId": request_id, "reason": reason})

    async def _check_wedged(self, exchange: Exchange) -> Pending | None:
        """A fresh request after a busy call's fair wait (over HTTP on a POST of its own): unanswered too while the
        process runs, the server is stuck (`exchange.wedged`), with the share of a core it burnt meanwhile as
        evidence. Returns the fresh request (None when it could not be sent)."""
        started, before = time.monotonic(), CpuSample.take(self.server.pid)
        fresh = await self._late_barrier(self.options.timeout)
        if fresh is None or fresh.reply is not None or not self.alive \
                or any(a.id_tag == ID_CURRENT for a in exchange.responses()):
            return fresh
        exchange.wedged = True
        after = CpuSample.take(self.server.pid)
        exchange.cpu_share = after.share_since(before, time.monotonic() - started) if after is not None else None
        return fresh

    async def _late_barrier(self, wait: float = LATE_BARRIER_WAIT) -> Pending | None:
        """After a silent timeout (or an answer, in thorough mode): does the server still answer anything?"""
        try:
            barrier = await self._send_barrier()
        except TransportError:
            return None
        if barrier is not None:
            await self._collector.wait_reply(barrier, min(self.options.timeout, wait))
        return barrier

    async def send_setup(self, frames: Sequence[bytes]) -> None:
        """Frames sent unjudged on the process in use, each settled before the next (a saved sequence's start)."""
        for data in frames:
            await self._send_unjudged(data)

    async def _send_unjudged(self, data: bytes) -> None:
        """Setup frames of a case: sent, then a barrier, replies dropped. An `initialize` is settled by its own
        answer instead: the SDK clients send notifications/initialized next, never a request between them."""
        rid = initialize_id(data)
        own = self._collector.expect_reply(rid) if rid is not None else None
        try:
            http = await self.send_frame(data)
            if http is not None and self.server.replies_on_request:
                await self._collector.wait_settled(http, self.options.timeout)
                return
            if own is not None:
                await self._collector.wait_reply(own, self.options.timeout, startup_until=self._startup_until())
                if own.reply is not None or not self.alive:
                    return
            barrier = await self._send_barrier()
            if barrier is not None:
                await self._collector.wait_reply(barrier, self.options.timeout, startup_until=self._startup_until())
        except TransportError:
            pass

    # -- receiving -----------------------------------------------------------------------------

    def _on_exit(self, end: ProcessEnd) -> None:
        self._collector.wake()

    def _on_line(self, line: bytes, size: int) -> None:
        self.last_line = line
        try:
            incoming = classify(line, size)
            for part in split_batch(incoming) if incoming.kind == RESPONSE_BATCH else [incoming]:
                if part.kind == REQUEST:
                    self._server_requests.answer(part)
                self._collector.route(part, self.server.delivering)
            self._server_requests.flush(self._group)
        except Exception as error:
            # Raised here it would end the reader, and with it the run: whatever the server wrote, one line is lost.
            if self.on_internal_error is None:
                raise
            self.on_internal_error(error, f"a line the server wrote: {line[:80]!r}")
        self._collector.wake()


def waits_for_own_answer(case: Case) -> bool:
    """A valid request waited for patiently: its own answer proves the server alive, so it needs no barrier."""
    return bool(case.patient and case.expect.well_formed and case.expect.reply)
