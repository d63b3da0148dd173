"""What came back for the open case: arrivals tagged by id, counted, and waited for until the case is settled."""

from __future__ import annotations

import asyncio
import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from mcpfuzz.engine.session.order import AnswerOrder
from mcpfuzz.engine.session.patience import Graces
from mcpfuzz.engine.session.tracking import BoundedDict
from mcpfuzz.jsonrpc.exchange import (
    ID_CURRENT,
    ID_EARLIER,
    ID_MISSING,
    ID_NULL,
    ID_UNKNOWN,
    Arrival,
    Exchange,
)
from mcpfuzz.jsonrpc.expectation import Expectation
from mcpfuzz.jsonrpc.frame import Case
from mcpfuzz.jsonrpc.http_reply import HttpReply
from mcpfuzz.jsonrpc.ids import ABSENT, IdKey, id_key, show_id
from mcpfuzz.jsonrpc.incoming import NOTIFICATION, REQUEST, RESPONSE, Incoming
from mcpfuzz.jsonrpc.parts.cancel import CancelCheck

MAX_SERVER_REQUESTS = 100  # the server's own requests kept per exchange


@dataclass
class Pending:
    """A request of the harness itself (barrier, handshake) waiting for its reply."""

    reply: Incoming | None = None
    # Whether the case open when the reply came had every reply it is due by then (None: no case was open).
    case_answered: bool | None = None


# Stands in for a harness request once its reply was handed over: a second answer is still recognised
# as a repeat, and the reply itself (a tools/list result can be megabytes) is not kept for the session.
_ANSWERED: Any = object()


class IdBooks(NamedTuple):
    """One process' books: harness requests awaiting a reply, ids sent, answers counted, its first answer."""

    pending: BoundedDict[IdKey, Any]
    sent: BoundedDict[IdKey, int]
    answered: BoundedDict[IdKey, int]
    first_answer: float | None


@dataclass
class Window:
    """The case currently open: arrivals are attributed to it."""

    exchange: Exchange
    ids: frozenset[IdKey]
    started: float
    via: HttpReply | None = None  # in a window over streamable HTTP: the case's own POST


@dataclass
class WindowSet:
    """Several cases in flight at once (a pipelined window): each answer goes to the case whose id it carries.

    `unsettled` says why the window could not attribute everything it saw (then none of it is judged).
    `by_post`: over streamable HTTP each case is a POST of its own, and everything on that POST is the case's.
    """

    windows: list[Window]
    by_id: dict[IdKey, Window]
    started: float
    order: list[IdKey]  # the ids due an answer, in the order their frames went out
    by_token: dict[IdKey, Window]  # progress tokens the requests carry: their notifications are the case's own
    unsettled: str = ""
    _next: int = 0
    by_post: bool = False
    posts: dict[int, Window] = field(default_factory=dict)  # id() of a POST's HttpReply -> the case it carries
    # Messages on a POST whose `send` has not returned yet (so its case is not known yet), by id() of the POST.
    early: dict[int, tuple[HttpReply, list[tuple[Incoming, float]]]] = field(default_factory=dict)

    def check_order(self, key: IdKey) -> None:
        """A first answer must carry the next id in sending order: two answers with their ids swapped (which an
        isolated run tells by an unknown id) would otherwise each look right in the other's case."""
        if self._next < len(self.order) and self.order[self._next] == key:
            self._next += 1
        else:
            self.unsettle("answers out of sending order")

    def posts_done(self) -> bool:
        """True once every case's POST went out and its response has ended (streamable HTTP)."""
        return all(w.via is not None and w.via.done for w in self.windows)

    def unsettle(self, why: str) -> None:
        """Something arrived (or failed to) that no case of the window can own; the first reason is kept."""
        self.unsettled = self.unsettled or why

    def answered(self) -> bool:
        """True once every case has every reply it is due."""
        return all(satisfied(w.exchange.case.expect, w.exchange) for w in self.windows)

    def patient_only(self) -> bool:
        """True when every case still unanswered is a patient one (alone, it would wait to --timeout, not a grace)."""
        return all(w.exchange.case.patient for w in self.windows if not satisfied(w.exchange.case.expect, w.exchange))


