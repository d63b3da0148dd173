"""Runs of mcpfuzz as a client, shared by test_client_requests and test_mrtr: one server, its findings and the
client phase's cases."""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

import anyio

from mcpfuzz.engine.client.capabilities import ALL_CAPABILITIES, ClientCapability
from mcpfuzz.engine.config import RunConfig
from mcpfuzz.engine.events import CaseDone, Event, PhaseName, RunFinished
from mcpfuzz.engine.runner import run
from mcpfuzz.jsonrpc.exchange import Exchange
from mcpfuzz.oracles.base import all_oracles
from tests.engine_runs import SERVERS

ELICIT_SERVER = SERVERS / "elicit_server.py"
SDK_SERVERS = SERVERS.parent / "sdk_servers"
ROOT = SERVERS.parent.parent
LEGACY = "2025-11-25"


def client_run(command: list[str], *, version: str | None = None,
               capabilities: frozenset[ClientCapability] = ALL_CAPABILITIES,
               log_frames: Path | None = None, budget: float = 30.0, timeout: float = 5.0,
               call_timeout: float = 30.0, leave_out: tuple[str, ...] = ()) -> tuple[RunFinished, list[Exchange]]:
    """A short run (probe, coverage, then the client phase) with every oracle but `leave_out`; the client phase's
    exchanges."""
    events: list[Event] = []
    config = RunConfig(command=command, seed=1, timeout=timeout, call_timeout=call_timeout, budget=budget,
                       oracles=tuple(oracle for oracle in all_oracles() if oracle not in leave_out),
                       phases=("probe", "coverage"), protocol_version=version, client_capabilities=capabilities,
                       log_frames=log_frames)
    finished = anyio.run(run, config, events.append)
    assert not finished.error, finished.error
    return finished, [e.exchange for e in events if isinstance(e, CaseDone) and e.phase == PhaseName.CLIENT]


def elicit_run(*bugs: str, version: str | None = None, capabilities: frozenset[ClientCapability] = ALL_CAPABILITIES,
               budget: float = 30.0, timeout: float = 5.0, call_timeout: float = 30.0,
               server_args: tuple[str, ...] = (), leave_out: tuple[str, ...] = ()
               ) -> tuple[RunFinished, list[Exchange]]:
    """A run of tests/servers/elicit_server.py with these bugs (and `server_args`), every oracle but `leave_out`."""
    command = [sys.executable, str(ELICIT_SERVER), *server_args, *(arg for bug in bugs for arg in ("--bug", bug))]
    return client_run(command, version=version, capabilities=capabilities, budget=budget, timeout=timeout,
                      call_timeout=call_timeout, leave_out=leave_out)


def titles(exchanges: list[Exchange]) -> list[str]:
    """The client phase's case titles, in order."""
    return [exchange.case.title for exchange in exchanges]


def mcp1_python() -> str | None:
    """The interpreter of the mcp 1.x virtual environment that .ci/run creates."""
    candidate = os.environ.get("MCPFUZZ_MCP1_PYTHON") or str(ROOT / ".venv-mcp1" / "bin" / "python")
    return candidate if Path(candidate).exists() else None


def node_ready() -> bool:
    """Whether the TypeScript SDK servers can run (node, and tests/sdk_servers/ts installed)."""
    return shutil.which("node") is not None and (SDK_SERVERS / "ts" / "node_modules" / "@modelcontextprotocol").is_dir()
