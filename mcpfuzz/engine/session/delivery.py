"""How a case and a window of cases go out, and what settles them, one kind per transport's delivery (DeliveryKind).

- `JoinedStream` (stdio, in-memory): a case and its barrier in one write; the barrier's answer settles the case.
  Several cases pipeline in one write with one barrier after them.
- `SharedStream` (legacy HTTP+SSE): a case, then its barrier, each a POST of its own; answers come in order on the
  one SSE stream, so the barrier's answer settles the case. Nothing pipelines (no one write to keep in order).
- `ResponsePerRequest` (streamable HTTP): a case is a POST (or one per line) whose response, JSON or a stream of its
  own, settles it: no barrier. A window's cases go out as POSTs of their own, several in flight at once.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

import anyio

from mcpfuzz.jsonrpc.exchange import ID_CURRENT, Exchange
from mcpfuzz.jsonrpc.frame import Case, Posting
from mcpfuzz.jsonrpc.handshake_order import initialize_id
from mcpfuzz.jsonrpc.http_reply import HttpReply
from mcpfuzz.jsonrpc.parts.cancel import CancelCheck
from mcpfuzz.transport.base import DeliveryKind
from mcpfuzz.transport.errors import TransportError

if TYPE_CHECKING:
    from mcpfuzz.engine.session.collector import Pending, Window, WindowSet
    from mcpfuzz.engine.session.link import Link

# Over streamable HTTP a window's cases go out as POSTs of their own, at most this many in flight at once.
POSTS_IN_FLIGHT = 8
# Statuses that refuse a request for the server's load, not for what it holds: the case is run again alone.
LOAD_REFUSALS = frozenset({429, 503})
# After a load refusal (or a POST that failed while others were in flight), cases go one at a time this long.
ALONE_AFTER_REFUSAL = 30.0


class Delivery:
    """One transport's way of sending cases and knowing them settled (the base: an ordered stream of answers)."""

    ordered = True  # answers arrive in order on one stream: a barrier request settles every frame before it
    by_request = False  # each answer comes on the response to its own request (the collector routes by POST)

    def pipelines(self) -> bool:
        """True when several cases may be in flight at once."""
        return False

    def may_share(self, case: Case) -> bool:
        """True when the case may share a window with others."""
        return case.pipelinable

    def response(self, reply: HttpReply | None) -> HttpReply | None:
        """The response whose end settles a frame sent with this reply (None: a barrier settles it)."""
        return None

    async def send_case(self, link: Link, case: Case, exchange: Exchange, *, lean: bool) -> Pending | None:
        """Send the case (`lean`: a valid call that goes out with no barrier); returns its barrier, if one went out."""
        exchange.http = await link.send_frame(case.data, case.http_headers)
        if link.alive and not lean:
            return await link.send_barrier()
        return None

    async def send_window(self, link: Link, shared: WindowSet) -> Pending | None:
        """Send a window's cases (all at once, then one barrier); returns the barrier."""
        frame, barrier = link.barrier_frame()
        try:
            await link.send_frames((*(w.exchange.case.data for w in shared.windows), frame))
        except TransportError as error:
            shared.unsettle(f"the write failed: {error}")
        return barrier

    async def window_done(self, link: Link) -> None:
        """After a window was collected: what it taught about the server's load."""


class SharedStream(Delivery):
    """Legacy HTTP+SSE: every frame its own POST, every answer on the one stream, in order."""


class JoinedStream(Delivery):
    """Stdio and in-memory servers: one pipe in, one ordered stream out; a frame and its barrier in one write."""

    def pipelines(self) -> bool:
        """Consecutive cases share one write and one barrier."""
        return True

    async def send_case(self, link: Link, case: Case, exchange: Exchange, *, lean: bool) -> Pending | None:
        """The frame and its barrier in one write, in that order: one wake-up of the server per case."""
        if lean:
            return await super().send_case(link, case, exchange, lean=lean)
        frame, barrier = link.barrier_frame()
        pause = cancel.pause if (cancel := case.expect.part(CancelCheck)) is not None else 0.0
        if pause > 0:  # work in flight: the request first, the rest once it has run a while
            first, _, rest = case.data.partition(b"\n")
            await link.send_frames((first,))
            await anyio.sleep(pause)
            await link.send_frames((rest, frame))
        else:
            await link.send_frames((case.data, frame))
        return barrier


