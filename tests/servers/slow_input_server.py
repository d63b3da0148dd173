"""MCP server over stdio with a calculator that is slow on one family of inputs: nested powers.

Usage: ``python tests/servers/slow_input_server.py [--clean | --wedge]``

``calc(expression)`` evaluates sums and products of integers at once; an expression with nested powers (two or more
``**``, as in ``9**9**9``) makes it work for SLOW seconds first (a sleep stands in for the huge integer), then it
answers. The schema's description shows such an expression (``2**3**2``), as calculator tools often do. With
``--clean`` the calculator refuses nested powers at once, and a second tool, ``render``, takes STEADY seconds on
every call: a slow tool that is always slow is not a slow input (zero findings). With ``--wedge`` nested powers
never end: the server computes forever, burning a core and answering nothing more, as a real calculator does on
``9**9**9``. Everything else comes from ``mcp_server.Server``.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from mcp_server import Server, check_arguments, main, text_item, tool_error  # noqa: E402

SLOW = 1.5
STEADY = 0.5
CLEAN = False
WEDGE = False


class SlowInputServer(Server):
    """`calc`, slow on nested powers unless --clean; `render`, always STEADY seconds."""

    TOOLS: list[dict[str, Any]] = [
        {"name": "calc", "description": "Evaluate an arithmetic expression.",
         "inputSchema": {"type": "object", "additionalProperties": False, "required": ["expression"], "properties": {
             "expression": {"type": "string",
                            "description": "Integers with + and * and powers, e.g. `2**3**2`."}}}},
        {"name": "render", "description": "Render a short label (takes a moment).",
         "inputSchema": {"type": "object", "additionalProperties": False, "required": ["label"],
                         "properties": {"label": {"type": "string"}}}},
    ]

    def call_tool(self, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        """`calc` sleeps on nested powers (refuses them with --clean); `render` always sleeps STEADY."""
        tool = next(t for t in self.TOOLS if t["name"] == name)
        problem = check_arguments(tool["inputSchema"], arguments)
        if problem is not None:
            return tool_error(f"invalid arguments: {problem}")
        if name == "render":
            time.sleep(STEADY)
            return {"content": [text_item(f"[{arguments['label']}]")], "isError": False}
        expression = arguments["expression"]
        if expression.count("**") >= 2:
            if CLEAN:
                return tool_error("nested powers are not supported")
            while WEDGE:  # the integer that never ends: the one thread spins, nothing else is read
                pass
            time.sleep(SLOW)
            return {"content": [text_item("a very large number")], "isError": False}
        return {"content": [text_item(str(len(expression)))], "isError": False}


if __name__ == "__main__":
    if "--clean" in sys.argv:
        CLEAN = True
        sys.argv.remove("--clean")
    if "--wedge" in sys.argv:
        WEDGE = True
        sys.argv.remove("--wedge")
    sys.exit(main(server_class=SlowInputServer))
