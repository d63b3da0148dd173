"""The tool calls a concurrency case may send: tools annotated readOnlyHint: true, with valid arguments."""

from __future__ import annotations

import json
from typing import Any

from mcpfuzz.engine.phases.target_kinds import TOOLS, tool_safety
from mcpfuzz.engine.phases.targets import Safety, Selection, skip_reason
from mcpfuzz.strategies.arguments.schema_prep import SchemaProblem
from mcpfuzz.strategies.arguments.schema_values import ArgumentSchema

MAX_TOOLS = 2


def read_only_tool_calls(tools: list[dict], selection: Selection, seed: int) -> list[tuple[str, dict[str, Any]]]:
    """(tool, arguments) pairs for at most MAX_TOOLS tools annotated readOnlyHint: true and not left out by the
    selection: the simplest valid arguments drawn and, when different, fully populated ones, each checked
    against the inputSchema (CPU work: run it off the event loop).

    Only an explicit readOnlyHint counts: naming a tool with an include option lets it be called, not called
    many times at once, since a tool that changes state can change what the other requests answer.
    """
    calls: list[tuple[str, dict[str, Any]]] = []
    chosen = [tool for tool in tools if tool_safety(tool) is Safety.READ_ONLY and skip_reason(TOOLS, tool, selection)
              is None and isinstance(tool.get("inputSchema"), dict)]
    for tool in chosen[:MAX_TOOLS]:
        try:
            schema = ArgumentSchema(tool["inputSchema"])
            plain, populated = schema.preflight(seed)
        except SchemaProblem:
            continue
        distinct: dict[str, dict[str, Any]] = {}
        for arguments in (plain[0], populated[0]):
            if isinstance(arguments, dict) and schema.is_valid(arguments):
                distinct.setdefault(json.dumps(arguments, sort_keys=True), arguments)
        calls += [(tool["name"], arguments) for arguments in distinct.values()]
    return calls
