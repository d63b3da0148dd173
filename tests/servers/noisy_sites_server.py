"""The clean ``mcp_server`` with two debug ``print`` sites on stdout, as a real server's stray ``console.log``s.

Usage: ``python tests/servers/noisy_sites_server.py``

Site one logs every request with its id and a duration; site two, a path check, logs the path a tools/call
asked for (under a per-process temp folder). The lines differ on every frame (ids, numbers, paths, hex), but
there are two statements: a fuzzer must report two causes, not one per line. Everything else is
``mcp_server.Server``.
"""

from __future__ import annotations

import os
import re
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from mcp_server import Id, Server, main  # noqa: E402


def debug(text: str) -> None:
    """The stray debug line: written to stdout, where only protocol messages belong."""
    sys.stdout.buffer.write(text.encode("utf-8", "backslashreplace") + b"\n")
    sys.stdout.flush()


class NoisySites(Server):
    """Two print statements on stdout, with values that change on every call."""

    def __init__(self, bugs: set[str]) -> None:
        super().__init__(bugs)
        self.handled = 0

    def handle_request(self, rid: Id, method: str, params: dict[str, Any], *, first: bool) -> list[Any]:
        self.handled += 1
        started = time.perf_counter()
        replies = super().handle_request(rid, method, params, first=first)
        took = int((time.perf_counter() - started) * 1000) + self.handled
        debug(f"[debug] handled {method!r} request {rid!r} #{self.handled} in {took}ms (0x{id(replies):x})")
        return replies

    def call_tool(self, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        asked = re.sub(r"[^A-Za-z0-9_-]", "_", str(next(iter(arguments.values()), "x"))[:20]) or "empty"
        debug(f"Validating path: /tmp/mcp-{os.getpid()}/{self.handled}/{asked}.txt")
        return super().call_tool(name, arguments)


if __name__ == "__main__":
    sys.exit(main(server_class=NoisySites))
