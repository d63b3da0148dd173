"""Resources, a template, prompts and completions on the real `mcp` 1.x SDK (FastMCP), over stdio.

Run with the venv that has mcp 1.x: .venv-mcp1/bin/python tests/sdk_servers/sdk1_surface_server.py
The handlers are in surfaces.py (shared with the other SDK's surface server).
"""

from __future__ import annotations

from mcp.server.fastmcp import FastMCP
from surfaces import register

app = FastMCP("sdk1-surface-server")
register(app)

if __name__ == "__main__":
    app.run()
