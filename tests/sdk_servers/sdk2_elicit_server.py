"""A small MCP server on the real `mcp` 2.x SDK (MCPServer) whose tool, prompt and resource template ask the client
for a name, over stdio.

In 2026-07-28 the SDK asks through a multi round-trip request (`input_required`): the tool through `Resolve`, which
seals its `requestState` and refuses -32021 itself; the prompt and the template return an `InputRequiredResult`
of their own (the SDK passes it through and hands the retry's answers over on `ctx.input_responses`), stateless, and
check the client's capabilities themselves, as an author of either must. Up to 2025-11-25 the tool sends
`elicitation/create` itself and the prompt and the template answer without asking. No handler touches the network
or the file system.
"""

from __future__ import annotations

from typing import Annotated, Any

from mcp.server.mcpserver import Context, Elicit, ElicitationResult, MCPServer, Resolve
from mcp.shared.exceptions import MCPError
from mcp_types import ElicitRequest, ElicitRequestFormParams, ElicitResult, InputRequiredResult
from mcp_types.jsonrpc import MISSING_REQUIRED_CLIENT_CAPABILITY
from pydantic import BaseModel

app = MCPServer("sdk2-elicit-server")
MODERN = "2026-07-28"
ASK = ElicitRequest(params=ElicitRequestFormParams(message="What is your name?", requested_schema={
    "type": "object", "properties": {"name": {"type": "string", "minLength": 1}}, "required": ["name"]}))


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


def asked_name(ctx: Context[Any, Any]) -> str | InputRequiredResult:
    """The name from the retry's answer; on the first round (or a retry without it) the request for it."""
    if ctx.protocol_version != MODERN:
        return "friend"
    capabilities = ctx.client_capabilities
    if capabilities is None or capabilities.elicitation is None:
        raise MCPError(code=MISSING_REQUIRED_CLIENT_CAPABILITY, message="a name is asked by elicitation",
                       data={"requiredCapabilities": {"elicitation": {}}})
    answer = (ctx.input_responses or {}).get("name")
    if not isinstance(answer, ElicitResult):
        return InputRequiredResult(input_requests={"name": ASK})
    name = answer.content.get("name") if answer.action == "accept" and answer.content else None
    return name if isinstance(name, str) and name else "nobody"


@app.prompt()
def introduce(ctx: Context[Any, Any]) -> str | InputRequiredResult:
    """A message introducing the user by the name they give."""
    name = asked_name(ctx)
    return name if isinstance(name, InputRequiredResult) else f"Please meet {name[:100]}."


@app.resource("greeting://card/{lang}")
def card(lang: str, ctx: Context[Any, Any]) -> str | InputRequiredResult:
    """A greeting card in a language, for the user by the name they give."""
    name = asked_name(ctx)
    return name if isinstance(name, InputRequiredResult) else f"[{lang[:20]}] Hello, {name[:100]}"


if __name__ == "__main__":
    app.run()
