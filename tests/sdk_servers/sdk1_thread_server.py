"""An MCP server on the real `mcp` 1.x SDK (FastMCP) whose one read-only tool waits a second on a worker thread:
over stdio, or with a PORT argument over streamable HTTP on 127.0.0.1:PORT/mcp.

Run with the venv that has mcp 1.x. A cancel cannot interrupt the thread (anyio's default), so the handler returns
its result after the SDK has already answered the cancel: mcp 1.x then fails its own `Request already responded to`
assertion and the session ends. No tool touches the network or the file system.
"""

from __future__ import annotations

import sys
import time

import anyio
from mcp.server.fastmcp import FastMCP
from mcp.types import ToolAnnotations

app = FastMCP("sdk1-thread-server")


@app.tool(annotations=ToolAnnotations(readOnlyHint=True))
async def report() -> str:
    """Build a report on a worker thread; takes a second."""
    await anyio.to_thread.run_sync(time.sleep, 1.0)
    return "the report"


if __name__ == "__main__":
    if len(sys.argv) > 1:
        import uvicorn

        uvicorn.run(app.streamable_http_app(), host="127.0.0.1", port=int(sys.argv[1]), log_level="warning")
    else:
        app.run()
