"""An MCP server over stdio whose one tool slows down gradually with the length of its list argument.

Usage: ``python tests/servers/rising_latency_server.py``

``merge(items)`` takes about ``STEP * len(items)**2`` seconds (capped at CAP): a few milliseconds for the short lists
a schema draw usually makes, a quarter of a second from 23 items, past one second (a `slow-input` finding) from 45.
The schema sets no `maxItems`, so no boundary call and no example reaches the slow lists: a search gets there by
drawing a long list by chance, or by climbing toward slower answers (the fuzz phase's latency target). Everything
else comes from ``mcp_server.Server``.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from mcp_server import Server, is_integer, main, text_item, tool_error  # noqa: E402

STEP = 0.0005  # seconds times the square of the list's length: a quadratic merge
CAP = 3.0  # seconds at most, so that a run stays short whatever the search draws


class RisingLatencyServer(Server):
    """`merge`, whose time grows with the square of its list's length."""

    TOOLS: list[dict[str, Any]] = [{
        "name": "merge", "description": "Merge a list of numbers into a sorted list without duplicates.",
        "inputSchema": {"type": "object", "additionalProperties": False, "required": ["items"],
                        "properties": {"items": {"type": "array", "items": {"type": "integer"}}}},
    }]

    def call_tool(self, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        """Sleep for the quadratic merge's time, then answer the merged list's length."""
        items = arguments.get("items")
        if set(arguments) != {"items"} or not isinstance(items, list) or not all(is_integer(item) for item in items):
            return tool_error("invalid arguments: `items` must be a list of integers, and nothing else is taken")
        time.sleep(min(CAP, STEP * len(items) ** 2))
        return {"content": [text_item(str(len(set(items))))], "isError": False}


if __name__ == "__main__":
    sys.exit(main(server_class=RisingLatencyServer))
