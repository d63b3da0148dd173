"""`mcpfuzz run`: a plan of phases executed over one context and one budget, then finishing; events out."""

from __future__ import annotations

import signal
from functools import partial

import anyio
import anyio.abc

from mcpfuzz.engine.attribution.detect import detect_sdk
from mcpfuzz.engine.config import RunConfig
from mcpfuzz.engine.coverage.book import CoverageBook
from mcpfuzz.engine.coverage.launch import CoverageSetup, PythonServer, python_server
from mcpfuzz.engine.coverage.node_launch import NodeServer, node_server, node_setup
from mcpfuzz.engine.errors import UnusableServer
from mcpfuzz.engine.events import EventSink, Notice, ResourcesSampled, RunFinished, RunStarted, StopReason
from mcpfuzz.engine.monitor.monitor import Monitor
from mcpfuzz.engine.monitor.resources import Sample
from mcpfuzz.engine.observe.listener import LoopbackListener
from mcpfuzz.engine.observe.setup import ObserveSetup
from mcpfuzz.engine.observe.start import observe_window, start_observation, unseen_notice
from mcpfuzz.engine.plan.context import RunContext
from mcpfuzz.engine.plan.finishing import finish, verify
from mcpfuzz.engine.plan.phase import Plan, execute_phases
from mcpfuzz.engine.plan.plans import plan_for
from mcpfuzz.engine.security.canary_watch import CanaryWatch
from mcpfuzz.engine.security.workspace import SecurityWorkspace, secured
from mcpfuzz.engine.session.session import Session, SessionOptions
from mcpfuzz.engine.shared.hub import SharedHub
from mcpfuzz.transport.errors import ServerStartError
from mcpfuzz.transport.target import ServerKind


class Run:
    """One run: its context (which survives cancellation, so a partial report can always be written) and its plan."""

    def __init__(self, config: RunConfig, emit: EventSink, plan: Plan | None = None) -> None:
        workspace = SecurityWorkspace.create() if config.security else None
        self.listener = LoopbackListener() if workspace is not None else None  # where URL payloads point
        if workspace is not None and self.listener is not None:
            workspace = workspace.listening(self.listener.url)
        self.context = RunContext.create(secured(config, workspace) if workspace is not None else config, emit)
        if workspace is not None:
            self.context.security = workspace
            self.context.canaries = CanaryWatch(workspace.layout.hits, workspace.folder)
            self.context.target_as_given = config.target  # each re-check of a finding plants a workspace of its own
            # Transcripts outlive the workspace: they keep `{workspace}` and say which folders their frames name.
            self.context.corpus.target, self.context.corpus.security = config.target, workspace.layout
        self.plan = plan if plan is not None else plan_for(self.context.config)
        self.coverage: CoverageSetup | None = None  # --coverage: the tracer's folder, made when the run starts
        self.observing: ObserveSetup | None = None  # --observe, --security: the hooks' folder


    async def execute(self) -> RunFinished:
        """Run every phase of the plan within the budget; Ctrl-C and SIGTERM stop it cleanly."""
        try:
            return await self._execute()
        finally:
            if self.context.security is not None:
                self.context.security.remove()
            if self.coverage is not None:
                self.coverage.remove()
            if self.observing is not None:
                self.observing.remove()
            if self.listener is not None:
                self.listener.close()

    async def _execute(self) -> RunFinished:
        context = self.context
        config = context.config
        budget = context.budget
        context.emit(RunStarted(config.server_label, config.seed, config.oracles, config.budget, config.timeout))
        context.hypothesis()  # its tables built in the background while the server starts and is probed
        _detect_sdk(context)
        # The hooks first: the coverage tracer goes before them on PYTHONPATH, and runs their sitecustomize after it.
        self.observing = start_observation(context)
        observe_env = self.observing.env if self.observing is not None else {}
        self.coverage = _start_coverage(context, {**config.env, **observe_env})
        extra_env = {**observe_env, **(self.coverage.env if self.coverage is not None else {})}
        if config.shared is not None:
            context.shared = await anyio.to_thread.run_sync(partial(
                SharedHub, config.shared, server=config.target, seed=config.seed, redactor=context.redactor))
        async with anyio.create_task_group() as group:
            # Started (not only scheduled) before the server is: a signal that comes at once still stops cleanly.
            await group.start(_watch_signals, context, group.cancel_scope)
            if context.shared is not None:
                group.start_soon(context.shared.heartbeats, context.shared_status, context.emit)
            with anyio.move_on_after(config.budget) as budget_scope:
                try:
                    async with Session(config.target, session_options(config, extra_env)) as session:
                        await self._run_plan(session)
                except ServerStartError as error:
                    by_url = config.target.kind is ServerKind.URL
                    tip = "check the URL and that the server listens there" if by_url else \
                        "check the command after `--`; it runs with mcpfuzz's environment and working directory"
                    context.error = f"{error}\ntip: {tip}"
                except UnusableServer as error:
                    context.error = error.explained(say_empty=True)
            if budget_scope.cancelled_caught:
                context.stopped = context.stopped or StopReason.BUDGET
                context.emit(Notice(f"the budget of {config.budget:g}s ran out; the report is partial"))
                if context.probe is None and not context.error:
                    # Nothing was tested: a server that never finished the handshake is unusable, not clean.
                    context.error = (f"the server did not finish the handshake within the budget of "
                                     f"{config.budget:g}s (it accepted the input but answered nothing mcpfuzz could "
                                     "use)\ntip: check that it is an MCP server and answers; raise --budget and "
                                     "--startup-timeout for slow starters")
            group.cancel_scope.cancel()
        if context.preparation is not None:
            context.preparation.cancel()  # a run stopped (or without call phases) before its targets were ready
        return finish(context, budget.started)

    async def _run_plan(self, session: Session) -> None:
        """The plan's phases on an open session, then the findings re-run on a fresh server."""
        context = self.context
        context.session = session
        context.monitor = Monitor(session, context.monitor_options, context.observed, partial(_sampled, context))
        session.before_case = context.monitor
        session.patience.wedge_until = context.budget.deadline
        session.on_notice = lambda text: context.emit(Notice(text))
        session.on_internal_error = context.note_internal
        if context.observation is not None:
            session.window_observer = partial(observe_window, context)
        try:
            await execute_phases(self.plan, context, session)
        except (ServerStartError, UnusableServer):
            raise
        except Exception as error:  # a bug of mcpfuzz's own: what was found is still reported
            context.internal_error(error)
        finally:
            context.monitor.finish()  # memory judged on each process' whole series, a stopped run's too
            if self.observing is not None:
                unseen_notice(context, self.observing)
        await verify(context, session, context.budget.verify_until_for(len(context.findings.entries())))


