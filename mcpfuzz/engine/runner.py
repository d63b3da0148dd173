"""`mcpfuzz run`: probe, catalogue, lifecycle; every exchange judged; events out."""

from __future__ import annotations

import signal
import time
from collections.abc import Iterable

import anyio

from mcpfuzz.engine.config import RunConfig
from mcpfuzz.engine.errors import UnusableServer
from mcpfuzz.engine.events import (
    CaseDone,
    EventSink,
    FindingFound,
    Notice,
    PhaseStarted,
    ProbeDone,
    RunFinished,
    RunStarted,
    ServerRestarted,
    Stats,
)
from mcpfuzz.engine.judge import FindingSet
from mcpfuzz.engine.probe import ProbeResult, probe
from mcpfuzz.engine.session import HarnessError, Session, SessionOptions
from mcpfuzz.jsonrpc.exchange import Exchange
from mcpfuzz.jsonrpc.frame import Case
from mcpfuzz.strategies.catalogue import CatalogueContext, catalogue
from mcpfuzz.strategies.lifecycle import lifecycle
from mcpfuzz.transport.errors import ServerStartError


class Run:
    """One run's state; survives cancellation so that a partial report can always be written."""

    def __init__(self, config: RunConfig, emit: EventSink) -> None:
        self.config = config
        self.emit = emit
        self.findings = FindingSet()
        self.stats = Stats()
        self.probe: ProbeResult | None = None
        self.stopped = ""
        self.error = ""
        self._session: Session | None = None

    async def execute(self) -> RunFinished:
        """Run every phase within the budget; Ctrl-C and SIGTERM stop it cleanly."""
        config = self.config
        started = time.monotonic()
        self.emit(RunStarted(config.server_label, config.seed, config.oracles, config.budget, config.timeout))
        options = SessionOptions(timeout=config.timeout, grace=config.grace, max_line=config.max_line,
                                 env=config.env or None)
        async with anyio.create_task_group() as group:
            group.start_soon(self._watch_signals, group.cancel_scope)
            with anyio.move_on_after(config.budget) as budget_scope:
                try:
                    async with Session(config.command, options) as session:
                        self._session = session
                        await self._phases(session)
                except ServerStartError as error:
                    self.error = f"{error}\ntip: check the command after `--`; it runs with mcpfuzz's " \
                        "environment and working directory"
                except UnusableServer as error:
                    tail = f"\nserver stderr (last lines):\n{error.stderr_tail}" if error.stderr_tail else \
                        "\nserver stderr was empty"
                    self.error = error.message + tail + (f"\ntip: {error.tip}" if error.tip else "")
            if budget_scope.cancelled_caught:
                self.stopped = self.stopped or "budget"
                self.emit(Notice(f"the budget of {config.budget:g}s ran out; the report is partial"))
            group.cancel_scope.cancel()
        if self._session is not None:
            self.stats.frames_sent = self._session.frames_sent
            self.stats.restarts = self._session.restarts
        self.stats.duration = time.monotonic() - started
        finished = RunFinished(self.stats, tuple(self.findings.all()),
                               self.probe.version if self.probe else None,
                               self.probe.era.value if self.probe else None, self.stopped, self.error)
        self.emit(finished)
        return finished

    async def _watch_signals(self, scope: anyio.CancelScope) -> None:
        with anyio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as signals:
            async for received in signals:
                self.stopped = "interrupted"
                self.emit(Notice(f"{signal.Signals(received).name} received: stopping, writing the partial "
                                 "report"))
                scope.cancel()
                return

    async def _phases(self, session: Session) -> None:
        config = self.config
        self.emit(PhaseStarted("probe"))
        self.probe = await probe(session, config.protocol_version)
        self.emit(ProbeDone(self.probe.era.value, self.probe.version, self.probe.server_info,
                            self.probe.capabilities, tuple(t.get("name", "?") for t in self.probe.tools)))
        for note in self.probe.notes:
            self.emit(Notice(note))
        for exchange in self.probe.exchanges:
            self._judge("probe", exchange)
        context = CatalogueContext(self.probe.era, self.probe.version, _first_tool(self.probe.tools),
                                   self.probe.capabilities)
        if "catalogue" in config.phases:
            await self._run_cases(session, "catalogue", catalogue(context))
        if "lifecycle" in config.phases:
            await self._run_cases(session, "lifecycle", lifecycle(self.probe.era))

    async def _run_cases(self, session: Session, phase: str, cases: Iterable[Case]) -> None:
        cases = list(cases)
        self.emit(PhaseStarted(phase, len(cases)))
        for case in cases:
            restarts = session.restarts
            try:
                exchange = await session.run_case(case)
            except (HarnessError, ServerStartError) as error:
                self.stopped = "server-unrecoverable"
                self.emit(Notice(f"the server could not be brought back after a failure ({error}); "
                                 f"{phase} stopped early", level="error"))
                return
            if session.restarts > restarts and not case.fresh:
                self.emit(ServerRestarted("restarted after the previous case"))
            self._judge(phase, exchange)

    def _judge(self, phase: str, exchange: Exchange) -> None:
        self.stats.cases += 1
        self.stats.phases[phase] = self.stats.phases.get(phase, 0) + 1
        new = self.findings.judge(exchange, self.config.oracles)
        for finding in new:
            self.emit(FindingFound(finding))
        self.emit(CaseDone(phase, exchange, tuple(new)))


def _first_tool(tools: list[dict]) -> str | None:
    for tool in tools:
        if isinstance(tool.get("name"), str):
            return tool["name"]
    return None


async def run(config: RunConfig, emit: EventSink) -> RunFinished:
    """Run `mcpfuzz run` with `config`, sending events to `emit`."""
    return await Run(config, emit).execute()
