"""A server whose bug shows only in its first process: unknown methods get -32600 until a marker file exists.

Usage: ``python tests/servers/flaky_server.py MARKER_PATH``. The first process creates MARKER_PATH and
misbehaves; every later process (a restart, a replay) is correct. A stand-in for bugs that depend on
timing or on state a fresh server does not have.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from mcp_server import Server, main


class FlakyServer(Server):
    """Correct, except in the process that found no marker file."""

    first_process = False

    def method_not_found(self, rid: Any) -> list[dict[str, Any]]:
        """The misbehaviour of the first process only."""
        if FlakyServer.first_process:
            return self.error(rid, -32600, "method not found (wrong code)")
        return super().method_not_found(rid)


if __name__ == "__main__":
    marker = Path(sys.argv.pop(1))
    FlakyServer.first_process = not marker.exists()
    marker.touch()
    sys.exit(main(server_class=FlakyServer))
