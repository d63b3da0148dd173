"""MCP server that writes terminal control bytes in what it says: a console must show them, never obey them.

Usage: ``python tests/servers/control_bytes_server.py``

Its name (serverInfo) holds an ESC sequence that would set a window title; before answering ``tools/list`` it
writes a log line to stdout (a ``stdout-clean`` finding) holding NUL, BEL, an ESC sequence that clears the screen,
a C1 control and a right-to-left override; a JSON array kills it after the same bytes on stderr (a ``no-crash``
finding with its stderr tail). Everything else comes from ``mcp_server.Server``.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from mcp_server import Server, main  # noqa: E402

HOSTILE = "\x00\x07\x1b[2J\x1b[31m\u009b\u202e"  # NUL, BEL, clear screen, red, CSI (C1), right-to-left override


class ControlBytesServer(Server):
    """The base server's crash-batch and stdout-noise behaviours, their texts full of control bytes."""

    SERVER_INFO = {"name": "bytes\x1b]0;pwned\x07", "version": "1.0"}

    def __init__(self, bugs: set[str]) -> None:
        super().__init__(bugs | {"crash-batch"})

    def handle_line(self, raw: bytes) -> list[Any]:
        """A batch dies with the hostile bytes on stderr first."""
        if raw.lstrip().startswith(b"["):
            sys.stderr.write(f"fatal{HOSTILE}: cannot handle a batch\n")
            sys.stderr.flush()
        return super().handle_line(raw)

    def tools_list(self, params: dict[str, Any]) -> dict[str, Any]:
        """The page, after a log line on stdout (the misbehaviour, with the hostile bytes)."""
        sys.stdout.buffer.write(f"INFO{HOSTILE} listing tools\n".encode())
        return super().tools_list(params)


if __name__ == "__main__":
    sys.exit(main(server_class=ControlBytesServer))
