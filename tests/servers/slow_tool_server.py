"""MCP server over stdio whose one tool, ``wait``, answers correctly but only after ``--delay`` seconds.

Usage: ``python tests/servers/slow_tool_server.py [--delay SECONDS]``

Not a bug: a tool may take its time, even one that blocks the server's only thread (no ping is answered
meanwhile). With ``--timeout`` below the delay mcpfuzz waits on to ``--call-timeout`` and notes a slow tool;
only with ``--call-timeout`` (or the config file's ``[targets."tool/wait"] timeout``) below the delay too is it
a ``no-hang`` (nothing answered at all). Everything else comes from ``mcp_server.Server``.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from mcp_server import Server, check_arguments, main, text_item, tool_error  # noqa: E402

DELAY = 1.5


class SlowServer(Server):
    """One tool without arguments that sleeps before answering (the server reads nothing meanwhile)."""

    TOOLS: list[dict[str, Any]] = [{
        "name": "wait", "description": "Answer after a delay.",
        "inputSchema": {"type": "object", "properties": {}, "required": [], "additionalProperties": False},
    }]

    def call_tool(self, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        """Invalid arguments are an isError result at once; valid ones are answered after the delay."""
        problem = check_arguments(self.TOOLS[0]["inputSchema"], arguments)
        if problem is not None:
            return tool_error(f"invalid arguments: {problem}")
        time.sleep(DELAY)
        return {"content": [text_item("done")], "isError": False}


if __name__ == "__main__":
    if "--delay" in sys.argv:
        at = sys.argv.index("--delay")
        DELAY = float(sys.argv[at + 1])
        del sys.argv[at:at + 2]
    sys.exit(main(server_class=SlowServer))
