"""A stdio MCP server (no SDK) whose tools answer nothing about what they do: each bug is seen only by a hook.

Usage: ``python tests/servers/blind_tools_server.py --root DIR [--bug cache] [--bug egress] [--bug shell]
[--bug outside]``

Without a bug every tool is honest. ``cache``: ``lookup``, annotated read-only, appends the key to a cache file in the
root. ``egress``: ``ping``, not annotated openWorldHint, connects to the loopback URL it is given. ``shell``:
``count`` runs a shell line holding its argument and answers a number. ``outside``: ``save`` writes where the path
leads and answers "saved". ``peek`` is read-only and touches nothing. Requests are served one at a time, and no
record of the hook names its request (no SDK context): in a pipelined window, which call did what is known only by
when it happened.

Kept harmless whatever it is sent: files are written only inside the system's temporary folder, connections go only
to loopback addresses, and the shell runs only lines made of `echo`, `wc` and `touch` of files in the temporary
folder.
"""

from __future__ import annotations

import argparse
import os
import re
import socket
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

sys.path.insert(0, str(Path(__file__).resolve().parent))

from mcp_server import Server, check_arguments, main, text_item, tool_error  # noqa: E402

TEMP = os.path.join(os.path.realpath(tempfile.gettempdir()), "")
LOOPBACK = {"127.0.0.1", "localhost", "::1"}
SEGMENTS = re.compile(r"[;|&\n`()$<>]+")
READ_ONLY = {"readOnlyHint": True}


def _tool(name: str, description: str, properties: dict[str, Any], annotations: dict[str, Any] | None = None
          ) -> dict[str, Any]:
    tool: dict[str, Any] = {"name": name, "description": description,
                            "inputSchema": {"type": "object", "properties": properties,
                                            "required": sorted(properties), "additionalProperties": False}}
    if annotations is not None:
        tool["annotations"] = annotations
    return tool


TOOLS = [
    _tool("lookup", "Look a key up.", {"key": {"type": "string"}}, READ_ONLY),
    _tool("peek", "Say whether a key looks like a name.", {"key": {"type": "string"}}, READ_ONLY),
    _tool("ping", "Tell whether a URL's server answers.", {"url": {"type": "string", "format": "uri"}}),
    _tool("count", "Count the characters of a text.", {"text": {"type": "string"}}),
    _tool("save", "Save a note at a path relative to the root.",
          {"path": {"type": "string", "description": "Path relative to the root."}, "text": {"type": "string"}}),
]
SCHEMAS = {tool["name"]: tool["inputSchema"] for tool in TOOLS}


def harmless(line: str) -> bool:
    """Only `echo`, `wc` and `touch` of files in the temporary folder: all this test server lets a shell run."""
    for segment in SEGMENTS.split(line):
        words = [word.strip("'\"") for word in segment.split()]
        words = [word for word in words if word]
        if not words:
            continue
        if words[0] == "touch":
            if not all(word.startswith(TEMP) and ".." not in word for word in words[1:]):
                return False
        elif words[0] not in ("echo", "wc", "-c"):
            return False
    return True


class BlindServer(Server):
    """The tools above, under `root`."""

    TOOLS = TOOLS
    BUGS = {"cache": "lookup (read-only) writes a cache file", "egress": "ping (closed world) connects",
            "shell": "count runs a shell line holding its input", "outside": "save writes where the path leads"}
    SERVER_INFO = {"name": "blind-tools-server", "version": "0.1.0"}
    root = ""

    def call_tool(self, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        problem = check_arguments(SCHEMAS[name], arguments) if name in SCHEMAS else f"unknown tool {name!r}"
        if problem is not None:
            return tool_error(f"invalid arguments: {problem}")
        try:  # a NUL or a lone surrogate cannot name a file: an error, never a crash
            return {"content": [text_item(getattr(self, f"_{name}")(**arguments))], "isError": False}
        except (OSError, ValueError, subprocess.SubprocessError):
            return tool_error("that cannot be done")

    def _lookup(self, key: str) -> str:
        if "cache" in self.bugs:
            with open(os.path.join(self.root, ".lookup-cache"), "a", encoding="utf-8") as cache:
                cache.write(key[:40].encode("utf-8", "replace").decode() + "\n")
        return f"no entry for {key[:40]!r}"

    def _peek(self, key: str) -> str:
        return "a name" if key.isidentifier() else "not a name"

    def _ping(self, url: str) -> str:
        parts = urlsplit(url if "//" in url else f"http://{url}")
        host, port = parts.hostname, parts.port or 80
        if host not in LOOPBACK:
            return "unsupported host"
        if "egress" not in self.bugs:
            return "not checked"
        try:
            with socket.create_connection((host, port), timeout=1):
                return "answers"
        except OSError:
            return "does not answer"

    def _count(self, text: str) -> str:
        line = f"echo {text} | wc -c"
        if "shell" not in self.bugs or not harmless(line):
            return str(len(text) + 1)
        done = subprocess.run(["/bin/sh", "-c", line], capture_output=True, text=True, timeout=10)
        return done.stdout.strip() or "0"

    def _save(self, path: str, text: str) -> str:
        full = os.path.realpath(os.path.join(self.root, path))
        inside = os.path.commonpath([self.root, full]) == self.root
        if not full.startswith(TEMP) or not (inside or "outside" in self.bugs):
            return "refused"
        with open(full, "w", encoding="utf-8") as note:
            note.write(text)
        return "saved"


def run(argv: list[str] | None = None) -> int:
    """Read --root, leave --bug to the shared parser."""
    parser = argparse.ArgumentParser(add_help=False)
    parser.add_argument("--root", required=True, help="the folder the server is given")
    args, rest = parser.parse_known_args(argv)
    BlindServer.root = os.path.realpath(args.root)
    return main(rest, server_class=BlindServer)


if __name__ == "__main__":
    sys.exit(run())
