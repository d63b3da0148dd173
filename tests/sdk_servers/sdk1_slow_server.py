"""An MCP server on the real `mcp` 1.x SDK (FastMCP), whose one read-only tool takes a second:
over stdio, or with a PORT argument over streamable HTTP on 127.0.0.1:PORT/mcp.

Run with the venv that has mcp 1.x. The tool awaits (the SDK answers pings meanwhile, and a cancel stops it):
the work in flight that cancellation is about. No tool touches the network or the file system.
"""

from __future__ import annotations

import asyncio
import sys

from mcp.server.fastmcp import FastMCP
from mcp.types import ToolAnnotations

app = FastMCP("sdk1-slow-server")


@app.tool(annotations=ToolAnnotations(readOnlyHint=True))
async def report() -> str:
    """Build a report; takes a second."""
    await asyncio.sleep(1.0)
    return "the report"


if __name__ == "__main__":
    if len(sys.argv) > 1:
        import uvicorn

        uvicorn.run(app.streamable_http_app(), host="127.0.0.1", port=int(sys.argv[1]), log_level="warning")
    else:
        app.run()
