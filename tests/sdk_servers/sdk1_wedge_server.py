"""An MCP server on the real `mcp` 1.x SDK (FastMCP) over streamable HTTP on 127.0.0.1:PORT/mcp, whose one read-only
tool blocks the SDK's event loop on some input: a plain loop inside an async handler, as servers really have.

Run with the venv that has mcp 1.x: ``python sdk1_wedge_server.py PORT``. ``count`` counts down from ``n`` one step at
a time without awaiting: at once for small counts, for ever on a negative one and practically for ever on a huge one.
Meanwhile the event loop answers nothing, pings included. No tool touches the network or the file system.
"""

from __future__ import annotations

import sys

import uvicorn
from mcp.server.fastmcp import FastMCP
from mcp.types import ToolAnnotations

app = FastMCP("sdk1-wedge-server")


@app.tool(annotations=ToolAnnotations(readOnlyHint=True))
async def count(n: int) -> str:
    """Count down from n to zero."""
    while n != 0:
        n -= 1 if n > 0 else 0  # the bug: a negative count never moves
    return "counted"


if __name__ == "__main__":
    uvicorn.run(app.streamable_http_app(), host="127.0.0.1", port=int(sys.argv[1]), log_level="warning")
