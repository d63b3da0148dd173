"""Concurrent clients (oracle `session-isolation`), slow: the real TypeScript SDK as pinned in tests/sdk_servers/ts, and
an answer lost to another client on a stream that stays open, waited for up to --timeout.

The SDK's own stateful pattern (a server and a transport per session), whose `work` tool sends progress and a log
message on each request's stream, gets no finding, and every session the phase opened is closed again. The pattern of
GHSA-345p-7cg4-v4c7 (one server and one stateless transport shared by every client) leaked answers between clients
before 1.26.0; the pinned SDK refuses to reuse the transport (HTTP 500 on every request after the first), so the
phase cannot open its clients, says so, and reports nothing.
"""

from __future__ import annotations

import json
import shutil
import sys
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager

import anyio
import pytest

from mcpfuzz.engine.config import RunConfig
from mcpfuzz.engine.events import Event, Notice, RunFinished
from mcpfuzz.engine.runner import run
from mcpfuzz.oracles.base import all_oracles
from mcpfuzz.transport.base import TransportKind
from mcpfuzz.transport.http_target import HttpTarget
from tests.http_servers import ROOT, SDK_SERVERS, free_port, launch

pytestmark = pytest.mark.slow

TS = SDK_SERVERS / "ts"


@contextmanager
def ts_server(*args: str) -> Iterator[str]:
    node = shutil.which("node")
    if node is None or not (TS / "node_modules" / "@modelcontextprotocol" / "sdk").is_dir():
        pytest.skip("no node or no TypeScript SDK installed (.ci/run installs tests/sdk_servers/ts)")
    command = [node, str(TS / "isolation_server.mjs"), "--port", str(free_port()), *args]
    with launch(command, port=None, ready_timeout=60) as server:
        yield server.url


def run_isolation(url: str, timeout: float) -> tuple[RunFinished, list[str]]:
    config = RunConfig(command=[], seed=3, timeout=timeout, budget=60.0, oracles=tuple(all_oracles()),
                       phases=("probe",), http=HttpTarget(url, transport=TransportKind.STREAMABLE_HTTP),
                       replay_corpus=False, protocol_version="2025-11-25")
    events: list[Event] = []
    finished = anyio.run(run, config, events.append)
    return finished, [event.message for event in events if isinstance(event, Notice)]


def test_the_sdks_session_per_client_pattern_is_isolated() -> None:
    with ts_server() as url:
        finished, notes = run_isolation(url, timeout=30.0)  # costs nothing: every answer ends its stream
        assert [f for f in finished.findings if f.oracle == "session-isolation"] == [], notes
        assert "isolation: 2 rounds of 3 concurrent sessions with the same ids, 12 requests, 0 crossed" in notes, notes
        with urllib.request.urlopen(url.replace("/mcp", "/sessions"), timeout=10) as response:
            assert json.loads(response.read()) == {"open": 0}


def test_the_pinned_sdk_refuses_the_shared_instance_of_the_advisory() -> None:
    with ts_server("--shared") as url:
        finished, notes = run_isolation(url, timeout=3.0)  # the run's own requests after the first wait for nothing
    assert [f for f in finished.findings if f.oracle == "session-isolation"] == []
    assert "isolation probes skipped: initialize on a new client got HTTP 500" in notes, notes


def test_a_lost_answer_on_a_stream_left_open_is_waited_for_then_found() -> None:
    """The advisory's shape exactly: the losing client's stream stays open without its answer; the phase waits
    --timeout for it, sends the requests again at once with distinct ids, and reports the answer lost to another
    client."""
    command = [sys.executable, str(ROOT / "tests" / "servers" / "isolation_server.py"), "--port", "0",
               "--bug=route-by-id", "--hold"]
    with launch(command, port=None, ready_timeout=30) as server:
        finished, notes = run_isolation(server.url, timeout=5.0)
    found = [f for f in finished.findings if f.oracle == "session-isolation"]
    assert [(f.severity.name, f.key) for f in found] == [("HIGH", "answers")], notes
    assert "no answer within 5s" in found[0].message
