"""`mcpfuzz lint`: connect, negotiate the era, gather what the server declares and run the lint rules on it."""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import anyio

from mcpfuzz.engine.errors import UnusableServer
from mcpfuzz.engine.session.session import HarnessError, Session, SessionOptions
from mcpfuzz.engine.surface.lint_phase import lint, silent_handshake
from mcpfuzz.engine.surface.probe import probe
from mcpfuzz.lint.model import Problem
from mcpfuzz.transport.connect import ServerTarget
from mcpfuzz.transport.errors import ServerStartError


@dataclass
class LintOutcome:
    """What `mcpfuzz lint` found; `error` says why the server could not be linted (exit status 2)."""

    server: str
    era: str | None = None
    protocol_version: str | None = None
    problems: list[Problem] = field(default_factory=list)
    duration: float = 0.0
    error: str = ""


async def lint_server(target: ServerTarget, options: SessionOptions, *, forced_version: str | None = None,
                      budget: float = 60.0) -> LintOutcome:
    """Lint one server within `budget` seconds."""
    outcome = LintOutcome(target.label)
    started = time.monotonic()
    with anyio.move_on_after(budget) as scope:
        try:
            async with Session(target, options) as session:
                try:
                    found = await probe(session, forced_version)
                except UnusableServer as error:
                    if not error.silent:
                        raise
                    outcome.problems = silent_handshake()
                else:
                    outcome.era, outcome.protocol_version = found.era.value, found.version
                    outcome.problems = await lint(session, found)
        except ServerStartError as error:
            outcome.error = f"{error}\ntip: check the command after `--` (or the URL)"
        except UnusableServer as error:
            outcome.error = error.explained()
        except HarnessError as error:
            outcome.error = f"the server stopped answering while it was linted: {error}"
    if scope.cancelled_caught:
        outcome.error = f"linting did not finish within {budget:g}s\ntip: raise --budget, or --timeout for slow servers"
    outcome.duration = time.monotonic() - started
    return outcome
