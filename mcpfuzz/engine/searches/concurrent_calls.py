"""The tool calls a concurrency case may send: tools annotated readOnlyHint: true, with valid arguments."""

from __future__ import annotations

import json
from typing import Any

from mcpfuzz.engine.surface.targets import CallTarget, Safety
from mcpfuzz.jsonrpc.target_kind import TargetKind
from mcpfuzz.strategies.arguments.schema_prep import SchemaProblem

MAX_TOOLS = 2


def read_only_tool_calls(targets: list[CallTarget]) -> list[tuple[str, dict[str, Any]]]:
    """(tool, arguments) pairs for at most MAX_TOOLS of the selected tool targets annotated readOnlyHint: true:
    the simplest valid arguments and, when different, fully populated ones, each checked against the inputSchema
    (prepares those targets if they are not yet: CPU work, run it off the event loop).

    Only an explicit readOnlyHint counts: this burst mixes the tools with lists and reads, whose answers are
    compared with their answers alone, which a tool that changes state would change; and it runs before any
    latency is known, so a tool that blocks its server a while would pass for a hang. Every other tool is called
    at once in the flight phase (engine/plan/flight_phases.py), as long as its calls were measured to take.
    """
    calls: list[tuple[str, dict[str, Any]]] = []
    chosen = [target for target in targets if target.kind is TargetKind.TOOL and target.safety is Safety.READ_ONLY]
    for target in chosen[:MAX_TOOLS]:
        try:
            prepared = target.prepare()
        except SchemaProblem:
            continue
        distinct: dict[str, dict[str, Any]] = {}
        for arguments in (prepared.plain[0], prepared.populated[0]):
            if isinstance(arguments, dict) and prepared.schema.is_valid(arguments):
                distinct.setdefault(json.dumps(arguments, sort_keys=True), arguments)
        calls += [(target.name, arguments) for arguments in distinct.values()]
    return calls
