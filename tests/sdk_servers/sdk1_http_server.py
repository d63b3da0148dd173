"""The sdk1_server tools over streamable HTTP on 127.0.0.1:PORT/mcp (mcp 1.x FastMCP, uvicorn).

Legacy era only (sessions, SSE answers). FastMCP's default host (127.0.0.1) turns the SDK's
DNS-rebinding protection on: a Host other than 127.0.0.1/localhost/[::1] gets 421, a foreign Origin 403.
It imports its stdio module by name, so run it by its path (its folder goes on sys.path).

Usage: /tmp/venv-mcp1/bin/python tests/sdk_servers/sdk1_http_server.py PORT
"""

from __future__ import annotations

import sys

import uvicorn
from sdk1_server import app

if __name__ == "__main__":
    uvicorn.run(app.streamable_http_app(), host="127.0.0.1", port=int(sys.argv[1]), log_level="warning")
