"""A server that crashes on a call of its tool `corrupt` and can never start properly again.

Usage: ``BROKEN_STATE_DIR=DIR python tests/servers/broken_for_good_server.py [exit|silent]``. Calling
`corrupt` (any arguments) writes DIR/corrupted and exits 70, as a server whose crash leaves its state
file half written does. Every process started while that marker exists is broken for good:

- ``exit`` (default): writes ``fatal: state file corrupted`` to stderr and exits 3 before reading;
- ``silent``: reads its input and never answers anything (the handshake included).

Until then it is the correct ``mcp_server.Server`` with one more tool, so other tools are callable.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from mcp_server import Server, main  # noqa: E402

MARKER = Path(os.environ.get("BROKEN_STATE_DIR", ".")) / "corrupted"


class BrokenForGoodServer(Server):
    """The clean server's tools, and `corrupt`, which breaks every later start."""

    TOOLS: list[dict[str, Any]] = [
        *Server.TOOLS,
        {"name": "corrupt", "description": "Rewrite the state file.",
         "inputSchema": {"type": "object", "properties": {"level": {"type": "integer"}}}},
    ]

    def call_tool(self, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        """`corrupt` leaves the marker and ends the process; the other tools are the clean server's."""
        if name != "corrupt":
            return super().call_tool(name, arguments)
        MARKER.write_text("half written")
        sys.stderr.write("panic: state file write interrupted\n")
        sys.stderr.flush()
        os._exit(70)


def broken_start(mode: str) -> int:
    """A start after the corruption: exit at once, or read forever and answer nothing."""
    if mode == "silent":
        for _ in iter(sys.stdin.buffer.readline, b""):
            pass
        time.sleep(3600)
        return 0
    sys.stderr.write("fatal: state file corrupted\n")
    return 3


if __name__ == "__main__":
    mode = sys.argv.pop(1) if len(sys.argv) > 1 else "exit"
    sys.exit(broken_start(mode) if MARKER.exists() else main(server_class=BrokenForGoodServer))
