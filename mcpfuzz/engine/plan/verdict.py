"""Honest verdicts: a run that could not test what the server declares says what, why and what fixes it."""

from __future__ import annotations

from mcpfuzz.engine.config import CALL_PHASES
from mcpfuzz.engine.events import StopReason
from mcpfuzz.engine.plan.context import RunContext


def untested_reason(context: RunContext) -> str:
    """Why the run cannot vouch for the server (no target called, the server lost for good), with a tip; "" when
    it can. An interrupted run is only incomplete: the person who stopped it knows why."""
    if context.error or context.probe is None or context.stopped is StopReason.INTERRUPTED:
        return ""
    plan = context.targets
    wanted = any(phase in context.config.phases for phase in CALL_PHASES)
    planned = [target.label for target in plan.targets] if plan is not None and wanted else []
    called = [label for label in planned if context.stats.targets.get(label)]
    lost = context.stopped is StopReason.SERVER_UNRECOVERABLE
    if lost:
        missed = f"; {len(planned) - len(called)} of {len(planned)} targets were not called" if planned else ""
        session = context.session
        lost_how = f" ({session.comebacks.verdict()})" if session is not None and session.comebacks.lost else ""
        return ("the server was lost and could not be brought back" + lost_how + missed +
                "\ntip: run the server by hand to see why it no longer starts; raise --startup-timeout if it starts "
                "slowly")
    if wanted and plan is not None and not plan.targets and plan.risky:
        return (f"no target was called: each one not excluded by an option is annotated as risky, "
                f"{left_out_words(plan.risky)}; mcpfuzz calls none of them unless told to"
                f"\ntip: name them with --include-tool NAME (or --include-target KIND/NAME) to call them, in a "
                f"sandbox (they may change data or reach the network), or leave them out with --exclude-tool NAME "
                f"to test the protocol only")
    if planned and not called:
        startup = _startup_words(context)
        return (f"no target was called, although {len(planned)} can be ({_first(planned)})"
                f"{_why(context)}\ntip: raise --budget{startup}, or leave targets out with --exclude-target")
    return ""


def _why(context: RunContext) -> str:
    """Where the time went, when the budget is the reason."""
    if context.stopped is StopReason.BUDGET:
        return ": the budget ran out before the calls began"
    return ""


def _startup_words(context: RunContext) -> str:
    """The server's measured start-up time, when it is what ate the budget."""
    restarts = context.stats.restarts + context.stats.planned_restarts  # each start costs the same time
    return f" (the server was started again {restarts} times)" if restarts else ""


def _first(labels: list[str], count: int = 3) -> str:
    """A few labels and how many more."""
    shown = ", ".join(labels[:count])
    return shown + (f" and {len(labels) - count} more" if len(labels) > count else "")


def left_out_words(risky: list[tuple[str, str]] | tuple[tuple[str, str], ...], count: int = 5) -> str:
    """`tool/a (openWorldHint), tool/b (destructiveHint) and 3 more`."""
    shown = ", ".join(f"{label} ({hint})" for label, hint in risky[:count])
    return shown + (f" and {len(risky) - count} more" if len(risky) > count else "")
