"""A small MCP server on the real `mcp` 2.x SDK (MCPServer) whose tool asks the client for a name, over stdio.

In 2026-07-28 the SDK asks through a multi round-trip request (`input_required`, a sealed `requestState`); up to
2025-11-25 it sends `elicitation/create` itself. No tool touches the network or the file system.
"""

from __future__ import annotations

from typing import Annotated

from mcp.server.mcpserver import Elicit, ElicitationResult, MCPServer, Resolve
from pydantic import BaseModel

app = MCPServer("sdk2-elicit-server")


class Name(BaseModel):
    name: str


def ask_name() -> Elicit[Name]:
    """The name comes from the user."""
    return Elicit("What is your name?", Name)


@app.tool()
def greet(answer: Annotated[ElicitationResult[Name], Resolve(ask_name)]) -> str:
    """Greet the user by the name they give."""
    if answer.action != "accept":
        return f"no name ({answer.action})"
    return f"Hello, {answer.data.name}"


if __name__ == "__main__":
    app.run()
