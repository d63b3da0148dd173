"""MCP server over stdio whose first tools are long polls: a call waits for commands that never come, while the
server goes on answering everything else, as an app server's `poll_commands` does.

Usage: ``python tests/servers/long_poll_server.py``

Tools, in listing order: ``poll_a`` .. ``poll_f`` (long polls: never answered within any timeout),
``plot`` (a large schema: arrays of nested records, bounded by minItems and maxItems, as chart servers declare),
``save_note(name)``; and one resource, ``ui://app/view.html``. Nothing here is a bug a client can see but slowness:
a run should still call every target, the ones listed after the polls included. Everything else comes from
``mcp_server.Server``.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from mcp_server import InvalidParams, NoReply, RpcError, Server, check_arguments, main, text_item, tool_error  # noqa: E402

NO_ARGUMENTS = {"type": "object", "properties": {}, "required": [], "additionalProperties": False}
RECORD = {"type": "object", "properties": {
    "label": {"type": "string", "maxLength": 30}, "value": {"type": "number"},
    "style": {"type": "object", "properties": {"color": {"type": "string"}, "width": {"type": "integer"},
                                               "dash": {"type": "array", "items": {"type": "number"},
                                                        "maxItems": 4}}}},
    "required": ["label", "value"]}
PLOT = {"type": "object", "properties": {
    "series": {"type": "array", "minItems": 1, "maxItems": 50, "items": {
        "type": "object", "properties": {"name": {"type": "string"},
                                         "points": {"type": "array", "items": RECORD, "minItems": 1, "maxItems": 40}},
        "required": ["name", "points"]}},
    "title": {"type": "string"}, "width": {"type": "integer", "minimum": 100, "maximum": 2000}},
    "required": ["series"]}
PAGE = {"uri": "ui://app/view.html", "name": "view", "mimeType": "text/html;profile=mcp-app"}


def _poll(name: str) -> dict[str, Any]:
    return {"name": name, "description": "Wait for the next command of the viewer.", "inputSchema": NO_ARGUMENTS}


class LongPollServer(Server):
    """Long-poll tools first, then a large schema, a plain tool and an app resource."""

    CAPABILITIES: dict[str, Any] = {"tools": {}, "resources": {}}
    TOOLS: list[dict[str, Any]] = [
        *(_poll(f"poll_{letter}") for letter in "abcdef"),
        {"name": "plot", "description": "Draw series.", "inputSchema": PLOT},
        {"name": "save_note", "description": "Save a note.", "inputSchema": {
            "type": "object", "properties": {"name": {"type": "string"}},
            "required": ["name"], "additionalProperties": False}},
    ]

    def call_tool(self, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        tool = next(t for t in self.TOOLS if t["name"] == name)
        problem = check_arguments(tool["inputSchema"], arguments)
        if problem is not None:
            return tool_error(f"invalid arguments: {problem}")
        if name.startswith("poll_"):
            raise NoReply  # the commands it waits for never come
        return {"content": [text_item(f"{name}: done")], "isError": False}

    def serve_method(self, method: str, params: dict[str, Any], *, modern: bool) -> dict[str, Any] | None:
        hints = {"ttlMs": 0, "cacheScope": "private"} if modern else {}
        if method == "resources/list":
            return {"resources": [PAGE], **hints}
        if method == "resources/templates/list":
            return {"resourceTemplates": [], **hints}
        if method == "resources/read":
            if not isinstance(params.get("uri"), str):
                raise InvalidParams("uri must be a string")
            if params["uri"] != PAGE["uri"]:
                raise RpcError(-32602 if modern else -32002, "resource not found")
            return {"contents": [{"uri": PAGE["uri"], "mimeType": PAGE["mimeType"], "text": "<html></html>"}],
                    **hints}
        return None


if __name__ == "__main__":
    sys.exit(main(server_class=LongPollServer))
