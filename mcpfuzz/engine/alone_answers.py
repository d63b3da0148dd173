"""A concurrent case run between two rounds of its requests sent alone, so the oracle can compare answers."""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

from mcpfuzz.engine.session.observed_state import run_observed
from mcpfuzz.engine.session.session import HarnessError, Session
from mcpfuzz.jsonrpc.exchange import Exchange
from mcpfuzz.jsonrpc.expectation import AloneAnswers
from mcpfuzz.jsonrpc.frame import Case
from mcpfuzz.jsonrpc.ids import ABSENT
from mcpfuzz.transport.errors import TransportError


async def run_case(session: Session, case: Case) -> Exchange:
    """`Session.run_case`; a concurrent case (`expect.concurrent`) also gets each of its requests' answers
    alone, one request at a time, before and after the burst, recorded on the exchange's expectation.

    Every way a saved case is run again (verification, replay, the corpus, a baseline) goes through here, so
    the answers alone are always fresh: they are what the server answers now, never what it answered once.
    """
    if case.expect.state is not None:  # a semantic oracle's call: observed around, afresh each time too
        return await run_observed(session, case)
    check = case.expect.concurrent
    if check is None:
        return await session.run_case(case)
    await session.ensure_ready()
    lines = case.data.split(b"\n")
    before = await _alone(session, lines)
    exchange = await session.run_case(case)
    after = await _alone(session, lines) if exchange.crash is None and session.alive else [None] * len(lines)
    alone = tuple(AloneAnswers(rid, first, second)
                  for (rid, _, _), first, second in zip(check.requests, before, after, strict=False))
    exchange.case = replace(case, expect=replace(case.expect, concurrent=replace(check, alone=alone)))
    return exchange


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
