"""A pipelined window of read-only calls where one tool writes: the write is charged to the call that made it only.

The server (tests/servers/blind_tools_server.py) serves one request at a time and no record of the hook names its
request, so which call wrote is known only by when: calls still in flight then share the doubt, no finding is made
of an ambiguous write, and the window's calls are run alone instead.
"""

from __future__ import annotations

import sys
from functools import partial
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import anyio
import pytest

from mcpfuzz.engine.coverage.launch import PythonServer
from mcpfuzz.engine.judge import FindingSet
from mcpfuzz.engine.observe.places import Places
from mcpfuzz.engine.observe.records import RecordFile
from mcpfuzz.engine.observe.setup import ObserveSetup
from mcpfuzz.engine.observe.start import judge_with, observe_window
from mcpfuzz.engine.observe.watch import ObservationWatch
from mcpfuzz.engine.session.session import Session, SessionOptions
from mcpfuzz.engine.session.windows import Unsettled, run_in_order
from mcpfuzz.jsonrpc import expectation as ex
from mcpfuzz.jsonrpc.effects import Op
from mcpfuzz.jsonrpc.encode import dumps, request
from mcpfuzz.jsonrpc.exchange import Exchange
from mcpfuzz.jsonrpc.frame import Case
from mcpfuzz.jsonrpc.oracle_ids import OracleId
from mcpfuzz.transport.stdio_target import StdioTarget
from tests.conftest import SERVERS_DIR

pytestmark = pytest.mark.process

SERVER = (sys.executable, str(SERVERS_DIR / "blind_tools_server.py"))
READ_ONLY = {"tool/lookup": {"readOnlyHint": True}, "tool/peek": {"readOnlyHint": True}}
ORACLE = OracleId.READ_ONLY_TRUTHFUL.value
# Read-only calls in one window: only `lookup` writes (its cache file), and only with --bug cache.
TOOLS = ("peek", "peek", "lookup", "peek", "peek")


def read_only_call(tool: str, rid: int) -> Case:
    """A call of a read-only tool, allowed to share a window."""
    frame = dumps(request("tools/call", {"name": tool, "arguments": {"key": f"key{rid}"}}, rid))
    return Case(tool, "tool", f"{tool} key{rid}", frame, ex.result(rid, "tools/call"), slow_ok=True, shared_ok=True)


async def window_of_calls(root: Path, bugs: tuple[str, ...]) -> tuple[list[tuple[Exchange, list[Any]]], Unsettled]:
    """The calls through `run_in_order` on a hooked server, each judged as a run judges it: (exchange, failures)."""
    setup = ObserveSetup.create(PythonServer(sys.executable, (str(SERVERS_DIR),)), env={})
    places = Places.create([str(root)], planted=[], own=[str(setup.folder)], code=list(setup.code))
    watch = ObservationWatch(RecordFile(str(setup.log)), places, hints_of=lambda label: READ_ONLY.get(label, {}))
    options = SessionOptions(timeout=10.0, grace=0.05, env=setup.env)
    judged: list[tuple[Exchange, list[Any]]] = []
    tally = Unsettled()
    try:
        async with Session(StdioTarget((*SERVER, "--root", str(root), *bugs)), options) as session:
            context = SimpleNamespace(observation=watch, session=session, config=SimpleNamespace(oracles=(ORACLE,)))
            session.window_observer = partial(observe_window, context)
            cases = [read_only_call(tool, 100 + index) for index, tool in enumerate(TOOLS)]
            async for exchange in run_in_order(session, cases, unsettled=tally):
                judge_with(context, exchange)  # type: ignore[arg-type]
                judged.append((exchange, FindingSet().judge(exchange, (ORACLE,))))
    finally:
        setup.remove()
    return judged, tally


def test_only_the_call_that_wrote_is_charged(tmp_path: Path) -> None:
    judged, tally = anyio.run(window_of_calls, tmp_path, ("--bug", "cache"))
    assert [exchange.case.id for exchange, _ in judged] == list(TOOLS)
    assert tally.count == 1  # the window saw a write it could not tell to one call: its calls ran again alone
    failing = [exchange.case.id for exchange, failures in judged if failures]
    assert failing == ["lookup"]
    [(lookup, [finding])] = [(exchange, failures) for exchange, failures in judged if exchange.case.id == "lookup"]
    assert "annotated readOnlyHint: true, but the call changed a file: write(" in finding.message
    assert lookup.observation is not None
    writes = [effect for effect in lookup.observation.effects if effect.op is Op.WRITE]
    assert writes and not any(effect.ambiguous for effect in writes)
    assert writes[0].path == str(tmp_path.resolve() / ".lookup-cache")
    for exchange, _ in judged:
        if exchange.case.id == "peek":
            assert exchange.observation is not None
            assert not [effect for effect in exchange.observation.effects if effect.op is Op.WRITE]


def test_the_honest_twin_keeps_its_window_and_has_no_finding(tmp_path: Path) -> None:
    judged, tally = anyio.run(window_of_calls, tmp_path, ())
    assert tally.count == 0
    assert len({exchange.started for exchange, _ in judged}) == 1  # one window: in flight together
    assert [failures for _, failures in judged] == [[]] * len(TOOLS)
    assert all(exchange.observation is not None for exchange, _ in judged)
