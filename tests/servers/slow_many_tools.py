"""A clean MCP server over stdio that starts slowly and declares many tools, as real servers do.

Usage: ``python tests/servers/slow_many_tools.py [--startup-delay SECONDS] [--tools N]``

It sleeps ``--startup-delay`` seconds (default 3) before reading stdin, as a server that imports a large
framework does, then serves ``--tools`` tools (default 30) with small schemas: a string, an integer and an
optional enum. Every third tool is annotated read-only. Nothing here is a bug: a correct run gives zero
findings and calls every tool; everything else comes from ``mcp_server.Server``.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from mcp_server import Server, check_arguments, main, text_item, tool_error  # noqa: E402


def declare_tools(count: int) -> list[dict[str, Any]]:
    """`count` tools named tool_00, tool_01, ...: small flat schemas the base server's checker understands."""
    tools = []
    for number in range(count):
        tool: dict[str, Any] = {
            "name": f"tool_{number:02d}",
            "description": f"Look up record {number} by a key and a count.",
            "inputSchema": {
                "type": "object",
                "properties": {"key": {"type": "string"}, "count": {"type": "integer"}},
                "required": ["key"],
                "additionalProperties": False,
            },
        }
        if number % 3 == 0:
            tool["annotations"] = {"readOnlyHint": True}
        tools.append(tool)
    return tools


class SlowManyToolsServer(Server):
    """Many tools, each answering with what it was given."""

    TOOLS: list[dict[str, Any]] = declare_tools(30)

    def call_tool(self, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        """Invalid arguments are an isError result; valid ones are echoed back."""
        tool = next(t for t in self.TOOLS if t["name"] == name)
        problem = check_arguments(tool["inputSchema"], arguments)
        if problem is not None:
            return tool_error(f"invalid arguments: {problem}")
        return {"content": [text_item(f"{name}: {len(arguments['key'])} characters")], "isError": False}


if __name__ == "__main__":
    parser = argparse.ArgumentParser(add_help=False)
    parser.add_argument("--startup-delay", type=float, default=3.0)
    parser.add_argument("--tools", type=int, default=30)
    options, rest = parser.parse_known_args()
    SlowManyToolsServer.TOOLS = declare_tools(options.tools)
    time.sleep(options.startup_delay)  # before reading anything: what a slow import looks like from outside
    sys.exit(main(rest, server_class=SlowManyToolsServer))
