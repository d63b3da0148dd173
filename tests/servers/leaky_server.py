"""The clean tool server, except that every tool call keeps ``--leak-kb N`` KB of memory forever.

Usage: ``python tests/servers/leaky_server.py --leak-kb 100 [--bug NAME]...``

A target for the ``memory-growth`` oracle. Each tools/call (valid or not, either era) appends a
buffer of N KB to a module-level list that is never cleared; every page of the buffer is written,
so the memory is really resident (an untouched allocation may never count in RSS). ``--leak-kb 0``
is the clean tool server. Standard library and ``jsonschema`` only; exits 0 on EOF.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from mcp_server import main  # noqa: E402
from tool_server import ToolServer  # noqa: E402

PAGE = 4096
KEPT: list[bytearray] = []  # the leak: grows by one buffer per tool call, never shrinks


class LeakyServer(ToolServer):
    """The tool server with a leak of `leak_bytes` per tool call."""

    leak_bytes = 0

    def tools_call(self, params: dict[str, Any]) -> dict[str, Any]:
        """Leak first, so that a call with bad arguments leaks too (as a leak in a dispatcher would)."""
        if self.leak_bytes:
            buffer = bytearray(self.leak_bytes)
            buffer[::PAGE] = b"\x01" * len(range(0, self.leak_bytes, PAGE))  # touch every page
            KEPT.append(buffer)
        return super().tools_call(params)


def run(argv: list[str] | None = None) -> int:
    """Read --leak-kb, leave every other option to the tool server's parser."""
    parser = argparse.ArgumentParser(add_help=False)
    parser.add_argument("--leak-kb", type=int, default=100, help="KB kept per tool call (default 100)")
    args, rest = parser.parse_known_args(argv)
    if args.leak_kb < 0:
        parser.error("--leak-kb must be 0 or more")
    LeakyServer.leak_bytes = args.leak_kb * 1024
    return main(rest, server_class=LeakyServer)


if __name__ == "__main__":
    sys.exit(run())
