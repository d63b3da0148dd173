"""How long a case is waited for, and what silence means.

The policy, in the order a case meets it:

- **Timeout.** Every case is waited for up to --timeout (a target's own timeout in the config file replaces it),
  from the moment it went out. A process that has answered nothing yet may take longer: up to --startup-timeout from
  its spawn, or about its measured start once starts have been measured (`startup_deadline`).
- **Grace.** On an ordered stream a barrier (the era's cheapest request) follows the case; once the barrier is
  answered, a case still unanswered gets only the grace (--grace), longer for a call: twice the slowest answered
  call of its target, or, for a frame that may run a call, of any target, up to MAX_CALL_GRACE (`Graces`). Once
  the server has been seen answering in order, and never behind a fence, the barrier's answer settles a malformed
  frame at once (the fence: order.py); a valid request keeps its grace. Over
  streamable HTTP the end of the case's own response stands in for the barrier. A request cancelled in flight gets
  long enough to be seen answered anyway, clearly after the probe.
- **Call timeout.** A valid call is its own proof of life: it goes out with no barrier and, unanswered at
  --timeout, a liveness request asks whether the server still answers. A server that answers it (alive), or whose
  process runs but answers nothing (busy: its one thread may be working on this very call), gets --call-timeout for
  the call (a longer target timeout wins); each progress notification moves that limit on, up to twice it. A
  patient call that goes out with its barrier (the client phase's: the server asks mcpfuzz for input before it
  answers) gets the same. A phase's deadline (`until`) cuts the wait short (`exchange.cut_short`, no verdict on
  silence), never past it.
- **Wedge.** A busy call whose target has answered before gets a fair wait instead (`AnswerTimes.bound`: many times
  its slowest answer), which may run past its phase's deadline to the run's own (`wedge_until`). Silent at its end,
  a fresh request decides: unanswered too while the process runs, the server is stuck (`exchange.wedged`, with the
  share of a core it burnt as evidence); answered, the call is slow, not stuck, and gets all of --call-timeout.
- **Cancel.** A call still working when the wait ends (progress seen, or its phase over) on a server that answers is
  sent notifications/cancelled; a server that answered nothing keeps its verdict: stuck.
- **Silence.** A barrier left unanswered (or a write that failed) means the server is stuck or deaf: it is killed,
  and the next case starts on a fresh process, so one hang is one finding.
"""

from __future__ import annotations

import contextlib
import time
from typing import TYPE_CHECKING, Any

from mcpfuzz.engine.session.wedge import AnswerTimes, CpuSample, times_its_target
from mcpfuzz.jsonrpc.exchange import ID_CURRENT, Exchange
from mcpfuzz.jsonrpc.frame import Case
from mcpfuzz.jsonrpc.http_reply import HttpReply
from mcpfuzz.jsonrpc.parts.cancel import CancelCheck
from mcpfuzz.jsonrpc.parts.leniency import Lenient
from mcpfuzz.oracles.cancellation import CLEAR_GAP
from mcpfuzz.transport.errors import TransportError

if TYPE_CHECKING:
    from mcpfuzz.engine.session.collector import Pending, Window
    from mcpfuzz.engine.session.link import Link

# After the barrier is answered, a case still unanswered gets the grace; on a server whose calls take a while and
# that answers the barrier meanwhile (an async one), a call may be answered that late too. So the grace of a call
# grows to twice the slowest answered call of its target (a lone-surrogate call, which goes out with a barrier; past
# the case's timeout the session's call limit takes over), and that of a frame naming a call method and due an
# answer to its id, to twice the slowest call of any target, up to this much. Silence costs that much, no more:
# a server that refuses such frames silently (as some SDKs do a lone surrogate) is not waited on for --call-timeout.
MAX_CALL_GRACE = 2.0
CALL_METHODS = (b'"tools/call"', b'"resources/read"', b'"prompts/get"', b'"completion/complete"')
# A measured start may take this many times its median before the case's own time counts.
STARTUP_MARGIN = 2.0
# How long a liveness request after a silent timeout is waited for (at most --timeout).
LATE_BARRIER_WAIT = 1.0


def waits_for_own_answer(case: Case) -> bool:
    """A valid request waited for patiently: its own answer proves the server alive, so it needs no barrier."""
    return bool(case.patient and case.expect.well_formed and case.expect.reply)


def waits_as_a_call(case: Case, lean: bool) -> bool:
    """A call of a target, past --timeout, gets the call timeout: a valid one (sent lean, or patient with its
    barrier) or a lenient one."""
    return case.slow_ok and (lean or case.patient or case.expect.has(Lenient))


