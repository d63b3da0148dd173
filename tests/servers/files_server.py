"""A small filesystem MCP server confined to one folder: read, list, and create folders and files in it.

Usage: ``python tests/servers/files_server.py --root DIR [--roots-log FILE] [--bug startswith]``

A target for the evidence of ``sandbox-escape``: a fuzzer that writes a value it read back (a canary token) as a
name inside the root, then lists the root, sees the token in a listing the server was right to give. Every tool
checks containment with a common-path test; ``--bug startswith`` makes ``read_file`` alone test
``path.startswith(root)`` without a separator, so ``../ROOTNAME-other/x`` reads a sibling folder's file.
``--roots-log FILE`` appends the resolved root to FILE at start (a test counts the workspaces it was given).
Standard library and ``jsonschema`` only; exits 0 on EOF.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from mcp_server import Server, check_arguments, main, text_item, tool_error  # noqa: E402

PATH = {"type": "string", "description": "Path relative to the root."}
TOOLS: list[dict[str, Any]] = [
    {"name": "read_file", "description": "Read a text file inside the allowed folder.",
     "annotations": {"readOnlyHint": True},
     "inputSchema": {"type": "object", "properties": {"path": PATH}, "required": ["path"],
                     "additionalProperties": False}},
    {"name": "list_directory", "description": "List the names in a folder inside the allowed folder.",
     "annotations": {"readOnlyHint": True},
     "inputSchema": {"type": "object", "properties": {"path": PATH}, "required": ["path"],
                     "additionalProperties": False}},
    {"name": "create_directory", "description": "Create a folder inside the allowed folder.",
     "inputSchema": {"type": "object", "properties": {"path": PATH}, "required": ["path"],
                     "additionalProperties": False}},
    {"name": "write_file", "description": "Write a text file inside the allowed folder.",
     "inputSchema": {"type": "object", "properties": {"path": PATH, "content": {"type": "string"}},
                     "required": ["path", "content"], "additionalProperties": False}},
]
SCHEMAS = {tool["name"]: tool["inputSchema"] for tool in TOOLS}
MAX_LISTED = 200


class FilesServer(Server):
    """Files under `root`; every path checked with a common-path test unless `startswith` weakens read_file's."""

    TOOLS = TOOLS
    BUGS = {"startswith": "read_file checks the root with str.startswith, without a separator"}
    root = ""

    def call_tool(self, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        problem = check_arguments(SCHEMAS[name], arguments) if name in SCHEMAS else f"unknown tool {name!r}"
        if problem is not None:
            return tool_error(f"invalid arguments: {problem}")
        try:  # a NUL or a lone surrogate cannot name a file: an error, never a crash
            full = os.path.abspath(os.path.join(self.root, arguments["path"]))
            weak = name == "read_file" and "startswith" in self.bugs
            inside = full.startswith(self.root) if weak else \
                os.path.commonpath([self.root, os.path.realpath(full)]) == self.root
            if not inside:
                return tool_error("access denied: outside the allowed folder")
            return {"content": [text_item(self._do(name, full, arguments))], "isError": False}
        except (OSError, ValueError):  # UnicodeEncodeError is a ValueError
            return tool_error("that path cannot be used")

    def _do(self, name: str, full: str, arguments: dict[str, Any]) -> str:
        """The tool's work on a path already checked; its answer's text."""
        if name == "read_file":
            return Path(full).read_text(encoding="utf-8", errors="replace")
        if name == "list_directory":
            entries = sorted(os.listdir(full))[:MAX_LISTED]
            return "\n".join(f"[{'DIR' if os.path.isdir(os.path.join(full, e)) else 'FILE'}] {e}" for e in entries)
        if name == "create_directory":
            os.makedirs(full, exist_ok=True)
            return f"created {os.path.relpath(full, self.root)}"
        Path(full).write_text(arguments["content"], encoding="utf-8")
        return f"wrote {os.path.relpath(full, self.root)}"


def run(argv: list[str] | None = None) -> int:
    """Read --root and --roots-log, leave --bug to the shared parser."""
    parser = argparse.ArgumentParser(add_help=False)
    parser.add_argument("--root", required=True, help="the only folder the server may touch")
    parser.add_argument("--roots-log", help="a file the resolved root is appended to at start")
    args, rest = parser.parse_known_args(argv)
    FilesServer.root = os.path.realpath(args.root)
    if args.roots_log:
        with open(args.roots_log, "a", encoding="utf-8") as log:
            log.write(FilesServer.root + "\n")
    return main(rest, server_class=FilesServer)


if __name__ == "__main__":
    sys.exit(run())
