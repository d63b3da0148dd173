"""Typed tools on the real `mcp` 1.x SDK (FastMCP), over stdio: outputSchemas from return annotations.

Run with the venv that has mcp 1.x: /tmp/venv-mcp1/bin/python tests/sdk_servers/sdk1_typed_server.py
The tools are in typed_tools.py (shared with the other SDK's typed server).
"""

from __future__ import annotations

from mcp.server.fastmcp import FastMCP
from typed_tools import register

app = FastMCP("sdk1-typed-server")
register(app)

if __name__ == "__main__":
    app.run()
