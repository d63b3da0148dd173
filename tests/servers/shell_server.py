"""An MCP server whose one tool echoes its argument; ``--bug shell`` builds the command line with a shell.

Usage: ``python tests/servers/shell_server.py --root DIR [--bug shell]``

A target for the ``command-injection`` oracle. The clean server runs ``echo`` with a list argv (no shell);
with ``shell`` it runs ``subprocess.run(f"echo {name}", shell=True)``, so ``$(...)``, ``;`` and backticks in
the argument run. Every command runs in ``--root`` (give it a temporary folder: a fuzzer's strings may
redirect output into files there). Standard library and ``jsonschema`` only; exits 0 on EOF.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from mcp_server import Server, check_arguments, main, text_item, tool_error  # noqa: E402

TOOLS: list[dict[str, Any]] = [
    {
        "name": "greet",
        "description": "Say hello to someone.",
        "inputSchema": {
            "type": "object",
            "properties": {"name": {"type": "string", "description": "Who to greet."}},
            "required": ["name"],
            "additionalProperties": False,
        },
    },
]


class ShellServer(Server):
    """Echoes `name` through `echo`, by argv, or through a shell when the `shell` bug is on."""

    TOOLS = TOOLS
    BUGS = {"shell": "run echo through a shell with the argument pasted into the command line"}
    root = ""

    def call_tool(self, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        problem = check_arguments(TOOLS[0]["inputSchema"], arguments)
        if problem is not None:
            return tool_error(f"invalid arguments: {problem}")
        who = arguments.get("name")
        if not isinstance(who, str):
            return tool_error("name must be a string")
        argv: str | list[str] = f"echo hello {who}" if "shell" in self.bugs else ["echo", "hello", who]
        try:
            done = subprocess.run(argv, shell="shell" in self.bugs, cwd=self.root, capture_output=True, timeout=5,
                                  stdin=subprocess.DEVNULL, check=False)
        except (OSError, ValueError, subprocess.TimeoutExpired):
            return tool_error("echo failed")
        return {"content": [text_item(done.stdout.decode("utf-8", "replace"))], "isError": False}


def run(argv: list[str] | None = None) -> int:
    """Read --root, leave --bug to the shared parser."""
    parser = argparse.ArgumentParser(add_help=False)
    parser.add_argument("--root", required=True, help="the folder every command runs in")
    args, rest = parser.parse_known_args(argv)
    ShellServer.root = os.path.realpath(args.root)
    return main(rest, server_class=ShellServer)


if __name__ == "__main__":
    sys.exit(run())
