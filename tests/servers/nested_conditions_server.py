"""An MCP server over stdio whose one tool crashes only behind four nested conditions on its arguments.

Usage: ``python tests/servers/nested_conditions_server.py``

The tool ``route(a, b, c, d)`` crashes the process when ``a == 7``, then ``b`` is all digits, then ``c > 1000``,
then ``d`` holds exactly 3 items; each condition met runs lines the ones before did not. Drawn blind, all four hold
together about once in millions of calls; a search that keeps the calls reaching new lines and changes them a
little meets them one after the other (`--coverage`). Everything else comes from ``mcp_server.Server``.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from mcp_server import Server, main, text_item, tool_error  # noqa: E402


class NestedConditionsServer(Server):
    """One tool, ``route``, with a crash four conditions deep."""

    TOOLS: list[dict[str, Any]] = [{
        "name": "route", "description": "Route a parcel.",
        "inputSchema": {"type": "object", "properties": {
            "a": {"type": "integer", "minimum": 0, "maximum": 255},
            "b": {"type": "string", "maxLength": 20},
            "c": {"type": "integer"},
            "d": {"type": "array", "items": {"type": "integer"}, "maxItems": 8},
        }, "required": ["a", "b", "c", "d"], "additionalProperties": False},
    }]

    def call_tool(self, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        """The bug: the fourth nested condition raises, and nothing catches it."""
        if not valid(arguments):
            return tool_error("invalid arguments")
        a, b, c, d = (arguments[key] for key in "abcd")
        depth = 0
        if a == 7:
            depth = 1
            if b.isdigit():
                depth = 2
                if c > 1000:
                    depth = 3
                    if len(d) == 3:
                        raise RuntimeError("routing table corrupted at depth 4")
        return {"content": [text_item(f"routed at depth {depth}")], "isError": False}


def is_integer(value: Any) -> bool:
    """A JSON integer (a bool is not one)."""
    return isinstance(value, int) and not isinstance(value, bool)


def valid(arguments: dict[str, Any]) -> bool:
    """Whether the arguments meet the tool's inputSchema (checked by hand: standard library only)."""
    if set(arguments) != set("abcd"):
        return False
    a, b, c, d = (arguments[key] for key in "abcd")
    return is_integer(a) and 0 <= a <= 255 and isinstance(b, str) and len(b) <= 20 and is_integer(c) and \
        isinstance(d, list) and len(d) <= 8 and all(is_integer(item) for item in d)


if __name__ == "__main__":
    sys.exit(main(server_class=NestedConditionsServer))