def session_options(config: RunConfig, extra_env: dict[str, str] | None = None) -> SessionOptions:
    """The session's time limits and process options, from the run's (`extra_env`: variables mcpfuzz itself sets
    for the server, such as --coverage's; not the user's --env, so never in a transcript)."""
    env = {**config.env, **(extra_env or {})}
    return SessionOptions(timeout=config.timeout, startup_timeout=config.startup_timeout,
                          call_timeout=config.call_timeout, grace=config.grace,
                          max_line=config.max_line, env=env or None, frame_log=config.log_frames,
                          plain_jsonrpc=config.jsonrpc_methods is not None,
                          standby_always=config.max_examples is not None,
                          client_capabilities=config.client_capabilities)


def _detect_sdk(context: RunContext) -> None:
    """Which SDK the server is built on, as its command's files say (the running processes settle it after the
    handshake, and the header says it then: plan/stack.py)."""
    target = context.config.target
    words: tuple[str, ...] = ()
    if target.kind is ServerKind.COMMAND:
        words = target.command
    elif target.kind is ServerKind.URL:
        words = tuple(target.launch)
    context.sdk = detect_sdk(words)


def _start_coverage(context: RunContext, env: dict[str, str]) -> CoverageSetup | None:
    """--coverage: the tracer's folder for a Python or Node server mcpfuzz starts (a stdio command, or an HTTP
    server's --launch command); else one Notice why not."""
    config = context.config
    if not config.coverage:
        return None
    target = config.target
    server: NodeServer | PythonServer | str
    if target.kind is ServerKind.COMMAND:
        server = node_server(target.command, target.cwd) or python_server(target.command, target.cwd)
    elif target.kind is ServerKind.URL and target.launch:
        server = node_server(target.launch) or python_server(target.launch)
    else:
        server = "mcpfuzz does not start the server (coverage needs a stdio command or an HTTP server's --launch)"
    if isinstance(server, str):
        context.emit(Notice(f"--coverage is off: {server}; the run goes on without it"))
        return None
    if isinstance(server, NodeServer):
        setup = node_setup(server, include_sdk=config.coverage_sdk, env=env)
    else:
        setup = CoverageSetup.create(server, include_sdk=config.coverage_sdk, env=env)
    context.coverage = CoverageBook(setup.log)
    return setup


def _sampled(context: RunContext, pid: int, sample: Sample) -> None:
    """A resource sample of the server, told to the reports (the HTML report charts the memory)."""
    context.emit(ResourcesSampled(pid, sample.requests, sample.rss, sample.fds, sample.threads, sample.processes))


async def _watch_signals(context: RunContext, scope: anyio.CancelScope, *,
                         task_status: anyio.abc.TaskStatus[None] = anyio.TASK_STATUS_IGNORED) -> None:
    with anyio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as signals:
        task_status.started()
        async for received in signals:
            context.stopped = StopReason.INTERRUPTED
            context.emit(Notice(f"{signal.Signals(received).name} received: stopping, writing the partial report"))
            scope.cancel()
            return


async def run(config: RunConfig, emit: EventSink) -> RunFinished:
    """Run `mcpfuzz run` with `config`, sending events to `emit`."""
    return await Run(config, emit).execute()
