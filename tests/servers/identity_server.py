"""The stdio test server with a tool list that depends on the process serving it (list-identity).

Usage: ``python tests/servers/identity_server.py [--bug NAME]...``

Without ``--bug`` it is ``mcp_server.py`` with its tools on one page: zero findings in both eras. The bugs make
each process list something of its own, as a server does that names a tool after its session or keeps its tool
table in a set ordered by a per-process hash seed.
"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))

from mcp_server import BUGS, TOOLS, Server, main, text_item  # noqa: E402

IDENTITY_BUGS = {
    "tools-per-process": "tools/list names one more tool whose name holds the process id",
    "order-per-process": "tools/list gives the same tools in an order that differs from the run's previous process",
}


def process_number() -> int:
    """This process's place among the servers its parent (one mcpfuzz run) started, counted in a file named after
    that parent: two processes in a row never share it (the process id alone would, one time in three)."""
    counter = Path(tempfile.gettempdir()) / f"identity-server-of-{os.getppid()}"
    with counter.open("ab") as file:
        file.write(b".")
        return file.tell()


class IdentityServer(Server):
    """mcp_server.Server with every tool on one page, and the per-process bugs above."""

    BUGS = {**BUGS, **IDENTITY_BUGS}

    def __init__(self, bugs: set[str]) -> None:
        """The tool list of this process, fixed for its life."""
        super().__init__(bugs)
        tools = list(TOOLS)
        if "tools-per-process" in bugs:
            tools.insert(0, {"name": f"session_{os.getpid()}", "description": "Say which process answers.",
                             "inputSchema": {"type": "object", "properties": {}, "additionalProperties": False}})
        if "order-per-process" in bugs:
            turn = process_number() % len(tools)
            tools = tools[turn:] + tools[:turn]
        self.TOOLS = tools

    def tools_list(self, params: dict[str, Any]) -> dict[str, Any]:
        """All tools on one page."""
        return {"tools": self.TOOLS}

    def call_tool(self, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        """The per-process tool says its process id; the others are mcp_server's."""
        if name.startswith("session_"):
            return {"content": [text_item(str(os.getpid()))], "isError": False}
        return super().call_tool(name, arguments)


if __name__ == "__main__":
    sys.exit(main(server_class=IdentityServer))
