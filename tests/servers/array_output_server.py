"""A clean 2026-07-28 MCP server over stdio whose tool returns an array as its structured result.

Usage: ``python tests/servers/array_output_server.py``

2026-07-28 (SEP-2106) lets a tool's ``outputSchema`` be any JSON Schema 2020-12 and ``structuredContent`` any
JSON value: ``split`` declares an array outputSchema and answers with an array. Correct in that era, so a run
gives zero findings; asked for 2025-11-25 (where both are objects) the same answers are findings
(``response-schema``, lint ``SCHEMA-002``). Everything else comes from ``mcp_server.Server``.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from mcp_server import Server, check_arguments, main, text_item, tool_error  # noqa: E402


class ArrayOutputServer(Server):
    """One tool, ``split(text)``: the words of a text, as an array of strings."""

    TOOLS: list[dict[str, Any]] = [{
        "name": "split", "description": "Split a text into words.",
        "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"],
                        "additionalProperties": False},
        "outputSchema": {"type": "array", "items": {"type": "string"}},
    }]

    def call_tool(self, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        """Invalid arguments are an isError result; valid ones the words, as text and as an array."""
        problem = check_arguments(self.TOOLS[0]["inputSchema"], arguments)
        if problem is not None:
            return tool_error(f"invalid arguments: {problem}")
        words = arguments["text"].split()
        return {"content": [text_item(" ".join(words))], "structuredContent": words, "isError": False}


if __name__ == "__main__":
    sys.exit(main(server_class=ArrayOutputServer))
