"""Resources, a template, prompts and completions on the real `mcp` 2.x SDK (MCPServer), over stdio.

Run with the venv that has mcp 2.x: .venv/bin/python tests/sdk_servers/sdk2_surface_server.py
The handlers are in surfaces.py (shared with the other SDK's surface server).
"""

from __future__ import annotations

from mcp.server.mcpserver import MCPServer
from surfaces import register

app = MCPServer("sdk2-surface-server", version="0.1.0")
register(app)

if __name__ == "__main__":
    app.run()
