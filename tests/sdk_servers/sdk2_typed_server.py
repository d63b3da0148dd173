"""Typed tools on the real `mcp` 2.x SDK (MCPServer), over stdio: outputSchemas from return annotations.

Run with the venv that has mcp 2.x: /tmp/venv2/bin/python tests/sdk_servers/sdk2_typed_server.py
The tools are in typed_tools.py (shared with the other SDK's typed server).
"""

from __future__ import annotations

from mcp.server.mcpserver import MCPServer
from typed_tools import register

app = MCPServer("sdk2-typed-server", version="0.1.0")
register(app)

if __name__ == "__main__":
    app.run()
