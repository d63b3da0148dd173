"""A `tools/call` of a listed tool, or a call of a declared plain JSON-RPC method."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from mcpfuzz.jsonrpc.parts.part import CasePart, case_part

# How `extra.arguments` names valid and invalid tool arguments (the strategies' `ArgumentCall.kind`).
POSITIVE, NEGATIVE = "positive", "negative"


@case_part("tool_call")
@dataclass(frozen=True)
class ToolCallCheck(CasePart):
    """A `tools/call` of a listed tool (read by valid-input-accepted, output-schema and the corpus replay).

    `valid` says the arguments satisfy the tool's inputSchema; `rule` is the schema keyword
    invalid arguments break; `unicode_unsafe` marks a lone surrogate, which a parser may refuse.
    """

    tool: str | None
    valid: bool
    rule: str = ""
    output_schema: Mapping[str, Any] | None = field(default=None, hash=False)
    unicode_unsafe: bool = False
    # A plain JSON-RPC method's declared result schema (OpenRPC): the whole `result` must conform (response-schema).
    result_schema: Mapping[str, Any] | None = field(default=None, hash=False)
    # A plain method's declared error codes: valid params may get these or a JSON-RPC 2.0 code, no other. None: any.
    declared_errors: tuple[int, ...] | None = None

    def to_extra(self) -> dict[str, Any]:
        extra: dict[str, Any] = {
            "tool": self.tool, "arguments": POSITIVE if self.valid else NEGATIVE, "rule": self.rule,
            "output_schema": None if self.output_schema is None else dict(self.output_schema)}
        if self.result_schema is not None:
            extra["result_schema"] = dict(self.result_schema)
        if self.declared_errors is not None:
            extra["declared_errors"] = list(self.declared_errors)
        if self.unicode_unsafe:
            extra["unicode_unsafe"] = True
        return extra

    @classmethod
    def from_extra(cls, extra: Mapping[str, Any]) -> ToolCallCheck | None:
        if not {"tool", "arguments", "output_schema"} & set(extra):
            return None
        schema, result_schema = extra.get("output_schema"), extra.get("result_schema")
        declared, tool = extra.get("declared_errors"), extra.get("tool")
        return cls(tool=tool if isinstance(tool, str) else None, valid=extra.get("arguments") == POSITIVE,
                   rule=str(extra.get("rule") or ""), output_schema=schema if isinstance(schema, dict) else None,
                   unicode_unsafe=bool(extra.get("unicode_unsafe")),
                   result_schema=result_schema if isinstance(result_schema, dict) else None,
                   declared_errors=tuple(c for c in declared if isinstance(c, int)) if isinstance(
                       declared, list) else None)