class ResponsePerRequest(Delivery):
    """Streamable HTTP: each frame a POST whose own response carries its answers and, by its end, settles it.

    A server that refuses a request for load (429, 503) while others are in flight gets cases one at a time for a
    while (`ALONE_AFTER_REFUSAL`); the user hears of it once.
    """

    ordered = False
    by_request = True

    def __init__(self) -> None:
        self._alone_until = 0.0  # monotonic: no window before then (the server refused a request for load)
        self._refusal_noted = False
        self._refusal = ""  # what the latest window was refused with

    def pipelines(self) -> bool:
        """Cases go out as POSTs of their own, several in flight, unless the server lately refused one for load."""
        return time.monotonic() >= self._alone_until

    def may_share(self, case: Case) -> bool:
        """Told by its own POST (`Case.shares_posts`)."""
        return case.shares_posts

    def response(self, reply: HttpReply | None) -> HttpReply | None:
        """The POST's own response."""
        return reply

    async def send_case(self, link: Link, case: Case, exchange: Exchange, *, lean: bool) -> Pending | None:
        """One POST, or one per line of the case (`case.posts`); no barrier."""
        if case.posts is Posting.ONE:
            exchange.http = await link.send_frame(case.data, case.http_headers)
        else:
            exchange.posts = await self.send_posts(link, case)
            exchange.http = exchange.posts[-1] if exchange.posts else None
        return None

    async def send_posts(self, link: Link, case: Case) -> list[HttpReply]:
        """Each line of a case its own POST (`case.posts`: in order, or all at once); returns once every response
        has ended, the server died, or --timeout passed, so answers on any of them are in the case's window."""
        lines = case.data.split(b"\n")
        replies: list[HttpReply | None] = [None] * len(lines)
        failures: list[TransportError] = []

        async def post(index: int) -> None:
            try:
                replies[index] = await link.server.send(lines[index])
            except TransportError as error:  # raised below, once, as a single send would raise it
                failures.append(error)

        async with link.write_lock:
            if case.posts is Posting.AT_ONCE:
                async with anyio.create_task_group() as group:
                    for index in range(len(lines)):
                        group.start_soon(post, index)
            else:
                for index in range(len(lines)):
                    await post(index)  # returns once its response headers are in: the server has the request
                    if failures:
                        break
        link.log_sent(tuple(lines))
        if failures:
            raise failures[0]
        sent = [reply for reply in replies if reply is not None]
        until = time.monotonic() + link.options.timeout
        for reply in sent:
            await link.collector.wait_settled(reply, max(0.0, until - time.monotonic()))
        return sent

    async def send_window(self, link: Link, shared: WindowSet) -> Pending | None:
        """Each case of a window its own POST, at most POSTS_IN_FLIGHT at once, each waited for to the end of its
        response; returns (no barrier) once all have ended, or --timeout has passed.

        A load refusal (429, 503) or a failed POST unsettles the window, and is kept for `window_done`: under load
        a server may refuse what it would answer alone, and the case must be judged alone. No case is sent once
        the window is unsettled. The frames are logged in case order, whatever order the POSTs went out in.
        """
        posts: dict[int, HttpReply] = {}
        starting = 0  # POSTs whose request is going out (their response headers not in yet)
        self._refusal = ""
        collector = link.collector

        async def post(index: int, window: Window) -> None:
            nonlocal starting
            try:
                reply = await link.server.send(window.exchange.case.data)
            except TransportError as error:
                shared.unsettle(f"a POST failed: {error}")
                reply = None
            starting -= 1
            if reply is None:
                shared.unsettle("a frame went out with no POST of its own")
            else:
                posts[index] = window.exchange.http = reply
                collector.claim(shared, window, reply)
            collector.wake()

        def in_flight() -> int:
            count = starting
            for reply in posts.values():
                if not reply.done:
                    count += 1
                elif reply.error or reply.status in LOAD_REFUSALS:
                    self._refusal = self._refusal or reply.describe()
                    shared.unsettle(f"refused while other POSTs were in flight: {reply.describe()}")
                elif reply.status is not None and reply.status >= 500:
                    # Alone it may be answered: a server error under concurrency is not this case's to own.
                    shared.unsettle(f"a server error while other POSTs were in flight: {reply.describe()}")
            return count

        # One task sends each POST (`send` returns once its response headers are in); this one task waits for the
        # responses to end, so a message or an ended response wakes one waiter, not one per POST. No write lock:
        # POSTs need no order, and the answer to a server's request must not wait for the window.
        with anyio.move_on_after(link.options.timeout):
            async with anyio.create_task_group() as group:
                for index, window in enumerate(shared.windows):
                    while in_flight() >= POSTS_IN_FLIGHT and link.alive:
                        await collector.changed()
                    if shared.unsettled or not link.alive:
                        break
                    starting += 1
                    group.start_soon(post, index, window)
                # Every POST to its end even once the window is unsettled: the cases run alone next find the
                # server idle.
                while in_flight() and link.alive:
                    await collector.changed()
        link.log_sent(tuple(w.exchange.case.data for i, w in enumerate(shared.windows) if i in posts))
        return None

    async def window_done(self, link: Link) -> None:
        """A load refusal: cases go one at a time for a while (said once per session). A server that died did not
        refuse for load (its POSTs fail just before its exit is seen)."""
        refusal, self._refusal = self._refusal, ""
        if not refusal or await link.server.wait_exit(link.options.grace):
            return
        self._alone_until = time.monotonic() + ALONE_AFTER_REFUSAL
        if not self._refusal_noted:
            self._refusal_noted = link.notice(
                f"the server refused a request while others were in flight ({refusal}): those cases were run again "
                f"one at a time, and cases go one at a time for {ALONE_AFTER_REFUSAL:g}s after each such refusal")


