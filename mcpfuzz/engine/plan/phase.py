"""The Phase contract and the loop that executes a plan (a tuple of phases) over one context and budget."""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from mcpfuzz.engine.errors import UnusableServer
from mcpfuzz.engine.events import StopReason
from mcpfuzz.engine.plan.context import RunContext
from mcpfuzz.engine.session.session import ServerLost, Session
from mcpfuzz.transport.errors import ServerStartError

RAN = ""  # a phase's entry in the plan log when it ran


class Phase(Protocol):
    """One step of a run: its name, why it is skipped (None: it runs), and what it does."""

    @property
    def name(self) -> str:
        """The phase's name in the plan log and the time split (`catalogue`, `fuzz`)."""
        ...

    def skip_reason(self, context: RunContext) -> str | None:
        """Why this phase does not run in this context, in words the user sees; None when it runs."""
        ...

    async def run(self, context: RunContext, session: Session) -> None:
        """Do the phase's work on the session, within the budget's deadlines for it."""
        ...


@runtime_checkable
class KeepsTime(Protocol):
    """A phase after the call searches whose time they keep: the budget sums what the plan's phases declare."""

    def kept_share(self, context: RunContext) -> float:
        """The part of what the fuzz phase leaves that this phase needs (0: none, it will have no work)."""
        ...


Plan = tuple[Phase, ...]


async def execute_phases(plan: Plan, context: RunContext, session: Session) -> None:
    """Each phase in order, timed into the budget's split; a skipped one is logged with its reason (every phase
    after the server was lost is skipped: it would only find it lost again).

    An error of mcpfuzz's own that a phase did not contain to one case ends that phase only: it is reported,
    and the next phase runs. A server that cannot be started or used ends the run (the runner says why)."""
    context.plan = plan
    for phase in plan:
        reason = phase.skip_reason(context)
        if reason is None and context.stopped is StopReason.SERVER_UNRECOVERABLE:
            reason = "the server was lost (it did not come back after a failure)"
        context.phase_log.append((phase.name, reason or RAN))
        if reason is not None:
            continue
        context.phase = phase.name
        with context.budget.timing(phase.name):
            try:
                await phase.run(context, session)
            except (ServerStartError, UnusableServer):
                raise
            except ServerLost:
                continue  # the server's verdict, not mcpfuzz's error: the phases after this one are skipped
            except Exception as error:
                if context.probe is None:
                    raise  # nothing after the probe can run without what it learns: the runner says what broke
                context.note_internal(error, f"the rest of the {phase.name} phase")
    context.phase = ""
