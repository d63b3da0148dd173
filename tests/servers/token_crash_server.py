"""An MCP server over stdio that crashes on every call of its tool, printing the token it was given.

Usage: ``API_TOKEN=... python tests/servers/token_crash_server.py``

The tool ``connect`` raises an exception whose message holds ``$API_TOKEN`` twice (as ``token=VALUE`` and
alone), as a server that logs its credentials does: the Python traceback on stderr and the crash key built
from its last line carry the secret, and mcpfuzz must write none of it anywhere. Everything else comes from
``mcp_server.Server``.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from mcp_server import Server, main  # noqa: E402


class TokenCrashServer(Server):
    """One tool, ``connect(host)``, that always crashes."""

    TOOLS: list[dict[str, Any]] = [{
        "name": "connect", "description": "Connect to an upstream host.",
        "inputSchema": {"type": "object", "properties": {"host": {"type": "string"}}, "required": ["host"],
                        "additionalProperties": False},
    }]

    def call_tool(self, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        """The bug: the upstream refusal is raised with the token in its message, and nothing catches it."""
        token = os.environ.get("API_TOKEN", "")
        raise RuntimeError(f"upstream refused token={token}; the key {token} was rejected")


if __name__ == "__main__":
    sys.exit(main(server_class=TokenCrashServer))
