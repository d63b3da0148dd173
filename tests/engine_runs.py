"""Run the engine in-process against a real server process and collect its findings."""

from __future__ import annotations

import sys
from pathlib import Path

import anyio

from mcpfuzz.engine.config import RunConfig
from mcpfuzz.engine.events import Event, RunFinished
from mcpfuzz.engine.runner import run
from mcpfuzz.oracles.base import all_oracles
from mcpfuzz.transport.http_target import HttpTarget

SERVERS = Path(__file__).parent / "servers"
MCP_SERVER = SERVERS / "mcp_server.py"
TOOL_SERVER = SERVERS / "tool_server.py"


def fixture_command(*bugs: str, server: Path = MCP_SERVER) -> list[str]:
    """The command of a configurable test server with some bugs switched on."""
    command = [sys.executable, str(server)]
    for bug in bugs:
        command += ["--bug", bug]
    return command


PROTOCOL_PHASES = ("probe", "catalogue", "lifecycle")


def run_engine(command: list[str], *, timeout: float = 2.0, call_timeout: float = 30.0, budget: float = 60.0,
               protocol_version: str | None = None, phases: tuple[str, ...] = PROTOCOL_PHASES,
               seed: int = 1, corpus: Path | None = None, http: HttpTarget | None = None,
               events: list[Event] | None = None, max_examples: int | None = None) -> RunFinished:
    """One run with every oracle; by default the protocol phases only (the tool phases use the whole budget).

    With `http`, the server is that URL and `command` is ignored.
    """
    config = RunConfig(command=[] if http else command, seed=seed, timeout=timeout, call_timeout=call_timeout,
                       budget=budget,
                       oracles=tuple(all_oracles()), protocol_version=protocol_version, phases=phases,
                       corpus=corpus, http=http, max_examples=max_examples)
    return anyio.run(run, config, (lambda event: None) if events is None else events.append)
