"""A filesystem-like server with three causes, each showing on many frames: a fuzzer must report three findings.

Usage: ``python tests/servers/one_cause_server.py``

1. Its path tools log to stdout, as a TypeScript server's `console.log("requestedPath", path)` does: a label then
   the argument as a free text tail (any characters: spaces, quotes, Unicode), then the parent folder and the
   allowed folders. Every line differs; there is one writer to fix.
2. Its framework validates no tool's arguments: every tool answers a successful result whatever it is sent, so
   each tool accepts arguments its inputSchema forbids. One place to fix, whatever the tool.
3. It answers every notification it does not know with an error, as it answers an unknown request: one dispatcher
   to fix, whatever the notification.

Everything else is the clean ``mcp_server.Server``.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from mcp_server import KNOWN_NOTIFICATIONS, Server, main, text_item  # noqa: E402

ALLOWED = ["/srv/data", "/home/user/projects"]


def path_tool(name: str, description: str, **extra: dict[str, Any]) -> dict[str, Any]:
    """A tool taking a path (and maybe more), with a strict inputSchema its server never enforces."""
    return {"name": name, "description": description,
            "inputSchema": {"type": "object", "properties": {"path": {"type": "string"}, **extra},
                            "required": ["path"], "additionalProperties": False}}


def console_log(*parts: Any) -> None:
    """Node's console.log: its arguments joined by spaces, strings bare, on stdout (where only protocol belongs)."""
    text = " ".join(part if isinstance(part, str) else repr(part) for part in parts)
    sys.stdout.buffer.write(text.encode("utf-8", "backslashreplace") + b"\n")
    sys.stdout.flush()


class OneCauseServer(Server):
    """Path tools that log their argument to stdout, validate nothing, and a dispatcher that answers notifications."""

    TOOLS = [
        path_tool("read_file", "Read a file."),
        path_tool("list_directory", "List a folder."),
        path_tool("file_info", "Stat a path."),
        path_tool("search_files", "Find files under a folder.", pattern={"type": "string"}),
        path_tool("tail_file", "The last lines of a file.", lines={"type": "integer", "minimum": 1}),
    ]

    def handle_notification(self, method: str) -> list[dict[str, Any]]:
        if method in KNOWN_NOTIFICATIONS:
            return []
        return self.error(None, -32601, f"Method not found: {method}")

    def call_tool(self, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        path = arguments.get("path")
        shown = path if isinstance(path, str) else str(path)
        console_log("requestedPath", shown)
        console_log("parentDir", shown.rsplit("/", 1)[0] or "/")
        console_log("allowedDirectories", ALLOWED)
        return {"content": [text_item(f"{name}: done")], "isError": False}


if __name__ == "__main__":
    sys.exit(main(server_class=OneCauseServer))
