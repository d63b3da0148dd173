"""A call sent between observations of the server's state (`StateCheck`), so the semantic oracles can compare them."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import anyio

from mcpfuzz.engine.session.session import HarnessError, Session
from mcpfuzz.jsonrpc.exchange import Exchange
from mcpfuzz.jsonrpc.frame import Case
from mcpfuzz.jsonrpc.oracle_ids import OracleId
from mcpfuzz.jsonrpc.parts.state import StateCheck
from mcpfuzz.transport.errors import TransportError

# Times a call whose observation changed is sent again, each judged the same way: a value that changes by itself
# (a clock to the second) may change during one call by chance, not during three in a row.
RESENDS = 2
# The longest idle wait of the control that tells a volatile observation from one the call changed (seconds).
IDLE_CONTROL_MAX = 15.0


async def run_observed(session: Session, case: Case, *, timeout: float | None = None) -> Exchange:
    """The case (with a `StateCheck`) sent after two observations of the state and followed by one; where an
    observation changed, the case is sent again RESENDS times, each between two more observations, while the change
    repeats (a clock that ticked during one call does not tick with each). The observations are recorded on the
    exchange's expectation.

    A saved case (`fresh`: a replay, a verification) runs on a fresh server: its setup (the handshake and the
    sequence before the call) goes first, then the observations, so they see the state the call saw.
    """
    state = case.expect.part(StateCheck)
    assert state is not None
    sent = case
    if case.fresh:
        await session.restart()
        await session.send_setup(case.setup)
        sent = replace(case, fresh=False, setup=(), history=(*case.history, *case.setup))
    else:
        await session.ensure_ready()
    process = session.process
    before = await _observe(session, state)
    again = await _observe(session, state)
    exchange = await (session.run_case_on_current(sent, timeout=timeout) if case.fresh
                      else session.run_case(sent, timeout=timeout))
    # A new process (the server restarted before the case) has a state of its own: nothing to compare.
    alive = exchange.crash is None and session.alive and session.process == process
    after = await _observe(session, state) if alive else (None,) * len(state.observe)
    observed = replace(state, before=before, again=again, after=after)
    while alive and len(observed.resent) < RESENDS and observed.changed() and \
            state.judge is not OracleId.USE_AFTER_DELETE and (observed.confirmed() or not observed.resent):
        ahead = await _observe(session, state)
        resent = await session.run_case_on_current(replace(sent, setup=(), history=()), timeout=timeout)
        alive = resent.crash is None and session.alive and session.process == process
        if alive:
            observed = replace(observed, resent=(*observed.resent, (ahead, await _observe(session, state))))
    if alive and observed.confirmed():
        observed = await _idle_control(session, state, observed, exchange.waited)
    if case.fresh:
        session.ready = False  # the next case starts on a process of its own, as after any fresh case
    exchange.case = replace(case, expect=case.expect.with_part(observed))
    return exchange


async def _idle_control(session: Session, state: StateCheck, observed: StateCheck, took: float) -> StateCheck:
    """Observe twice with no call between, as far apart as the call took: an observation that changes over that
    time by itself (a clock, when the call is a long one) is volatile, recorded as a second observation before the
    call that differs from the first, so no oracle counts it."""
    first = await _observe(session, state)
    await anyio.sleep(min(max(took, 0.0), IDLE_CONTROL_MAX))
    second = await _observe(session, state)
    moving = {index for index, (one, two) in enumerate(zip(first, second, strict=False)) if one != two}
    if not moving:
        return observed
    again = tuple((second[index] if second[index] != observed.before[index] else first[index])
                  if index in moving else value for index, value in enumerate(observed.again))
    return replace(observed, again=again)


async def _observe(session: Session, state: StateCheck) -> tuple[Any, ...]:
    """Each observing request's result, one at a time (None where it got none)."""
    results: list[Any] = []
    for method, params in state.observe:
        try:
            reply = await session.call(method, params)
        except (HarnessError, TransportError):
            results.append(None)
            continue
        results.append(reply.message.get("result") if reply.is_result else None)
    return tuple(results)
