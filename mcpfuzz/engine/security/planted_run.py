"""A --security case run again from nothing: a newly planted workspace, a fresh server started in it, the case alone.

A security finding is evidence only if it survives this. The run's own workspace holds whatever the run's traffic
left there (files the fuzzer created, hit files, a token written as a name), so a re-check in it could fail again
for the run's sake, not the server's.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import replace

import anyio

from mcpfuzz.engine.alone_answers import run_case
from mcpfuzz.engine.security.canary_watch import CanaryWatch
from mcpfuzz.engine.security.workspace import SecurityWorkspace
from mcpfuzz.engine.session.modes import patient_until, speaking, thorough
from mcpfuzz.engine.session.session import Session, SessionOptions
from mcpfuzz.jsonrpc.exchange import Exchange
from mcpfuzz.jsonrpc.frame import Case
from mcpfuzz.jsonrpc.versions import Era
from mcpfuzz.strategies.payloads.canaries import CanaryLayout
from mcpfuzz.transport.connect import ServerTarget
from mcpfuzz.transport.http_target import HttpTarget
from mcpfuzz.transport.stdio_target import StdioTarget


def plantable(target: ServerTarget) -> bool:
    """True when mcpfuzz starts the server itself (a command, or --launch over HTTP), so that a new workspace can be
    given to it; a server at a URL keeps whatever folder it was started with."""
    return isinstance(target, StdioTarget) or (isinstance(target, HttpTarget) and bool(target.launch))


async def run_planted(target: ServerTarget, options: SessionOptions, case: Case, saved: CanaryLayout, *,
                      era: Era | None, version: str | None, until: float,
                      judged: Callable[[Exchange, CanaryLayout], None] | None = None) -> Exchange | None:
    """`case` (its frames naming the folders of `saved`) sent alone to a fresh server of `target` (`{workspace}`
    unexpanded) started in a newly planted workspace, with that workspace's hit files told to the exchange; the
    workspace is removed afterwards (`judged`: told the exchange and the new layout before). None when `until`
    (time.monotonic()) came before the case was judged.

    Raises what opening a Session and `run_case` raise (ServerStartError, HarnessError, TransportError).
    """
    # One case on a process of its own: no standby beside it, and the run's frame log is not overwritten.
    options = replace(options, frame_log=None, standby=False)
    workspace = SecurityWorkspace.create()
    try:
        moved = workspace.relocate(case, saved)
        exchange: Exchange | None = None
        with anyio.move_on_after(max(0.0, until - time.monotonic())):
            async with Session(workspace.place(target), options) as session:
                with speaking(session, era, version), thorough(session), patient_until(session, until):
                    exchange = await run_case(session, moved)
        if exchange is None or exchange.cut_short:
            return None
        CanaryWatch(workspace.layout.hits, workspace.folder).look(exchange)
        if judged is not None:
            judged(exchange, workspace.layout)
        return exchange
    finally:
        workspace.remove()
