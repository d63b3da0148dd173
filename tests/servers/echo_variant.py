"""The clean ``mcp_server`` with an echo tool that differs: for ``run --compare`` tests of whole envelopes.

Usage: ``python tests/servers/echo_variant.py [--bug NAME]...``

Every result carries ``_meta.servedAt`` (the clock: it differs between any two servers, so a comparison
must ignore it with ``--compare-ignore '$.result._meta'``); ``--bug upper`` echoes the text in capitals,
a real difference no ignore hides. Everything else is ``mcp_server.Server``.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from mcp_server import Server, main  # noqa: E402

BUGS = {"upper": "echo answers the text in capitals"}


class EchoVariant(Server):
    """Results stamped with the time; echo in capitals with the bug."""

    BUGS = BUGS

    def call_tool(self, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        result = super().call_tool(name, arguments)
        if name == "echo" and "upper" in self.bugs and not result.get("isError"):
            result["content"] = [{"type": "text", "text": str(arguments.get("text", "")).upper()}]
        return {**result, "_meta": {"servedAt": time.time()}}


if __name__ == "__main__":
    sys.exit(main(server_class=EchoVariant))
