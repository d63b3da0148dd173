"""One server under test: the era, the handshake and each case run in its own window. Its helpers never import it:
the frames sent (wire, a `Link`), how answers are delivered (delivery), how long a case is waited for (patience), the
server's processes (process), what came back (collector)."""

from __future__ import annotations

import contextlib
import time
from collections import deque
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass

import anyio
import anyio.abc

from mcpfuzz.engine.client.capabilities import declared_capabilities
from mcpfuzz.engine.client.responder import ClientResponder
from mcpfuzz.engine.session.collector import Collector, IdBooks
from mcpfuzz.engine.session.delivery import Delivery, delivery_for, send_answered_then, send_unjudged
from mcpfuzz.engine.session.options import SessionOptions
from mcpfuzz.engine.session.patience import Patience, waits_for_own_answer
from mcpfuzz.engine.session.process import Borrowed, ProcessKeeper, failed_comeback
from mcpfuzz.engine.session.server_requests import ServerRequests
from mcpfuzz.engine.session.wire import HARNESS_FIRST_ID as HARNESS_FIRST_ID  # where callers have always found it
from mcpfuzz.engine.session.wire import LOG_LIMIT, HarnessError, Wire
from mcpfuzz.jsonrpc.client_check import AnswerMode
from mcpfuzz.jsonrpc.exchange import Exchange, ProcessEnd
from mcpfuzz.jsonrpc.frame import Case
from mcpfuzz.jsonrpc.handshake_order import is_handshake_request
from mcpfuzz.jsonrpc.incoming import REQUEST, RESPONSE_BATCH, classify, split_batch
from mcpfuzz.jsonrpc.parts.client import ClientCheck
from mcpfuzz.jsonrpc.versions import LATEST_LEGACY, Era
from mcpfuzz.transport.base import ConnectionCallbacks, ConnectionOptions, ServerConnection, TransportKind
from mcpfuzz.transport.connect import ServerTarget, open_connection, standby_holder, standby_refusal
from mcpfuzz.transport.errors import ConnectionClosed, ServerStartError, WriteTimeout


@dataclass(frozen=True)
class _SetAside:
    """The process in use while a fresh case borrows the standby: what the session knew of it."""

    process: int
    log: deque[bytes]
    handshake_frames: list[bytes]
    books: IdBooks
    borrowed: Borrowed
    forced: bool  # whether the process in use had died or stopped answering already


class ServerLost(HarnessError):
    """The server failed to come back too many times in a row (RestartPolicy): it is not started again."""


