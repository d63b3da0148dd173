"""Concurrent clients (oracle `session-isolation`) against tests/servers/isolation_server.py, in both eras.

Each planted shared-state bug is found as the finding it causes, the clean twin gets no finding, and every session
the phase opened is closed again.
"""

from __future__ import annotations

import json
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
from mcpfuzz.transport.http_target import HttpTarget
from tests.http_servers import ROOT, launch

pytestmark = pytest.mark.process

SERVER = ROOT / "tests" / "servers" / "isolation_server.py"
LEGACY, MODERN = "2025-11-25", "2026-07-28"


@contextmanager
def isolation_server(*bugs: str) -> Iterator[str]:
    """tests/servers/isolation_server.py with BUGS on a free port; yields its URL."""
    command = [sys.executable, str(SERVER), "--port", "0", *(f"--bug={bug}" for bug in bugs)]
    with launch(command, port=None, ready_timeout=30) as server:
        yield server.url


def run_isolation(url: str, version: str, timeout: float) -> tuple[RunFinished, list[str]]:
    """A run of the probe and the isolation phase only (the phases that need no --phases entry)."""
    config = RunConfig(command=[], seed=3, timeout=timeout, budget=60.0, oracles=tuple(all_oracles()),
                       phases=("probe",), http=HttpTarget(url), replay_corpus=False, protocol_version=version)
    events: list[Event] = []
    finished = anyio.run(run, config, events.append)
    return finished, [event.message for event in events if isinstance(event, Notice)]


def open_sessions(url: str) -> int:
    with urllib.request.urlopen(url.replace("/mcp", "/sessions"), timeout=10) as response:
        return int(json.loads(response.read())["open"])


def isolation(finished: RunFinished) -> list[tuple[str, str]]:
    return sorted((f.severity.name.lower(), f.key) for f in finished.findings if f.oracle == "session-isolation")


PLANTED = [
    # era, bug, the findings (severity, key)
    (LEGACY, "route-by-id", [("high", "answers")]),
    (MODERN, "route-by-id", [("high", "answers")]),
    (LEGACY, "progress-broadcast", [("high", "progress")]),
    (MODERN, "ignore-log-level", [("medium", "log-level")]),
]


@pytest.mark.parametrize(("version", "bug", "expected"), PLANTED, ids=[f"{row[1]}-{row[0]}" for row in PLANTED])
def test_each_planted_bug_is_found(version: str, bug: str, expected: list[tuple[str, str]]) -> None:
    with isolation_server(bug) as url:
        finished, notes = run_isolation(url, version, timeout=30.0)
        assert isolation(finished) == expected, notes
        assert open_sessions(url) == 0


@pytest.mark.parametrize(("version", "requests"), [(LEGACY, 12), (MODERN, 6)])
def test_the_clean_twin_has_no_finding(version: str, requests: int) -> None:
    """Two rounds of three clients; legacy sessions are opened (initialize, initialized) and closed again. A long
    --timeout costs a correct server nothing: every answer ends its stream."""
    with isolation_server() as url:
        finished, notes = run_isolation(url, version, timeout=30.0)
        assert finished.findings == (), [(f.oracle, f.key, f.message) for f in finished.findings]
        clients = "sessions" if version == LEGACY else "connections"
        assert f"isolation: 2 rounds of 3 concurrent {clients} with the same ids, {requests} requests, 0 crossed" \
            in notes, notes
        assert open_sessions(url) == 0