class Collector:
    """Tags every message from the server by how its id relates to what was sent, and waits for answers.

    Harness requests get their reply handed over; everything else lands in the open window's exchange.
    The id books cover the current server only (`forget` on a restart) and stay bounded.
    """

    def __init__(self, alive: Callable[[], bool], graces: Graces | None = None) -> None:
        self._alive = alive
        self.graces = graces or Graces()  # the grace after the barrier, per case (see patience)
        self.order = AnswerOrder()  # whether a barrier's answer fences the frames before it (see order)
        self._pending: BoundedDict[IdKey, Pending | Any] = BoundedDict()  # or _ANSWERED
        self._sent: BoundedDict[IdKey, int] = BoundedDict()
        self._answered: BoundedDict[IdKey, int] = BoundedDict()
        self._window: Window | None = None
        self._shared: WindowSet | None = None  # a pipelined window, instead of `_window`
        # Each waiter's future, resolved by the next line, exit or HTTP change (see `wake`). Plain asyncio futures
        # and timers: an anyio cancel scope and Event per wait cost more than the rest of a plain case's routing.
        self._waiters: list[asyncio.Future[None]] = []
        self.first_answer: float | None = None  # when the current server first wrote a message (monotonic)

    def forget(self) -> None:
        """A new server: no id sent to the old one can be answered by it."""
        self._pending.clear()
        self._sent.clear()
        self._answered.clear()
        self.first_answer = None

    def set_aside(self) -> IdBooks:
        """A process is set aside for a while (another runs a case): its books, kept for `restore`; new ones now."""
        books = IdBooks(self._pending, self._sent, self._answered, self.first_answer)
        self._pending, self._sent, self._answered = BoundedDict(), BoundedDict(), BoundedDict()
        self.first_answer = None
        return books

    def restore(self, books: IdBooks) -> None:
        """The process set aside is in use again, with the ids it was sent and answered."""
        self._pending, self._sent, self._answered, self.first_answer = books

    def _limit(self, deadline: float, timeout: float, startup_until: float | None) -> float:
        """`deadline`, or later while the server has not answered anything yet: up to `startup_until` (its start may
        be slow), and `timeout` past its first answer once it has given one."""
        if startup_until is None:
            return deadline
        first = self.first_answer
        return max(deadline, startup_until if first is None else min(startup_until, first + timeout))

    def expect_reply(self, rid: int) -> Pending:
        """Register a harness request: its reply goes to the returned Pending, not to the window."""
        pending = Pending()
        self._pending[id_key(rid)] = pending
        return pending

    def open(self, exchange: Exchange) -> Window:
        """Attribute arrivals to this case from now on; its ids count as sent."""
        ids = case_ids(exchange.case.expect)
        for key in ids:
            self._sent[key] = self._sent.get(key, 0) + 1
        self._window = Window(exchange, ids, time.monotonic())
        return self._window

    def open_shared(self, exchanges: list[Exchange], *, by_post: bool = False) -> WindowSet:
        """Open one window per case, all at once: each arrival goes to the case whose id it carries."""
        started = time.monotonic()
        windows = []
        by_id: dict[IdKey, Window] = {}
        for exchange in exchanges:
            window = self.open(exchange)
            window.started = started
            windows.append(window)
            by_id.update((key, window) for key in window.ids)
        self._window = None
        order = [id_key(w.exchange.case.expect.id) for w in windows if w.exchange.case.expect.reply]
        by_token = {id_key(token): w for w in windows if (token := w.exchange.case.progress_token) is not None}
        self._shared = WindowSet(windows, by_id, started, order, by_token, by_post=by_post)
        return self._shared

    def claim(self, shared: WindowSet, window: Window, post: HttpReply) -> None:
        """`post` carries `window`'s case (streamable HTTP): what already came on it is the case's."""
        shared.posts[id(post)] = window
        window.via = post
        _, early = shared.early.pop(id(post), (post, []))
        for incoming, at in early:
            self._attribute_by_post(incoming, window, shared, at)

    def was_sent(self, expect: Expectation) -> bool:
        """True when an id of this case was already sent to the current server (then it is not fresh)."""
        return any(key in self._sent for key in case_ids(expect))

    def close(self) -> None:
        """No case is open: arrivals are routed (and counted) but kept nowhere."""
        self._window = None
        self._shared = None

    # -- arrivals --------------------------------------------------------------------------------

    def route(self, incoming: Incoming, via: HttpReply | None = None) -> None:
        """One message from the server (`via`: the POST it came on): a harness reply, or an arrival of the open
        case (tagged)."""
        if self.first_answer is None:  # any line, even noise: the server has started and reads what it is sent
            self.first_answer = time.monotonic()
        if self._shared is not None:
            if self._shared.by_post:
                self._route_by_post(incoming, self._shared, via)
            else:
                self._route_shared(incoming, self._shared)
            return
        window = self._window
        if incoming.kind == REQUEST:
            if window is not None:
                requests = window.exchange.server_requests
                if len(requests) < MAX_SERVER_REQUESTS:  # a flooding server must not grow one exchange without end
                    requests.append(incoming)
            return
        tag, count = "", 0
        if incoming.kind == RESPONSE:
            rid = incoming.id
            tag = _unkeyed_tag(rid)
            if not tag:
                key = id_key(rid)
                count = self._count_answer(key)
                pending = self._pending.get(key)
                if self._hand_over(key, pending, incoming):
                    if window is not None and pending is not None:
                        pending.case_answered = satisfied(window.exchange.case.expect, window.exchange)
                    return
                if pending is not None:
                    tag = ID_EARLIER  # a second answer to a harness request
                elif window is not None and key in window.ids:
                    tag = ID_CURRENT
                elif key in self._sent:
                    tag = ID_EARLIER
                    self.order.overtaken("an answer to an earlier case came after its window closed")
                else:
                    tag = ID_UNKNOWN
        if window is not None:
            window.exchange.arrivals.append(
                Arrival(incoming, time.monotonic() - window.started, tag, count))

    def _route_shared(self, incoming: Incoming, shared: WindowSet) -> None:
        """In a pipelined window only an answer carrying a case's own id (or a harness reply) can be attributed."""
        if incoming.kind == NOTIFICATION:
            token = _progress_key(incoming)
            owner = shared.by_token.get(token) if token is not None else None
            if owner is None:
                shared.unsettle("a notification that names no case's progress token")
            else:
                owner.exchange.arrivals.append(Arrival(incoming, time.monotonic() - shared.started))
            return
        rid = incoming.id if incoming.kind == RESPONSE else ABSENT
        if rid is ABSENT or rid is None:
            shared.unsettle(f"a {incoming.kind} that carries no id of a case" if incoming.kind != RESPONSE
                            else "an answer with id null or no id")
            return
        key = id_key(rid)
        count = self._count_answer(key)
        pending = self._pending.get(key)
        if self._hand_over(key, pending, incoming):
            return
        window = shared.by_id.get(key) if pending is None else None
        if window is None:
            shared.unsettle(f"an answer with id {show_id(rid)}, which is no case's of the window")
            return
        if not window.exchange.arrivals:  # a case of a window has one id: its first answer
            shared.check_order(key)
        window.exchange.arrivals.append(Arrival(incoming, time.monotonic() - shared.started, ID_CURRENT, count))

    def _route_by_post(self, incoming: Incoming, shared: WindowSet, via: HttpReply | None) -> None:
        """Streamable HTTP: a message belongs to the case whose POST it came on (held until that POST is known)."""
        if via is None:
            shared.unsettle(f"a {incoming.kind} on no case's POST")
            return
        at = time.monotonic() - shared.started
        window = shared.posts.get(id(via))
        if window is None:
            shared.early.setdefault(id(via), (via, []))[1].append((incoming, at))
        else:
            self._attribute_by_post(incoming, window, shared, at)

    def _attribute_by_post(self, incoming: Incoming, window: Window, shared: WindowSet, at: float) -> None:
        """A message on the case's own POST, tagged as alone; what alone would tag by other cases' ids (an
        earlier or unknown id), or a request of the server, unsettles the window."""
        if incoming.kind == REQUEST:
            shared.unsettle("a request of the server")
            return
        tag, count = "", 0
        if incoming.kind == RESPONSE:
            rid = incoming.id
            tag = _unkeyed_tag(rid)
            if not tag:
                if id_key(rid) not in window.ids:
                    shared.unsettle(f"an answer with id {show_id(rid)} on the POST of a case it is not due to")
                    return
                tag, count = ID_CURRENT, self._count_answer(id_key(rid))
        window.exchange.arrivals.append(Arrival(incoming, at, tag, count))

    def _count_answer(self, key: IdKey) -> int:
        """Count one more answer carrying this id (a second answer to one request is a finding)."""
        count = self._answered.get(key, 0) + 1
        self._answered[key] = count
        return count

    def _hand_over(self, key: IdKey, pending: Pending | Any, incoming: Incoming) -> bool:
        """Give a harness request its first reply; True when `incoming` was that reply."""
        if pending is not None and pending is not _ANSWERED and pending.reply is None:
            pending.reply = incoming  # the waiter holds `pending`; the collector forgets the reply
            self._pending[key] = _ANSWERED
            return True
        return False

    def wake(self) -> None:
        """Something happened (a line, an exit, an HTTP response ended): waiters check again."""
        # Waiters register and wait with no checkpoint in between: no waiter, nothing to resolve.
        if self._waiters:
            waiters, self._waiters = self._waiters, []
            for waiter in waiters:
                _release(waiter)

    async def changed(self) -> None:
        """Until the next line, process exit or HTTP change (the caller holds the timeout and checks again)."""
        await self._next_change()

    async def _next_change(self, until: float = math.inf) -> None:
        """Until the next line, process exit or HTTP change, or the monotonic time `until` (the caller checks again
        either way). Cancellable as any wait: a cancelled waiter's own future is cancelled, no other's."""
        loop = asyncio.get_running_loop()
        waiter: asyncio.Future[None] = loop.create_future()
        self._waiters.append(waiter)
        timer = loop.call_later(max(0.0, until - time.monotonic()), _release, waiter) if until < math.inf else None
        try:
            await waiter
        finally:
            if timer is not None:
                timer.cancel()
            if waiter in self._waiters:  # woken by its timer, or cancelled: not by `wake`, which empties the list
                self._waiters.remove(waiter)

    # -- waiting ---------------------------------------------------------------------------------

    async def wait_reply(self, pending: Pending, timeout: float, http: HttpReply | None = None, *,
                         startup_until: float | None = None) -> None:
        """Until the reply comes, the server dies, the timeout passes, or (HTTP) the POST ended without it.

        With `startup_until`, a server that has answered nothing yet may take until then (see `_limit`)."""
        deadline = time.monotonic() + timeout
        while pending.reply is None and self._alive() and not (http is not None and http.done):
            until = self._limit(deadline, timeout, startup_until)
            if time.monotonic() >= until:
                return
            await self._next_change(until)

    async def wait_settled(self, http: HttpReply, timeout: float) -> None:
        """Until the HTTP response has ended, the server dies, or the timeout passes."""
        until = time.monotonic() + timeout
        while not http.done and self._alive() and time.monotonic() < until:
            await self._next_change(until)

    async def collect(self, window: Window, barrier: Pending | None, case: Case, *, http: HttpReply | None,
                      timeout: float, grace: float, progress_extends: float | None = None,
                      most: float | None = None, startup_until: float | None = None) -> None:
        """Wait for the case's answer and the barrier; after the barrier, only a short grace.

        With `http` (a response that settles its frame), the end of that response stands in for the barrier.
        With `progress_extends`, each progress notification keeps the wait going at least that much longer, up to
        `most` seconds in all. With `startup_until`, a server that has answered nothing yet may take until then
        (see `_limit`).
        """
        deadline = window.started + timeout
        ceiling = window.started + (most if most is not None else timeout)
        progress_seen = 0
        grace_until: float | None = None
        while self._alive():
            # Woken by each arrival, or at the deadline or the end of the grace: the checks then end the wait.
            done = satisfied(case.expect, window.exchange)
            now = time.monotonic()
            if http is not None:
                # Over streamable HTTP the end of the POST's response is the end of the frame's answer;
                # the grace is for messages on the session's GET stream.
                if http.done:
                    grace_until = grace_until or now + grace
                    if done or now >= grace_until:
                        return
            else:
                barrier_done = barrier is None or barrier.reply is not None
                if done and case.slow_ok:
                    self.graces.note(case, now - window.started)
                if done and barrier_done and not _watching(case, window.exchange):
                    if barrier is not None and case.expect.reply:
                        self.order.answered(before_fence=barrier.case_answered is not False)
                    return
                # A call may still be working when the barrier is answered (an async server): its grace follows
                # how long its target's calls take (see patience.MAX_CALL_GRACE).
                if barrier_done and not case.patient:
                    grace_until = grace_until or now + self.graces.grace(grace, case, timeout,
                                                                         fenced=self.order.shown)
                    if now >= grace_until:
                        return
            if progress_extends is not None:
                progress = window.exchange.progress_count()
                if progress > progress_seen:
                    progress_seen, deadline = progress, min(max(deadline, now + progress_extends), ceiling)
            limit = deadline if startup_until is None else self._limit(deadline, timeout, startup_until)
            if now >= limit:
                window.exchange.timed_out = True
                return
            await self._next_change(min(limit, grace_until or limit))

    async def collect_shared(self, shared: WindowSet, barrier: Pending | None, *, timeout: float, grace: float
                             ) -> None:
        """Wait until every case and the barrier are answered; anything else unsettles the window and ends the wait.

        Without a barrier (streamable HTTP) each case's own POST settles it: its answer is due by the end of that
        POST's response, as alone.

        Once the barrier is answered, a case still unanswered gets only the grace, unless it is patient (a call,
        which may take long): then it gets --timeout, as alone. Past that an isolated run tells silence from
        slowness, not this window.
        """
        deadline = shared.started + timeout
        grace_until: float | None = None
        while True:
            # As in `collect`: woken by each arrival or at the deadline or the grace's end, the checks end the wait.
            if shared.unsettled:
                return
            if not self._alive():
                shared.unsettle("the server exited")
                return
            now = time.monotonic()
            if barrier is None:
                if shared.posts_done():
                    if not shared.answered():
                        shared.unsettle("a POST ended without its case's answer")
                    return
            elif barrier.reply is not None:
                if shared.answered():
                    return
                if not shared.patient_only():
                    if grace_until is None:
                        fenced = self.order.shown
                        grace_until = now + max((self.graces.grace(grace, w.exchange.case, timeout, fenced=fenced)
                                                 for w in shared.windows), default=grace)
                    if now >= grace_until:
                        shared.unsettle("a case unanswered after the barrier")
                        return
            if now >= deadline:
                shared.unsettle("no answer within the timeout")
                return
            await self._next_change(min(deadline, grace_until or deadline))


