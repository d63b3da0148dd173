"""A server whose stdio transport ends the session on the first line it cannot decode; the process stays alive.

Usage: ``python tests/servers/deaf_after_malformed.py``

As the Go SDK's stdio transport does: a line that is not a JSON-RPC message ends the session with one stderr
line (``Error running MCP server: invalid character 'x' looking for beginning of value``, its character and
offset taken from the line), and from then on nothing is answered while the process reads on until EOF. Every
malformed frame shows the same cause. Well-formed traffic is served as ``mcp_server.Server`` serves it.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from mcp_server import Server, log, write  # noqa: E402


class SessionEnded(Exception):
    """The transport gave up on a line it could not decode."""


class DeafAfterMalformed(Server):
    """Every answer a malformed line would get ends the session instead."""

    def parse_error(self, message: str) -> list[dict[str, Any]]:
        raise SessionEnded(message)

    def invalid_request(self, rid: Any, message: str) -> list[dict[str, Any]]:
        raise SessionEnded(message)


def undecodable(line: bytes) -> str:
    """What the transport says of a line it cannot decode (the character and offset vary with the line)."""
    text = line.decode("utf-8", "replace").strip()
    try:
        json.loads(text)
    except ValueError as error:
        where = getattr(error, "pos", 0)
        character = text[where:where + 1] or "EOF"
        return f"invalid character {character!r} looking for beginning of value (offset {where})"
    return "json: cannot unmarshal message into Go value of type jsonrpc.wireRequest"


def main() -> int:
    """Serve until the first undecodable line, then read on without answering until EOF."""
    server = DeafAfterMalformed(set())
    log("ready")
    for raw in iter(sys.stdin.buffer.readline, b""):
        try:
            replies = server.handle_line(raw)
        except SessionEnded:
            sys.stderr.write(f"Error running MCP server: {undecodable(raw)}\n")
            sys.stderr.flush()
            break
        try:
            write(replies)
        except BrokenPipeError:
            return 0
    for _ in iter(sys.stdin.buffer.readline, b""):
        pass  # the session is over; the process stays until its input ends
    return 0


if __name__ == "__main__":
    sys.exit(main())
