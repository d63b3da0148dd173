"""Which tools get fuzzed: safety annotations, --include-tool/--exclude-tool, and schemas we can draw from."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field

from mcpfuzz.strategies.arguments.schema_prep import SchemaProblem
from mcpfuzz.strategies.arguments.schema_values import ArgumentSchema

# MCP server/tools annotations: hints, but the only ones that say a call may do harm.
RISKY_HINTS = ("destructiveHint", "openWorldHint")


@dataclass
class ToolTarget:
    """A tool mcpfuzz will call, with its argument schema and a few valid values drawn up front."""

    tool: dict
    schema: ArgumentSchema
    plain: list[dict]
    populated: list[dict]

    @property
    def name(self) -> str:
        """The tool's name."""
        return self.tool["name"]

    def digest(self, server: str) -> str:
        """Server + tool + schema: the key of this tool's Hypothesis example database."""
        text = json.dumps([server, self.name, self.tool.get("inputSchema")], sort_keys=True, default=str)
        return hashlib.sha256(text.encode()).hexdigest()[:16]


@dataclass
class ToolPlan:
    """The tools to fuzz and the ones skipped, each with its reason."""

    targets: list[ToolTarget] = field(default_factory=list)
    skipped: list[tuple[str, str]] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


def skip_reason(tool: dict, include: tuple[str, ...], exclude: tuple[str, ...]) -> str | None:
    """Why a tool is not called, or None. Only an explicit `true` hint skips (most servers annotate nothing)."""
    name = tool.get("name")
    if not isinstance(name, str):
        return "it has no string name"
    if name in exclude:
        return "--exclude-tool"
    if name in include:
        return None
    annotations = tool.get("annotations") if isinstance(tool.get("annotations"), dict) else {}
    for hint in RISKY_HINTS:
        if annotations.get(hint) is True:
            return f"annotated {hint}: true (name it with --include-tool to call it)"
    return None


def plan_tools(tools: list[dict], *, include: tuple[str, ...], exclude: tuple[str, ...], seed: int) -> ToolPlan:
    """Select the tools and prepare their schemas (CPU work: run it off the event loop)."""
    plan = ToolPlan()
    listed = {tool.get("name") for tool in tools}
    for option, names in (("--include-tool", include), ("--exclude-tool", exclude)):
        for name in names:
            if name not in listed:
                plan.warnings.append(f"{option} {name!r} names no tool of this server; its tools are "
                                     f"{', '.join(sorted(str(n) for n in listed)) or '(none)'}")
    seen: set[str] = set()
    for tool in tools:
        reason = skip_reason(tool, include, exclude)
        name = str(tool.get("name"))
        if reason is None and name in seen:
            reason = "listed twice; the first listing is fuzzed"
        if reason is not None:
            plan.skipped.append((name, reason))
            continue
        seen.add(name)
        schema = tool.get("inputSchema")
        if not isinstance(schema, dict):
            plan.skipped.append((name, "it has no object inputSchema"))
            continue
        try:
            arguments = ArgumentSchema(schema)
            plain, populated = arguments.preflight(seed)
        except SchemaProblem as problem:
            plan.skipped.append((name, f"cannot draw arguments: `{problem.keyword}`"))
            plan.warnings.append(f"tool {name!r}: {problem.message} (keyword `{problem.keyword}`); tip: "
                                 f"{problem.tip}")
            continue
        plan.targets.append(ToolTarget(tool, arguments, plain, populated))
    return plan
