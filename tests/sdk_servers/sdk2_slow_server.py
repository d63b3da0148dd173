"""An MCP server on the real `mcp` 2.x SDK (MCPServer), over stdio, whose one read-only tool takes a second.

The tool awaits (the SDK answers meanwhile, and a cancel stops it): the work in flight that cancellation is
about. No tool touches the network or the file system.
"""

from __future__ import annotations

import asyncio

from mcp.server.mcpserver import MCPServer
from mcp.types import ToolAnnotations

app = MCPServer("sdk2-slow-server", version="0.1.0")


@app.tool(annotations=ToolAnnotations(read_only_hint=True))
async def report() -> str:
    """Build a report; takes a second."""
    await asyncio.sleep(1.0)
    return "the report"


if __name__ == "__main__":
    app.run()
