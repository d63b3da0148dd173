"""An MCP server on the real `mcp` 2.x SDK (MCPServer), whose one read-only tool takes a second:
over stdio, or with a PORT argument over streamable HTTP on 127.0.0.1:PORT/mcp.

The tool awaits (the SDK answers meanwhile, and a cancel stops it): the work in flight that cancellation is
about. No tool touches the network or the file system.
"""

from __future__ import annotations

import asyncio
import sys

from mcp.server.mcpserver import MCPServer
from mcp.types import ToolAnnotations

app = MCPServer("sdk2-slow-server", version="0.1.0")


@app.tool(annotations=ToolAnnotations(read_only_hint=True))
async def report() -> str:
    """Build a report; takes a second."""
    await asyncio.sleep(1.0)
    return "the report"


if __name__ == "__main__":
    if len(sys.argv) > 1:
        import uvicorn

        app_over_http = app.streamable_http_app(host="127.0.0.1")
        uvicorn.run(app_over_http, host="127.0.0.1", port=int(sys.argv[1]), log_level="warning")
    else:
        app.run()