def may_run_a_call(case: Case) -> bool:
    """True for a frame due an answer to its readable id that names a method which runs the server's own code."""
    expect = case.expect
    return expect.reply and expect.id_recoverable and any(method in case.data for method in CALL_METHODS)


def startup_deadline(spawned_at: float, startup_timeout: float, median: float | None) -> float:
    """The latest a new process' first answer may come: --startup-timeout from its spawn, or, once starts have been
    measured, about that long (a fresh case's own answer must not ride on the whole --startup-timeout: a tool slower
    than --call-timeout would never be a hang on a fresh server, so no such finding would reproduce)."""
    allowance = startup_timeout
    if median is not None:
        allowance = min(allowance, STARTUP_MARGIN * median + 1.0)
    return spawned_at + allowance


class Graces:
    """The grace after the barrier, per case: each target's slowest answered call makes its calls' grace longer."""

    def __init__(self) -> None:
        # Seconds the slowest answered call of each target took (see MAX_CALL_GRACE), bounded by the targets.
        self.slowest_calls: dict[str, float] = {}

    def note(self, case: Case, seconds: float) -> None:
        """The case, a call that may be slow, was answered after `seconds`."""
        if seconds > self.slowest_calls.get(case.target, 0.0):
            self.slowest_calls[case.target] = seconds

    def grace(self, grace: float, case: Case, timeout: float, *, fenced: bool = False) -> float:
        """The grace after the barrier: longer for a call, or a frame that may run one (see MAX_CALL_GRACE); none
        for a malformed frame once the barrier's answer is a fence (`fenced`: the server answers in order, see
        order.py). A valid request keeps its grace: its handler may run beside the barrier even on such a server
        (an async one's), and its silence would be a critical no-hang."""
        cancel = case.expect.part(CancelCheck)
        if cancel is not None and cancel.running is not None:
            # A request cancelled in flight: long enough to see it answered anyway, clearly after the probe.
            return max(grace, min(2 * max(CLEAR_GAP, cancel.latency), timeout))
        if case.slow_ok:
            return max(grace, min(2 * self.slowest_calls.get(case.target, 0.0), timeout))
        if not may_run_a_call(case):
            return 0.0 if fenced and not case.expect.well_formed else grace
        if not self.slowest_calls:
            return grace
        return max(grace, min(2 * max(self.slowest_calls.values()), MAX_CALL_GRACE))


