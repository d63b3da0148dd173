"""Run the engine in-process against a real server process and collect its findings."""

from __future__ import annotations

import sys
from pathlib import Path

import anyio

from mcpfuzz.engine.config import RunConfig
from mcpfuzz.engine.events import RunFinished
from mcpfuzz.engine.runner import run
from mcpfuzz.oracles.base import all_oracles

SERVERS = Path(__file__).parent / "servers"
MCP_SERVER = SERVERS / "mcp_server.py"


def fixture_command(*bugs: str) -> list[str]:
    """The command of the configurable test server with some bugs switched on."""
    command = [sys.executable, str(MCP_SERVER)]
    for bug in bugs:
        command += ["--bug", bug]
    return command


def run_engine(command: list[str], *, timeout: float = 2.0, budget: float = 60.0,
               protocol_version: str | None = None) -> RunFinished:
    """One full default run (probe, catalogue, lifecycle) with every oracle."""
    config = RunConfig(command=command, seed=1, timeout=timeout, budget=budget,
                       oracles=tuple(all_oracles()), protocol_version=protocol_version)
    return anyio.run(run, config, lambda event: None)