def _unkeyed_tag(rid: Any) -> str:
    """The tag of an answer no id routes: no id at all, or id null; "" for an answer with an id."""
    return ID_MISSING if rid is ABSENT else ID_NULL if rid is None else ""


def _release(waiter: asyncio.Future[None]) -> None:
    """Wake one waiter (unless it is already woken or cancelled)."""
    if not waiter.done():
        waiter.set_result(None)


def _progress_key(incoming: Incoming) -> IdKey | None:
    """The token of a progress notification (None for any other notification, or one without a usable token)."""
    message = incoming.message
    params = message.get("params") if message.get("method") == "notifications/progress" else None
    token = params.get("progressToken") if isinstance(params, dict) else None
    return id_key(token) if isinstance(token, str | int) and not isinstance(token, bool) else None


def case_ids(expect: Expectation) -> frozenset[IdKey]:
    """The ids whose answers belong to the case (its own, or those of its batch)."""
    ids = set()
    if expect.id is not ABSENT and expect.id is not None:
        ids.add(id_key(expect.id))
    ids.update(id_key(i) for i in expect.batch_ids)
    return frozenset(ids)


def _watching(case: Case, exchange: Exchange) -> bool:
    """A request cancelled in flight and not answered yet: its grace is spent watching for an answer anyway."""
    cancel = case.expect.part(CancelCheck)
    if cancel is None or cancel.running is None:
        return False
    return not any(a.id_tag == ID_CURRENT and a.incoming.kind == RESPONSE and a.incoming.id == cancel.request
                   for a in exchange.arrivals)


def satisfied(expect: Expectation, exchange: Exchange) -> bool:
    """True once every reply the case is due has arrived."""
    if not expect.reply:
        return True
    responses = [a for a in exchange.arrivals if a.incoming.kind == RESPONSE]
    if expect.batch_ids and expect.well_formed:
        answered = {id_key(a.incoming.id) for a in responses if a.id_tag == ID_CURRENT}
        return all(id_key(i) in answered for i in expect.batch_ids)
    if expect.id_recoverable:
        return any(a.id_tag in (ID_CURRENT, ID_UNKNOWN, ID_NULL)
                   for a in responses)
    return any(a.id_tag != ID_EARLIER for a in responses)

