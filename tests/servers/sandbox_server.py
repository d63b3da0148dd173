"""A file-reading MCP server confined to one folder; ``--bug startswith`` checks that folder the broken way.

Usage: ``python tests/servers/sandbox_server.py --root DIR [--bug startswith]``

A target for the ``sandbox-escape`` oracle. ``read_file`` reads a path relative to ``--root`` (or absolute).
The clean server refuses any path whose resolved form is not inside the root (a common-path check); with
``startswith`` it tests ``path.startswith(root)`` without a separator (the CVE-2025-53110 pattern), so
``../ROOTNAME-other/x`` escapes into a sibling folder whose name starts with the root's. Standard library and
``jsonschema`` only; exits 0 on EOF.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from mcp_server import Server, check_arguments, main, text_item, tool_error  # noqa: E402

TOOLS: list[dict[str, Any]] = [
    {
        "name": "read_file",
        "description": "Read a text file inside the allowed folder.",
        "annotations": {"readOnlyHint": True},
        "inputSchema": {
            "type": "object",
            "properties": {"path": {"type": "string", "description": "Path of the file, relative to the root."}},
            "required": ["path"],
            "additionalProperties": False,
        },
    },
]


class SandboxServer(Server):
    """Reads files under `root`, checking containment correctly unless the `startswith` bug is on."""

    TOOLS = TOOLS
    BUGS = {"startswith": "check the root with str.startswith, without a separator"}
    root = ""

    def call_tool(self, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        problem = check_arguments(TOOLS[0]["inputSchema"], arguments)
        if problem is not None:
            return tool_error(f"invalid arguments: {problem}")
        path = arguments.get("path")
        if not isinstance(path, str):
            return tool_error("path must be a string")
        try:  # a NUL or a lone surrogate cannot name a file: an error, never a crash
            full = os.path.abspath(os.path.join(self.root, path))
            if "startswith" in self.bugs:
                allowed = full.startswith(self.root)
            else:
                allowed = os.path.commonpath([self.root, os.path.realpath(full)]) == self.root
            if not allowed:
                return tool_error("access denied: outside the allowed folder")
            text = Path(full).read_text(encoding="utf-8", errors="replace")
        except (OSError, ValueError):  # UnicodeEncodeError is a ValueError
            return tool_error("cannot read that file")
        return {"content": [text_item(text)], "isError": False}


def run(argv: list[str] | None = None) -> int:
    """Read --root, leave --bug to the shared parser."""
    parser = argparse.ArgumentParser(add_help=False)
    parser.add_argument("--root", required=True, help="the only folder the server may read")
    args, rest = parser.parse_known_args(argv)
    SandboxServer.root = os.path.realpath(args.root)
    return main(rest, server_class=SandboxServer)


if __name__ == "__main__":
    sys.exit(run())
