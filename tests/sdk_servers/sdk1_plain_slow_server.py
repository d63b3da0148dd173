"""An MCP server on the real `mcp` 1.x SDK (FastMCP) whose tools carry no annotations, as most servers' do: `report`
takes a second, `lookup` answers a key at once, `note` keeps a count of its calls (a state change). Stdio.

Run with the venv that has mcp 1.x. `report` awaits, so the SDK reads a cancel while it works and answers the
cancelled call with error code 0 (python-sdk#2480). No tool touches the network or the file system.
"""

from __future__ import annotations

import asyncio
from typing import Literal

from mcp.server.fastmcp import FastMCP

app = FastMCP("sdk1-plain-slow-server")
notes: list[str] = []


@app.tool()
async def report() -> str:
    """Build a report; takes a second."""
    await asyncio.sleep(1.0)
    return "the report"


@app.tool()
def lookup(key: Literal["alpha", "beta", "gamma", "delta"]) -> str:
    """Look a key up."""
    return f"value of {key}"


@app.tool()
def note(text: str) -> str:
    """Keep a note; answers how many notes are kept (each call changes the answer of the next)."""
    notes.append(text[:100])
    del notes[:-100]
    return f"{len(notes)} notes kept"


if __name__ == "__main__":
    app.run()
