"""The lint phase of `run` starts fresh processes only for a check that can file a finding, and only while the
calls keep their share of the budget: a server that takes long to start is not left with nothing to call."""

from __future__ import annotations

import json
from typing import Any

import anyio
import pytest

from mcpfuzz.engine.config import RunConfig
from mcpfuzz.engine.events import Event, Notice
from mcpfuzz.engine.plan.context import RunContext
from mcpfuzz.engine.plan.protocol_phases import LintPhase, ProbePhase
from mcpfuzz.engine.session.session import Session, SessionOptions
from mcpfuzz.jsonrpc.encode import dumps, error_response, response
from mcpfuzz.jsonrpc.ids import ABSENT
from mcpfuzz.jsonrpc.versions import LATEST_LEGACY, MODERN_VERSIONS
from mcpfuzz.oracles.base import all_oracles
from mcpfuzz.transport.memory import MemoryTarget

pytestmark = pytest.mark.process

MODERN = MODERN_VERSIONS[-1]


class CountingServer:
    """A server of one era (`modern`: server/discover, announcing the latest legacy version as well) that
    counts the requests it gets by method: every `initialize` a modern server gets is a check on a fresh
    process, and a legacy server gets one per handshake."""

    def __init__(self, *, modern: bool) -> None:
        self.modern = modern
        self.methods: list[str] = []

    def __call__(self, frame: bytes) -> bytes | None:
        try:
            message: Any = json.loads(frame)
        except ValueError:
            return dumps(error_response(None, -32700, "parse error"))
        if not isinstance(message, dict):
            return dumps(error_response(None, -32600, "invalid request"))
        method, rid = message.get("method"), message.get("id", ABSENT)
        if rid is ABSENT:
            return None
        self.methods.append(str(method))
        info = {"name": "counting", "version": "1"}
        if method == "initialize":
            return dumps(response(rid, {"protocolVersion": LATEST_LEGACY, "capabilities": {}, "serverInfo": info}))
        if method == "server/discover" and self.modern:
            return dumps(response(rid, {"supportedVersions": [MODERN, LATEST_LEGACY], "capabilities": {},
                                        "ttlMs": 0, "cacheScope": "private", "resultType": "complete",
                                        "_meta": {"io.modelcontextprotocol/serverInfo": info}}))
        if method == "ping":
            return dumps(response(rid, {"resultType": "complete"} if self.modern else {}))
        return dumps(error_response(rid, -32601, "method not found"))


def lint_in_run(server: CountingServer, restart_cost: float | None = None) -> tuple[list[str], list[str]]:
    """The probe and lint phases of a run on `server`: the methods the lint phase sent, and the run's notices.
    `restart_cost`: what a new process is taken to cost (a server that starts slowly)."""
    events: list[Event] = []
    config = RunConfig(command=[], seed=1, budget=60.0, timeout=2.0, grace=0.01, server=MemoryTarget(server),
                       oracles=tuple(all_oracles()))
    context = RunContext.create(config, events.append)
    sent: list[str] = []

    async def main() -> None:
        with anyio.fail_after(60):
            async with Session(MemoryTarget(server), SessionOptions(timeout=2.0, grace=0.01)) as session:
                context.session = session
                await ProbePhase().run(context, session)
                if restart_cost is not None:
                    context.budget.restart_cost = restart_cost
                before = len(server.methods)
                await LintPhase().run(context, session)
                sent.extend(server.methods[before:])

    anyio.run(main)
    return sent, [event.message for event in events if isinstance(event, Notice)]


def test_run_lints_a_legacy_server_without_a_fresh_process() -> None:
    # The request before initialize on a fresh process feeds advice only (SEQ-005 is info, never a finding of
    # run; the lifecycle phase sends its own): in run it would cost two process starts for nothing.
    sent, _ = lint_in_run(CountingServer(modern=False))
    assert "initialize" not in sent, sent
    assert "mcpfuzz/no-such-method" in sent  # the lint phase did run: its unknown-method request


def test_a_modern_server_s_announced_legacy_version_is_checked_on_a_fresh_process_when_it_fits() -> None:
    sent, notices = lint_in_run(CountingServer(modern=True))
    assert sent.count("initialize") == 1, sent
    assert not [note for note in notices if note.startswith("lint:")], notices


def test_the_fresh_process_check_is_left_out_and_said_when_a_start_costs_more_than_the_time_left() -> None:
    sent, notices = lint_in_run(CountingServer(modern=True), restart_cost=1000.0)
    assert "initialize" not in sent, sent
    assert "mcpfuzz/no-such-method" in sent
    said = [note for note in notices if note.startswith("lint:")]
    assert len(said) == 1 and "left out" in said[0] and "raise --budget" in said[0], notices
