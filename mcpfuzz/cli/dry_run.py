"""What a run would call, found the way the run finds it: its own probe and planning phases, no target called."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from mcpfuzz.engine.config import RunConfig
    from mcpfuzz.engine.events import Event
    from mcpfuzz.engine.plan.context import RunContext

# The call phases: without one of them in --phases a run calls no target (the catalogue may still call one tool).
CALL_PHASE_NAMES = ("coverage", "fuzz", "stateful")
# The phase after which the run knows its targets; a dry run stops there.
PLANNING_PHASE = "plan"


@dataclass(frozen=True)
class PlannedTarget:
    """One declared target: its label and kind, what its hints say, and why a run skips it (None: called)."""

    label: str
    kind: str
    safety: str | None = None
    skipped_because: str | None = None

    def to_json(self) -> dict[str, Any]:
        """The target as `mcpfuzz targets --json` lists it."""
        return {"target": self.label, "kind": self.kind, "called": self.skipped_because is None,
                "safety": self.safety, "skipped_because": self.skipped_because}


@dataclass
class DryRun:
    """The targets a run would call and the ones it would skip; `error` says why the server could not be probed."""

    server: str
    era: str | None = None
    protocol_version: str | None = None
    phases: tuple[str, ...] = ()
    targets: list[PlannedTarget] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    error: str = ""
    # The tool the catalogue sends malformed tools/call frames to (the first one the selection lets it call).
    catalogue_tool: str | None = None

    @property
    def called(self) -> list[PlannedTarget]:
        """The targets a run calls, in the order it calls them."""
        return [target for target in self.targets if target.skipped_because is None]

    @property
    def skipped(self) -> list[PlannedTarget]:
        """The targets a run leaves out, each with its reason."""
        return [target for target in self.targets if target.skipped_because is not None]

    @property
    def calls_run(self) -> bool:
        """Whether --phases has a phase that calls targets."""
        return any(phase in self.phases for phase in CALL_PHASE_NAMES)

    def to_json(self) -> dict[str, Any]:
        """The listing for scripts: stable keys, every target with `called` and `skipped_because`."""
        return {"version": 1, "server": self.server, "protocolVersion": self.protocol_version, "era": self.era,
                "phases": list(self.phases), "callPhases": self.calls_run,
                "targets": [target.to_json() for target in self.targets], "catalogueTool": self.catalogue_tool,
                "warnings": list(self.warnings),
                "error": self.error or None}


def dry_run(config: RunConfig) -> DryRun:
    """Start the server, probe it and plan its targets exactly as `run` does with `config`; call nothing."""
    import anyio

    from mcpfuzz.cli.probed import writing_nothing

    return anyio.run(_dry_run, writing_nothing(config))


async def _dry_run(config: RunConfig) -> DryRun:
    from mcpfuzz.cli.probed import on_probed_server
    from mcpfuzz.engine.plan.plans import plan_for

    warnings: list[str] = []
    outcome = DryRun(config.public().server_label, phases=tuple(str(p) for p in config.phases[1:]),
                     warnings=warnings)
    plan = plan_for(config)
    planning = plan[:[phase.name for phase in plan].index(PLANNING_PHASE) + 1]

    async def listed(context: RunContext, session: object) -> None:
        if context.preparation is not None:
            _collect(outcome, context, await context.preparation.finished())

    _, outcome.error = await on_probed_server(config, planning, listed, lambda event: _keep_notice(event, warnings))
    return outcome


def _keep_notice(event: Event, warnings: list[str]) -> None:
    """The probe's and the planner's notices (an --exclude-tool naming no tool, a schema that cannot be drawn)."""
    from mcpfuzz.engine.events import Notice

    if isinstance(event, Notice) and event.level != "info":
        warnings.append(event.message)


def _collect(outcome: DryRun, context: RunContext, plan: Any) -> None:
    """The prepared plan as listed targets: the called ones, then the skipped ones in the planner's order."""
    from mcpfuzz.engine.plan.protocol_phases import catalogue_context
    from mcpfuzz.jsonrpc.target_kind import TargetKind

    probe = context.probe
    if probe is not None:
        outcome.era, outcome.protocol_version = probe.era.value, probe.version
        tool = catalogue_context(context).tool if not context.plain else None
        if tool is not None and "catalogue" in outcome.phases:
            outcome.catalogue_tool = TargetKind.TOOL.label(tool)
    for target in plan.targets:
        outcome.targets.append(PlannedTarget(target.label, target.kind.value, target.safety.value))
    for label, reason in plan.skipped:
        outcome.targets.append(PlannedTarget(label, label.partition("/")[0], skipped_because=reason))
    outcome.warnings.extend(plan.warnings)