class Session:
    """Owns a server connection (restarted as needed), the era, the handshake and the barrier; runs cases.

    What comes back is routed by its Collector; the server's own requests are answered by ServerRequests; how a case
    goes out is its Delivery's, how long it is waited for its Patience's, the processes its ProcessKeeper's.
    """

    def __init__(self, target: ServerTarget, options: SessionOptions | None = None) -> None:
        self.options = options or SessionOptions()
        self.target = target
        self.server: ServerConnection  # opened for the target on entering the session
        self.delivery: Delivery  # the connection's kind of delivery, known once it is open
        self.era: Era | None = None
        self.version: str = LATEST_LEGACY
        self.ready = False
        # Restarts the server forced: the process in use crashed, exited or stopped answering (and was stopped).
        self.restarts = 0
        # Restarts of mcpfuzz's own plan: a fresh process for a lifecycle case or after one, recycles, re-runs.
        self.planned_restarts = 0
        self.process = 0  # which process (or HTTP session) this is: every start counts
        self._recycling = False
        self._forced = False  # the process in use died or was stopped as stuck: its replacement is forced
        # Awaited before each case on a ready server (the soak's liveness ping and resource samples).
        self.before_case: Callable[[], Awaitable[None]] | None = None
        self.on_notice: Callable[[str], None] | None = None  # what the user should hear of (said once each)
        # An error of mcpfuzz's own while reading a line of the server: the line is dropped, the session goes on.
        self.on_internal_error: Callable[[Exception, str], None] | None = None
        # Told a pipelined window's exchanges once all are answered (--observe: their side effects); False sends the
        # window back, its cases to be run alone (what it saw cannot be told to one case).
        self.window_observer: Callable[[Sequence[Exchange]], bool] | None = None
        self.collector = Collector(lambda: self.server.alive)
        self.processes = ProcessKeeper(self.options.startup_timeout)
        self.startup, self.comebacks = self.processes.startup, self.processes.comebacks
        self.wire = Wire(self.options, self.collector, self.processes, lambda: (self.era, self.version), self._notice)
        # The wire's requests and frames, under the names the phases have always called.
        self.next_id, self.aside, self.message = self.wire.next_id, self.wire.aside, self.wire.message
        self.send_frame, self.notify, self.call = self.wire.send_frame, self.wire.notify, self.wire.call
        self.liveness_request = self.wire.liveness_request
        self.responder = ClientResponder(self.options.client_capabilities)
        self._server_requests = ServerRequests(self.send_frame, self.responder)
        self.handshake_frames: list[bytes] = []
        # Probe, lifecycle, replays and verification: a valid call's answer is followed by a barrier, so a second
        # answer written after the first (initialize answered twice) is seen every time, not by luck.
        self.thorough = False
        self.patience = Patience()  # a slow call's limits: its phase's deadline, the run's, its target's answer times
        self._group: anyio.abc.TaskGroup
        self.last_line = b""  # the current process' latest line on stdout (said when it fails the handshake)

    async def __aenter__(self) -> Session:
        if self.options.frame_log is not None:
            self.wire.frame_log = open(self.options.frame_log, "wb")  # noqa: SIM115 (closed in __aexit__)
        self._group = anyio.create_task_group()
        await self._group.__aenter__()
        options = self.options
        self.server = self.wire.server = await open_connection(
            self.target, ConnectionCallbacks(self._on_line, lambda _end: self.collector.wake(), self.collector.wake),
            ConnectionOptions(timeout=options.timeout, startup_timeout=options.startup_timeout,
                              call_timeout=options.call_timeout, max_line=options.max_line,
                              write_timeout=options.write_timeout, env=options.env))
        await self.server.__aenter__()
        self.delivery = delivery_for(self.server.delivery)
        self.processes.keep_standby(standby_holder(self.server), standby_refusal(self.target),
                                    enabled=options.standby, always=options.standby_always,
                                    notice=self._notice)
        return self

    async def __aexit__(self, *exc_info: object) -> bool | None:
        try:
            await self.server.__aexit__(*exc_info)
        finally:
            self._group.cancel_scope.cancel()
            await self._group.__aexit__(None, None, None)
            if self.wire.frame_log is not None:
                self.wire.frame_log.close()
            self.responder.close()
        return None

    def _notice(self, text: str) -> bool:
        """Say `text` to the user; False when nobody listens."""
        if self.on_notice is None:
            return False
        self.on_notice(text)
        return True

    @property
    def transport(self) -> TransportKind:
        """What carries the frames (known once the session is entered: a URL's transport is detected)."""
        return self.server.kind

    @property
    def alive(self) -> bool:
        """True while the server process runs."""
        return self.server.alive

    # -- the process in use and its handshake ----------------------------------------------------

    async def restart(self) -> None:
        """A fresh process with no handshake (a standby when one is held); all per-process state is forgotten."""
        if self.comebacks.lost:
            raise ServerLost(self.comebacks.verdict())
        self._new_process()
        await self.processes.start(self.server)
        self.wire.log.clear()
        self.collector.forget()

    def _new_process(self) -> None:
        """Counters and state of a process about to be in use: a restart the server forced (its process died or
        stopped answering) or one of mcpfuzz's plan (a fresh process asked for, a recycle)."""
        if self.server.starts:
            if self._forced and not self._recycling:
                self.restarts += 1
            else:
                self.planned_restarts += 1
        self._recycling, self._forced = False, False
        self.process += 1
        self.ready = False
        self.handshake_frames = []
        self.last_line = b""

    def recycle(self) -> None:
        """Start the next case on a fresh server, for mcpfuzz's own bookkeeping (a planned restart)."""
        self.ready = False
        self._recycling = True

    def forced_restart(self) -> None:
        """The process in use died or stopped answering: the next case starts on a fresh one, a restart the server
        forced."""
        self.ready = False
        self._forced = True

    async def ensure_ready(self) -> None:
        """Restart and redo the handshake of the known era when the server died or got stuck; a server that does not
        come back is started again after a back-off, until the RestartPolicy gives it up (ServerLost)."""
        if self.alive and self.ready:
            return
        if self.ready:
            self._forced = True  # it exited between cases, or after its last case was judged
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
                self._forced = True  # a comeback that did not come back: the next start is the server's doing too
                self.comebacks.failed_once(failed_comeback(self.server, error), self.restarts)
                if self.comebacks.lost:
                    raise ServerLost(self.comebacks.verdict()) from None
                continue
            self.comebacks.came_back()
            return

    async def handshake(self) -> None:
        """Era handshake, unjudged: initialize + initialized (legacy) or server/discover (modern); none for a plain
        JSON-RPC server."""
        if self.options.plain_jsonrpc:
            # No handshake: a barrier request waits out the process' start, so no case is judged on a server still
            # starting; it is no part of any reproduction, and silence here is the cases' to judge.
            with contextlib.suppress(HarnessError):
                await self.call(*self.liveness_request())
            self.wire.log.clear()
        elif self.era is Era.MODERN:
            await self.call("server/discover", {})
        else:
            from mcpfuzz.strategies.messages import initialize_params

            await self.call("initialize", initialize_params(
                self.version, declared_capabilities(self.options.client_capabilities)))
            await self.notify("notifications/initialized")
        self.handshake_frames = list(self.wire.log)
        if self.era is not Era.MODERN and not self.options.plain_jsonrpc:
            await self._settle_notification()
        self.ready = True
        if self.processes.tending:
            await self.processes.answered(self.collector.first_answer)

    async def _settle_notification(self) -> None:
        """After the handshake's notification, the liveness request, awaited: on an ordered stream whatever the
        server wrote in reply to the notification comes before its answer, so no case's window receives it (a reply
        to a notification is judged on the notification cases, never charged to the frame sent next). Its silence
        is the cases' to judge; it is no part of any reproduction."""
        if not self.delivery.ordered:
            return  # streamable HTTP: a reply to the notification comes on the notification's own POST
        with contextlib.suppress(HarnessError):
            await self.call(*self.liveness_request())

    # -- cases ---------------------------------------------------------------------------------

    async def run_case(self, case: Case, *, timeout: float | None = None) -> Exchange:
        """Send one case and collect everything until it is answered, the server dies, or time runs out.

        `timeout` replaces --timeout for this case (a target's own, from the config file's [targets]). A case that
        needs a fresh process runs on the standby, when one is held, beside the process in use, which the cases
        after it find as it was (no restart for them); else on a process started for it.
        """
        if case.fresh:
            borrowed = await self.processes.borrow(self.ready and self.alive)
            if borrowed is not None:
                books = self.collector.set_aside()
                aside = _SetAside(self.process, self.wire.log, self.handshake_frames, books, borrowed, self._forced)
                self._new_process()
                self.wire.log = deque(maxlen=LOG_LIMIT)
                try:
                    return await self.run_case_on_current(case, timeout=timeout)
                finally:
                    with anyio.CancelScope(shield=True):  # the session goes on after a phase's deadline
                        await self.processes.give_back(aside.borrowed)
                        self.process, self.handshake_frames = aside.process, aside.handshake_frames
                        self.wire.log = aside.log
                        self.collector.restore(aside.books)
                        self.ready, self._forced = self.alive, aside.forced
            await self.restart()
        else:
            await self._ready_for_cases()
        return await self.run_case_on_current(case, timeout=timeout)

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
        await self.send_setup(case.setup)
        exchange = Exchange(case, case.era or self.era or Era.LEGACY, self.version)
        exchange.frames = [*self.handshake_frames, *case.history, *case.setup, case.data]
        window = self.collector.open(exchange)
        # A valid request that will be waited for patiently is its own proof of life: the barrier
        # goes out only if it stays unanswered (to tell a dropped request from a stuck server).
        lean = waits_for_own_answer(case)
        try:
            barrier = await self.delivery.send_case(self.wire, case, exchange, lean=lean)
        except (ConnectionClosed, WriteTimeout) as error:
            barrier = None
            if not isinstance(error, ConnectionClosed) or self.alive:
                exchange.write_error = str(error)
        try:
            barrier = await self.patience.wait_for(self.wire, window, barrier, self.delivery.response(exchange.http),
                                                   timeout=timeout, lean=lean, ordered=self.delivery.ordered)
            # A handshake request answered is followed by what the SDK clients send next and by nothing else:
            # notifications/initialized after an initialize result, before any barrier (docs/handshake.md).
            followed = lean and await send_answered_then(self.wire, exchange)
            if self.thorough and lean and barrier is None and self.delivery.ordered and self.alive \
                    and not exchange.write_error and (followed or not is_handshake_request(case.data)):
                # Answered: a request now (never in the handshake's own write, which some SDKs cannot take) keeps
                # the window open for a second answer written right after the first. It only waits: a server may
                # rightly ignore it (before initialize), so its silence is nobody's finding.
                await self.patience.late_barrier(self.wire, self.options.timeout)
        finally:
            self.collector.close()
        exchange.waited = time.monotonic() - window.started
        self.patience.answered(exchange)
        response = self.delivery.response(exchange.http)
        if barrier is not None:
            exchange.barrier_answered = barrier.reply is not None
        elif response is not None:
            # The POST's complete response proves the server handled the frame (and is not stuck).
            exchange.barrier_answered = response.done and not response.error
        if not self.alive:
            await self.server.wait_exit(1.0)
            exchange.crash = self.server.end or ProcessEnd(None, self.server.stderr.text())
            self._forced = self._forced or not case.fresh  # after a fresh case a fresh process comes anyway
            self.ready = False
        elif exchange.write_error or exchange.barrier_answered is False:
            # Stuck (or deaf): start over before the next case, so one hang is one finding.
            await self.server.kill()
            self._forced = self._forced or not case.fresh
            self.ready = False
        exchange.stderr_tail = self.server.stderr.text(10)
        if case.fresh:
            self.ready = False  # a lifecycle case leaves the process in an odd state
        if self.processes.tending:
            await self.processes.answered(self.collector.first_answer)
        return exchange

    # -- pipelined windows ---------------------------------------------------------------------

    @property
    def pipelines(self) -> bool:
        """True when several cases may be in flight at once: in one write settled by one barrier (stdio, memory), or
        each a POST of its own (streamable HTTP, unless the server lately refused a request for load)."""
        return not self.thorough and self.delivery.pipelines()

    def may_share(self, case: Case) -> bool:
        """True when the case may share a window: told by id on stdio (`Case.pipelinable`), by its own POST over
        streamable HTTP (`Case.shares_posts`)."""
        return self.delivery.may_share(case)

    def fresh_ids(self, case: Case) -> bool:
        """True when no id of the case was sent to the current server yet (its answers can only be its own)."""
        return not self.collector.was_sent(case.expect)

    async def run_window(self, cases: Sequence[Case]) -> list[Exchange] | None:
        """Send pipelinable cases in one write with one barrier after them; each answer goes to its case by id.
        Over streamable HTTP each case is a POST of its own instead, several in flight, each settled by the end of
        its own response (`ResponsePerRequest.send_window`).

        Returns one exchange per case, each as an isolated run would have recorded it, or None when the
        window saw anything it cannot attribute to exactly one case (an answer with id null or a stranger's
        id, a notification, a request of the server, a crash, silence): the server is then stopped, and the
        caller runs the same cases one by one, on a fresh process (a restart it did not cause, not counted). None
        too when `window_observer` refuses what the calls were seen doing (the process goes on: its stream is sound).
        """
        await self._ready_for_cases()
        era = self.era or Era.LEGACY
        exchanges = [Exchange(case, case.era or era, self.version) for case in cases]
        for exchange in exchanges:
            exchange.frames = [*self.handshake_frames, *exchange.case.history, exchange.case.data]
        shared = self.collector.open_shared(exchanges, by_post=self.delivery.by_request)
        for exchange in exchanges:
            exchange.started = shared.started  # the clock of their arrivals: when each call was in flight is known
        try:
            barrier = await self.delivery.send_window(self.wire, shared)
            await self.collector.collect_shared(shared, barrier, timeout=self.options.timeout,
                                                grace=self.options.grace)
        finally:
            self.collector.close()
        await self.delivery.window_done(self.wire)
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
        if self.processes.tending:
            await self.processes.answered(self.collector.first_answer)
        if self.window_observer is not None and not self.window_observer(exchanges):
            return None
        return exchanges

    async def send_setup(self, frames: Sequence[bytes]) -> None:
        """Frames sent unjudged on the process in use, each settled before the next (a saved sequence's start)."""
        for data in frames:
            await send_unjudged(self.wire, self.delivery, data)

    # -- receiving -----------------------------------------------------------------------------

    def _on_line(self, line: bytes, size: int) -> None:
        self.last_line = line
        try:
            incoming = classify(line, size)
            for part in split_batch(incoming) if incoming.kind == RESPONSE_BATCH else [incoming]:
                if part.kind == REQUEST:
                    self._server_requests.answer(part)
                self.collector.route(part, self.server.delivering)
            self._server_requests.flush(self._group)
        except Exception as error:
            # Raised here it would end the reader, and with it the run: whatever the server wrote, one line is lost.
            if self.on_internal_error is None:
                raise
            self.on_internal_error(error, f"a line the server wrote: {line[:80]!r}")
        self.collector.wake()