class Patience:
    """A session's waiting for one case past its timeout: the call timeout, fair waits, wedges and cancels."""

    def __init__(self) -> None:
        # A call phase's deadline (monotonic): a slow call is waited for until then at most, so one slow tool
        # cannot eat the phases after it (None: the whole --call-timeout).
        self.until: float | None = None
        # The latest moment a busy call's fair wait (its target's answer times) may run to, past `until`: a
        # wedge is judged whatever share of the run a phase had left (the run's own deadline still holds).
        self.wedge_until: float | None = None
        self.answer_times = AnswerTimes()  # each target's slowest answer: how long its next call may fairly take

    async def wait_for(self, link: Link, window: Window, barrier: Pending | None, response: HttpReply | None, *,
                       timeout: float | None, lean: bool, ordered: bool) -> Pending | None:
        """Collect the case's answers, waiting as the policy says; returns the liveness request that settled it
        (its barrier, or a request sent later to ask whether the server still answers), None when none went out.

        `lean`: a valid call sent with no barrier; `ordered`: answers come on one ordered stream; `response`: the
        case's own HTTP response, whose end settles it.
        """
        options, exchange, case = link.options, window.exchange, window.exchange.case
        await link.collector.collect(window, barrier, case, http=response, timeout=timeout or options.timeout,
                                     grace=options.grace, startup_until=link.startup_until())
        late = lean or not ordered
        if late and exchange.timed_out and link.alive and not exchange.write_error:
            barrier = await self.late_barrier(link)
        alive = barrier is not None and barrier.reply is not None and link.alive and not exchange.write_error
        # The process runs but answered the liveness request no more than the call: a server whose one thread
        # (or event loop) is busy with this very call. Slow is not stuck either: it gets the same limit, and only
        # silence to its end is a hang. Over streamable HTTP the liveness request went on a POST of its own.
        busy = not alive and barrier is not None and link.alive and not exchange.write_error
        # A lenient call (a lone surrogate, which a parser may refuse) went out with its barrier; once that is
        # answered, its own answer may still be on the way: it gets the same limit as a valid call. So does a
        # patient call sent with its barrier for another oracle's sake (mcpfuzz answered the server's request first).
        if waits_as_a_call(case, lean) and exchange.timed_out and (alive or busy):
            # Slow is not dropped: a valid call to a server that answers pings gets the call limit,
            # and each progress notification moves that limit on.
            exchange.timed_out, exchange.extended, exchange.blocked = False, True, busy
            whole = max(options.call_timeout, timeout or 0.0)  # a target's own timeout may be longer
            bound = self.answer_times.bound(case.target, options.timeout) if busy else None
            shortened = bound is not None and bound < whole
            # Busy far longer than this target ever took: a fair wait ends sooner (progress still extends).
            await self._wait_longer(link, window, barrier if busy else None, response,
                                    bound if bound is not None and shortened else whole, 2 * whole,
                                    fair_wait=shortened)
            if shortened and busy and exchange.timed_out and not exchange.cut_short and link.alive:
                # Past the fair wait: a fresh request decides (silence to the end of --call-timeout needs no
                # proof: an answer after it comes too late). A server that answers again, the liveness request,
                # the fresh one or the call, is slow, not stuck: the call gets all of --call-timeout after all.
                if not exchange.progress_count() and not (barrier is not None and barrier.reply is not None):
                    fresh = await self._check_wedged(link, exchange)
                    barrier = fresh if fresh is not None and fresh.reply is not None else barrier
                answered = (barrier is not None and barrier.reply is not None) \
                    or any(a.id_tag == ID_CURRENT for a in exchange.responses())
                if answered and not exchange.wedged and link.alive:
                    exchange.timed_out = False
                    await self._wait_longer(link, window, barrier, response, whole, 2 * whole)
            answering = barrier is not None and barrier.reply is not None
            if exchange.timed_out and (exchange.progress_count() or exchange.cut_short) and link.alive \
                    and answering:
                # Still working at the limit (or the phase is over): not dropped. Tell the server to stop.
                # A server that answered nothing, not even the liveness request, keeps its verdict: stuck.
                await _cancel(link, case.expect.id, "still working when mcpfuzz stopped waiting")
        return barrier

    def answered(self, exchange: Exchange) -> None:
        """The case is over: its own answer, if any, says how long its target's calls take."""
        own = [a.at for a in exchange.responses() if a.id_tag == ID_CURRENT]
        if own and times_its_target(exchange.case) and exchange.crash is None:
            self.answer_times.note(exchange.case.target, own[0])

    async def _wait_longer(self, link: Link, window: Window, barrier: Pending | None, response: HttpReply | None,
                           limit: float, most: float, *, fair_wait: bool = False) -> None:
        """A call that outlived --timeout waited for on to `limit` from its start (each progress notification moving
        that on, up to `most`), never past the end of its phase (`exchange.cut_short` then); but a busy call's fair
        wait (`fair_wait`: bounded by its target's answer times) may run past it, to the run's own deadline, so a
        wedge is judged whatever share of the run its phase had left."""
        exchange = window.exchange
        if self.until is not None:
            until = self.until
            if fair_wait and self.wedge_until is not None:
                until = max(until, min(window.started + limit, self.wedge_until))
            room = max(0.0, until - window.started)
            exchange.cut_short = room < limit
            limit, most = min(limit, room), min(most, room)
        await link.collector.collect(window, barrier, exchange.case, http=response, timeout=limit,
                                     grace=link.options.grace, progress_extends=link.options.timeout, most=most)

    async def _check_wedged(self, link: Link, exchange: Exchange) -> Pending | None:
        """A fresh request after a busy call's fair wait (over HTTP on a POST of its own): unanswered too while the
        process runs, the server is stuck (`exchange.wedged`), with the share of a core it burnt meanwhile as
        evidence. Returns the fresh request (None when it could not be sent)."""
        started, before = time.monotonic(), CpuSample.take(link.server.pid)
        fresh = await self.late_barrier(link, link.options.timeout)
        if fresh is None or fresh.reply is not None or not link.alive \
                or any(a.id_tag == ID_CURRENT for a in exchange.responses()):
            return fresh
        exchange.wedged = True
        after = CpuSample.take(link.server.pid)
        exchange.cpu_share = after.share_since(before, time.monotonic() - started) if after is not None else None
        return fresh

    @staticmethod
    async def late_barrier(link: Link, wait: float = LATE_BARRIER_WAIT) -> Pending | None:
        """After a silent timeout (or an answer, in thorough mode): does the server still answer anything?"""
        try:
            barrier = await link.send_barrier()
        except TransportError:
            return None
        if barrier is not None:
            await link.collector.wait_reply(barrier, min(link.options.timeout, wait))
        return barrier


async def _cancel(link: Link, request_id: Any, reason: str) -> None:
    """notifications/cancelled for a request of ours (MCP: the receiver should stop work on it)."""
    with contextlib.suppress(TransportError):
        await link.notify("notifications/cancelled", {"requestId": request_id, "reason": reason})
