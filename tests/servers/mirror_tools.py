"""mcp_server.Server with one more tool whose arguments are mirrored into HTTP headers (x-mcp-header, SEP-2243).

Served by ``http_server.py --mirror``: `route` mirrors `region` (a string) into `Mcp-Param-Region` and `shard`
(an integer) into `Mcp-Param-Shard`; the HTTP layer checks the headers against the body.
"""

from __future__ import annotations

from typing import Any

from mcp_server import TOOLS, Server, check_arguments, text_item, tool_error

ROUTE_TOOL: dict[str, Any] = {
    "name": "route",
    "description": "Say where a query would run.",
    "inputSchema": {
        "type": "object",
        "properties": {
            "region": {"type": "string", "x-mcp-header": "Region"},
            "shard": {"type": "integer", "x-mcp-header": "Shard"},
            "query": {"type": "string"},
        },
        "required": ["region", "query"],
        "additionalProperties": False,
    },
    "annotations": {"readOnlyHint": True},
}


class MirrorServer(Server):
    """The stdio server's tools and `route`."""

    TOOLS = [*TOOLS, ROUTE_TOOL]

    def call_tool(self, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        """`route` names its region; the others are mcp_server's."""
        if name == "route":
            problem = check_arguments(ROUTE_TOOL["inputSchema"], arguments)
            if problem is not None:
                return tool_error(f"invalid arguments: {problem}")
            return {"content": [text_item(f"region {arguments.get('region')!r}")], "isError": False}
        return super().call_tool(name, arguments)
