"""A small MCP server on the real `mcp` 1.x SDK (FastMCP) whose tool asks the client for a name (elicitation) and
for a sampled message, over stdio.

Run with the venv that has mcp 1.x: .venv-mcp1/bin/python tests/sdk_servers/sdk1_elicit_server.py
No tool touches the network or the file system.
"""

from __future__ import annotations

from mcp.server.fastmcp import Context, FastMCP
from mcp.types import SamplingMessage, TextContent
from pydantic import BaseModel

app = FastMCP("sdk1-elicit-server")


class Name(BaseModel):
    name: str


@app.tool()
async def greet(ctx: Context) -> str:
    """Greet the user by the name they give."""
    answer = await ctx.elicit("What is your name?", Name)
    if answer.action != "accept":
        return f"no name ({answer.action})"
    return f"Hello, {answer.data.name}"


@app.tool()
async def summarise(text: str, ctx: Context) -> str:
    """Summarise a text with the client's model."""
    message = SamplingMessage(role="user", content=TextContent(type="text", text=f"Summarise: {text}"))
    result = await ctx.session.create_message(messages=[message], max_tokens=50)
    return result.content.text if isinstance(result.content, TextContent) else "no text"


if __name__ == "__main__":
    app.run()
