"""A spec-correct stdio MCP server with one tool whose inputSchema has 30 properties and nested objects.

Usage: python benchmarks/nested_server.py [--read-only]

The protocol (both eras, paging, -32602 for an unknown tool) comes from the clean test server
`tests/servers/mcp_server.py`; this subclass lists the `configure` tool, validates its arguments
with jsonschema (Draft 2020-12, formats checked) and answers an `isError` result for invalid ones.
The benchmark fuzzes it to time calls on a large schema; a correct fuzzer finds nothing here. `--read-only`
annotates the tool readOnlyHint: true (mcpfuzz may then keep several of its calls in flight).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from jsonschema import Draft202012Validator, FormatChecker

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests" / "servers"))

from mcp_server import Server, main, text_item, tool_error  # noqa: E402

TOOL_NAME = "configure"
# One of each kind of property, cycled: bounds, enums, formats and arrays all in one schema.
KINDS: list[dict[str, Any]] = [
    {"type": "string", "maxLength": 40},
    {"type": "integer", "minimum": 0, "maximum": 1000},
    {"type": "number"},
    {"type": "boolean"},
    {"enum": ["a", "b", "c"]},
    {"type": "string", "format": "uuid"},
    {"type": "array", "items": {"type": "string"}, "maxItems": 4},
]
# A valid value per kind, in the same order (the raw client sends these).
KIND_VALUES: list[Any] = ["text", 7, 1.5, True, "b", "12345678-1234-5678-1234-567812345678", ["x", "y"]]


def nested_schema(properties: int = 30) -> dict[str, Any]:
    """A 30-property object schema: flat typed fields, enums, bounds, formats and two nested objects."""
    inner = {"type": "object", "properties": {f"f{i}": KINDS[i % len(KINDS)] for i in range(6)},
             "required": ["f0", "f1"], "additionalProperties": False}
    props: dict[str, Any] = {f"p{i}": KINDS[i % len(KINDS)] for i in range(properties - 2)}
    props["nested_a"] = inner
    props["nested_b"] = {**inner, "properties": {**inner["properties"], "deep": inner}}
    return {"type": "object", "properties": props, "required": ["p0", "p1", "nested_a"],
            "additionalProperties": False}


def nested_example(properties: int = 30) -> dict[str, Any]:
    """A valid argument object for `nested_schema` with every property present."""
    inner = {f"f{i}": KIND_VALUES[i % len(KIND_VALUES)] for i in range(6)}
    value: dict[str, Any] = {f"p{i}": KIND_VALUES[i % len(KIND_VALUES)] for i in range(properties - 2)}
    value["nested_a"] = dict(inner)
    value["nested_b"] = {**inner, "deep": dict(inner)}
    return value


TOOLS: list[dict[str, Any]] = [{
    "name": TOOL_NAME,
    "description": "Accept a large configuration object.",
    "inputSchema": nested_schema(),
}]
VALIDATOR = Draft202012Validator(nested_schema(), format_checker=FormatChecker())


class NestedServer(Server):
    """The clean server with the one large tool."""

    TOOLS = TOOLS
    SERVER_INFO = {"name": "nested-clean", "version": "1.0"}

    def call_tool(self, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        """Invalid arguments get an isError result naming the path only (never the value)."""
        error = next(iter(VALIDATOR.iter_errors(arguments)), None)
        if error is not None:
            where = "/".join(str(part) for part in error.absolute_path) or "(root)"
            return tool_error(f"invalid arguments at {where}: breaks '{error.validator}'")
        return {"content": [text_item(f"accepted {len(arguments)} properties")], "isError": False}


class ReadOnlyNestedServer(NestedServer):
    """The same tool, annotated readOnlyHint: true."""

    TOOLS = [{**TOOLS[0], "annotations": {"readOnlyHint": True}}]


if __name__ == "__main__":
    read_only = "--read-only" in sys.argv[1:]
    sys.exit(main([arg for arg in sys.argv[1:] if arg != "--read-only"],
                  server_class=ReadOnlyNestedServer if read_only else NestedServer))
