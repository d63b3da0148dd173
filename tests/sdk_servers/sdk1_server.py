"""A small MCP server on the real `mcp` 1.x SDK (FastMCP), over stdio.

Run with the venv that has mcp 1.x: /tmp/venv-mcp1/bin/python tests/sdk_servers/sdk1_server.py
No tool touches the network or the file system.
"""

from __future__ import annotations

from mcp.server.fastmcp import FastMCP
from mcp.server.fastmcp.exceptions import ToolError
from pydantic import BaseModel

ITEMS = {"a1": "apple", "b2": "banana"}

app = FastMCP("sdk1-test-server")


class Sum(BaseModel):
    total: int


@app.tool()
def add(a: int, b: int) -> Sum:
    """Add two integers."""
    return Sum(total=a + b)


@app.tool()
def echo(text: str) -> str:
    """Return the text unchanged."""
    return text


@app.tool()
def lookup(id: str) -> str:
    """Look an item up by id; unknown ids are a domain error."""
    if id not in ITEMS:
        raise ToolError(f"no item with id {id!r}")
    return ITEMS[id]


if __name__ == "__main__":
    app.run()
