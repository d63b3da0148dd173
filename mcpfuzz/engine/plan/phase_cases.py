"""A phase's cases run one by one until its deadline, each judged (the client and tasks phases share it)."""

from __future__ import annotations

import time

from mcpfuzz.engine.events import Notice, PhaseName
from mcpfuzz.engine.plan.context import RunContext
from mcpfuzz.engine.session.session import HarnessError, Session
from mcpfuzz.jsonrpc.exchange import Exchange
from mcpfuzz.jsonrpc.frame import Case
from mcpfuzz.transport.errors import ServerStartError


class PhaseOver(Exception):
    """The phase's time is over, or the server is lost: its remaining cases are left out."""


class PhaseCases:
    """Runs and judges a phase's cases, stopping at the run's deadline (the first case always runs)."""

    def __init__(self, context: RunContext, session: Session, phase: PhaseName) -> None:
        self.context, self.session, self.phase = context, session, phase
        self.until = context.budget.deadline
        self.ran = 0

    async def run(self, case: Case) -> Exchange:
        """One case, judged; PhaseOver when the time is up or the server cannot be had."""
        if self.ran and time.monotonic() >= self.until:
            self.context.emit(Notice(f"{self.phase}: cases left out to keep the run's time; raise --budget "
                                     "to run them all"))
            raise PhaseOver
        self.ran += 1
        try:
            exchange = await self.session.run_case(case, timeout=self.context.config.target_timeouts.get(case.target))
        except (HarnessError, ServerStartError) as error:
            self.context.server_lost(error, self.phase)
            raise PhaseOver from None
        self.context.judge(self.phase, exchange)
        return exchange
