"""Cases whose oracle compares answers: a concurrent case run between two rounds of its requests sent alone, and
a list on a fresh connection after the same list on the connection in use."""

from __future__ import annotations

import contextlib
import json
from dataclasses import replace
from typing import Any

from mcpfuzz.engine.session.observed_state import run_observed
from mcpfuzz.engine.session.session import HarnessError, Session
from mcpfuzz.jsonrpc.exchange import Exchange
from mcpfuzz.jsonrpc.frame import Case
from mcpfuzz.jsonrpc.ids import ABSENT
from mcpfuzz.jsonrpc.parts.concurrency import AloneAnswers, ConcurrencyCheck
from mcpfuzz.jsonrpc.parts.identity import IdentityCheck
from mcpfuzz.jsonrpc.parts.observed import ObservedCall
from mcpfuzz.jsonrpc.parts.state import StateCheck
from mcpfuzz.jsonrpc.versions import Era
from mcpfuzz.transport.errors import TransportError


async def run_case(session: Session, case: Case, *, timeout: float | None = None) -> Exchange:
    """`Session.run_case`; a concurrent case of read-only requests (a `ConcurrencyCheck`, not `changes_state`) also
    gets each of its requests' answers alone, one request at a time, before and after the burst, recorded on the
    exchange's expectation.

    Every way a saved case is run again (verification, replay, the corpus, a baseline) goes through here, so
    the answers alone are always fresh: they are what the server answers now, never what it answered once.
    `timeout` replaces --timeout for the case itself (work in flight waits as long as its requests take).
    """
    if case.expect.part(StateCheck) is not None:  # a semantic oracle's call: observed around, afresh each time too
        return await run_observed(session, case)
    if case.expect.part(IdentityCheck) is not None:
        return await _identity_case(session, case)
    check = case.expect.part(ConcurrencyCheck)
    if case.fresh and check is None and case.expect.has(ObservedCall):
        return await _observed_fresh(session, case, timeout)
    if check is None or check.changes_state:  # a request that changes state is not sent more times to compare
        return await session.run_case(case, timeout=timeout)
    await session.ensure_ready()
    lines = case.data.split(b"\n")
    before = await _alone(session, lines)
    exchange = await session.run_case(case, timeout=timeout)
    after = await _alone(session, lines) if exchange.crash is None and session.alive else [None] * len(lines)
    alone = tuple(AloneAnswers(rid, first, second)
                  for (rid, _, _), first, second in zip(check.requests, before, after, strict=False))
    exchange.case = replace(case, expect=case.expect.with_part(replace(check, alone=alone)))
    return exchange


async def _observed_fresh(session: Session, case: Case, timeout: float | None) -> Exchange:
    """A saved case whose side effects a hook sees, on a fresh process that has answered a request before it (its
    setup, or the era's liveness request): what the process does as it starts (settings read, a temporary file made)
    comes before the case, start-up, not the call's."""
    await session.restart()
    await session.send_setup(case.setup)
    if not case.setup:
        with contextlib.suppress(HarnessError, TransportError):
            await session.call(*session.liveness_request())
    exchange = await session.run_case_on_current(
        replace(case, fresh=False, setup=(), history=(*case.history, *case.setup)), timeout=timeout)
    session.ready = False  # the next case starts on a process of its own, as after any fresh case
    return exchange


# A paging client's bound: a list longer than this is compared on what these pages named.
MAX_BASELINE_PAGES = 20


async def _identity_case(session: Session, case: Case) -> Exchange:
    """The case's list, every page, on the connection in use (ready first), then the case on a fresh one; the
    items listed first are recorded on the exchange's expectation, back to back with the fresh answer, so that a
    list changing over time (which the spec allows) is not taken for one varying per connection."""
    check = case.expect.part(IdentityCheck)
    assert check is not None and case.expect.method is not None
    baseline: tuple[Any, ...] | None = None
    try:
        if session.alive and not session.ready and session.era is Era.MODERN:
            # The previous fresh case's process serves on (a 2026-07-28 process keeps no session state): a
            # server/discover makes it the one in use, where a restart would cost a second process per case.
            session.wire.log.clear()
            await session.handshake()
        await session.ensure_ready()
        baseline = await _all_pages(session, case.expect.method, check.list_key)
    except (HarnessError, TransportError):
        pass  # nothing to compare with: the oracle stays silent
    exchange = await session.run_case(case)
    exchange.case = replace(case, expect=case.expect.with_part(replace(check, baseline=baseline)))
    return exchange


async def _all_pages(session: Session, method: str, key: str) -> tuple[Any, ...] | None:
    """Every item of a list method, following nextCursor; None when a page is refused or malformed."""
    items: list[Any] = []
    cursor: Any = None
    for _ in range(MAX_BASELINE_PAGES):
        reply = await session.call(method, {"cursor": cursor} if cursor else {})
        page = reply.message.get("result") if reply.is_result else None
        if not isinstance(page, dict) or not isinstance(page.get(key, []), list):
            return None
        items += page.get(key, [])
        cursor = page.get("nextCursor")
        if not isinstance(cursor, str) or not cursor:
            break
    return tuple(items)


async def _alone(session: Session, lines: list[bytes]) -> list[Any]:
    """Each line's request sent alone (a fresh id, its answer awaited before the next): its result, or None."""
    results: list[Any] = []
    for line in lines:
        try:
            message = json.loads(line)
            reply = await session.call(message["method"], message.get("params", ABSENT))
        except (ValueError, TypeError, KeyError, HarnessError, TransportError):
            results.append(None)  # an edited transcript's line, or a server that did not answer: nothing alone
            continue
        results.append(reply.message.get("result") if reply.is_result else None)
    return results
