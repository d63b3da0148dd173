"""Observation for a run: the hooks set up for the server mcpfuzz starts, the watch that judges with them."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from functools import partial
from types import SimpleNamespace
from typing import TYPE_CHECKING, Any

from mcpfuzz.engine.events import Notice
from mcpfuzz.engine.observe.places import Places
from mcpfuzz.engine.observe.records import RecordFile
from mcpfuzz.engine.observe.setup import ObserveSetup, observed_server
from mcpfuzz.engine.observe.watch import ObservationWatch
from mcpfuzz.engine.observe.would_find import would_find
from mcpfuzz.jsonrpc.exchange import Exchange
from mcpfuzz.strategies.payloads.canaries import CanaryLayout

if TYPE_CHECKING:
    from mcpfuzz.engine.plan.context import RunContext


def observing(config: Any) -> bool:
    """True when the run looks at side effects: --observe, or --security."""
    return bool(getattr(config, "observe", False) or getattr(config, "security", False))


def start_observation(context: RunContext) -> ObserveSetup | None:
    """The hooks' folder for a Python or Node server mcpfuzz starts, and the run's watch on them; else one Notice
    why not (the run goes on: canaries stay the evidence of --security)."""
    config = context.config
    if not observing(config):
        return None
    target = config.target
    launch = tuple(getattr(target, "launch", ()) or ())
    command = tuple(getattr(target, "command", ()) or ())
    server = observed_server(target.kind, command, launch, getattr(target, "cwd", None))
    if isinstance(server, str):
        context.emit(Notice(f"side effects are not observed: {server}; the run goes on without them"))
        return None
    setup = ObserveSetup.create(server, env=config.env)
    layout = context.security.layout if context.security is not None else None
    given, planted, own = given_places(config, layout)
    places = Places.create(given, planted=planted, own=[*own, str(setup.folder)], code=list(setup.code))
    context.observation = ObservationWatch(RecordFile(str(setup.log)), places, hints_of=partial(_hints, context),
                                           allowed=tuple(getattr(config, "allow_paths", ())))
    return setup


def given_places(config: Any, layout: CanaryLayout | None) -> tuple[list[str], ...]:
    """(given, planted, own) folders: the workspace and the server's working folder (--cwd), --allow-path; the
    run's planted root; the hits folder."""
    allowed = list(getattr(config, "allow_paths", ()))
    cwd = getattr(config.target, "cwd", None)  # the workspace, or the folder --cwd named for the server
    if layout is not None:
        return [layout.workspace, *([cwd] if cwd else []), *allowed], [layout.root], [layout.hits]
    return [cwd or os.getcwd(), *allowed], [], []


def planted_places(watch: ObservationWatch, config: Any, layout: CanaryLayout) -> Places:
    """The watch's places for a re-check's newly planted workspace."""
    given, planted, own = given_places(config, layout)
    return watch.places.with_given(given, planted, own)


def _hints(context: RunContext, label: str) -> dict[str, Any]:
    """The annotations of the tool `label` names (empty for another target, or before the targets are known)."""
    plan = context.targets
    if plan is None or not label.startswith("tool/"):
        return {}
    for target in plan.targets:
        if target.label == label:
            annotations = target.declaration.get("annotations")
            return annotations if isinstance(annotations, dict) else {}
    return {}


def judge_with(context: RunContext, exchange: Any) -> None:
    """Tell the exchange what its call was seen doing (nothing when no hook is in the server)."""
    watch = context.observation
    session = context.session
    if watch is None or exchange.observation is not None:  # none to see, or told with its pipelined window
        return
    standby = session.processes.standby_pid if session is not None else None
    watch.look(exchange, standby=standby)
    if not watch.seeing:
        exchange.observation = None


def observe_window(context: RunContext, exchanges: Sequence[Exchange]) -> bool:
    """Tell a pipelined window's exchanges what their calls were seen doing, once every answer is in; False when an
    effect no record tells the call of (several in flight then) would be a finding of a selected oracle: the
    window's cases are then run alone, so that a finding is only ever charged to the call that did it."""
    watch = context.observation
    if watch is None:
        return True
    session = context.session
    watch.look_window(exchanges, standby=session.processes.standby_pid if session is not None else None)
    if not watch.seeing:
        for exchange in exchanges:
            exchange.observation = None
        return True
    return not any(would_find(exchange, context.config.oracles) for exchange in exchanges)


def judge_planted(context: RunContext, exchange: Any, layout: CanaryLayout) -> None:
    """A re-check's exchange told what its fresh server did, judged against its own newly planted workspace."""
    watch = context.observation
    if watch is None:
        return
    watch.look(exchange, places=planted_places(watch, context.config, layout))
    if not watch.seeing:
        exchange.observation = None


def unseen_notice(context: RunContext, setup: ObserveSetup) -> None:
    """One notice when the hook never said it is in (the interpreter ignored it, the program is another one)."""
    watch = context.observation
    if watch is not None and not watch.seeing and context.stats.cases:
        context.emit(Notice(f"side effects were not observed: the {setup.runtime} hook never started in the server "
                            "(it may run on another interpreter); canary answers stay the evidence"))


def replay_observation(server: Any, layout: CanaryLayout | None, env: Mapping[str, str]
                       ) -> tuple[ObserveSetup, ObservationWatch] | str:
    """The hooks and a watch for one replayed case of `server` (placed in its workspace, when `layout` is given), or
    why the server cannot be hooked. What the tools declared and the --allow-path folders come with the saved case
    (its `ObservedCall`)."""
    target = server
    found = observed_server(target.kind, tuple(getattr(target, "command", ()) or ()),
                            tuple(getattr(target, "launch", ()) or ()), getattr(target, "cwd", None))
    if isinstance(found, str):
        return found
    setup = ObserveSetup.create(found, env=env)
    allowed = SimpleNamespace(allow_paths=(), target=target)
    given, planted, own = given_places(allowed, layout)
    places = Places.create(given, planted=planted, own=[*own, str(setup.folder)], code=list(setup.code))
    return setup, ObservationWatch(RecordFile(str(setup.log)), places)
