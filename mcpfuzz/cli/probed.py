"""A server started and probed by the run's own first phases, for the commands that stop short of a run."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import replace
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from mcpfuzz.engine.config import RunConfig
    from mcpfuzz.engine.events import EventSink
    from mcpfuzz.engine.plan.context import RunContext
    from mcpfuzz.engine.plan.phase import Plan
    from mcpfuzz.engine.session.session import Session

# What runs on the session once the phases are done.
Then = Callable[["RunContext", "Session"], Awaitable[None]]


def writing_nothing(config: RunConfig) -> RunConfig:
    """The configuration without the corpus, its replay, the frame log and the shared store: nothing is written."""
    return replace(config, corpus=None, log_frames=None, shared=None, replay_corpus=False)


async def on_probed_server(config: RunConfig, phases: Plan, then: Then, emit: EventSink) -> tuple[RunContext, str]:
    """Start the server, run `phases` of the run's plan on it, then `then`; the context and, when the server could
    not be used, why (redacted, with the server's stderr tail and a tip), else ""."""
    import anyio

    from mcpfuzz.engine.errors import UnusableServer
    from mcpfuzz.engine.plan.context import RunContext
    from mcpfuzz.engine.plan.phase import execute_phases
    from mcpfuzz.engine.runner import session_options
    from mcpfuzz.engine.session.session import HarnessError, Session
    from mcpfuzz.transport.errors import ServerStartError

    context = RunContext.create(config, emit)
    error = ""
    with anyio.move_on_after(config.budget) as scope:
        try:
            async with Session(config.target, session_options(config)) as session:
                await execute_phases(phases, context, session)
                await then(context, session)
        except ServerStartError as problem:
            error = f"{problem}\ntip: check the command after `--` (or the URL)"
        except UnusableServer as problem:
            error = problem.explained()
        except HarnessError as problem:
            error = f"the server stopped answering: {problem}"
    if context.preparation is not None:
        context.preparation.cancel()
    if scope.cancelled_caught:
        error = (f"the server did not answer within {config.budget:g}s\ntip: raise --startup-timeout for slow "
                 "starters")
    return context, context.redactor.text(error)