async def send_unjudged(link: Link, delivery: Delivery, data: bytes) -> None:
    """A setup frame of a case: sent, then a barrier (or, over streamable HTTP, its own response to its end), replies
    dropped. An `initialize` is settled by its own answer instead: the SDK clients send notifications/initialized
    next, never a request between them."""
    rid = initialize_id(data)
    own = link.collector.expect_reply(rid) if rid is not None else None
    timeout = link.options.timeout
    try:
        response = delivery.response(await link.send_frame(data))
        if response is not None:
            await link.collector.wait_settled(response, timeout)
            return
        if own is not None:
            await link.collector.wait_reply(own, timeout, startup_until=link.startup_until())
            if own.reply is not None or not link.alive:
                return
        barrier = await link.send_barrier()
        if barrier is not None:
            await link.collector.wait_reply(barrier, timeout, startup_until=link.startup_until())
    except TransportError:
        pass


async def send_answered_then(link: Link, exchange: Exchange) -> bool:
    """The frames a client sends once the case's request got a result (`Case.answered_then`), in its window;
    True when they went out."""
    case = exchange.case
    if not case.answered_then or not link.alive or not any(
            a.id_tag == ID_CURRENT and a.incoming.is_result for a in exchange.arrivals):
        return False
    try:
        for frame in case.answered_then:
            await link.send_frame(frame)
    except TransportError:
        return False
    return True


DELIVERIES: dict[DeliveryKind, type[Delivery]] = {
    DeliveryKind.JOINED_STREAM: JoinedStream,
    DeliveryKind.SHARED_STREAM: SharedStream,
    DeliveryKind.RESPONSE_PER_REQUEST: ResponsePerRequest,
}


def delivery_for(kind: DeliveryKind) -> Delivery:
    """A fresh delivery (with its own state) for a connection of that kind."""
    return DELIVERIES[kind]()
