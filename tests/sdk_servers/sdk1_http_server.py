"""The sdk1_server tools over streamable HTTP on 127.0.0.1:PORT/mcp (mcp 1.x FastMCP, uvicorn).

Usage: /tmp/venv-mcp1/bin/python tests/sdk_servers/sdk1_http_server.py PORT
"""

from __future__ import annotations

import sys

import uvicorn
from sdk1_server import app

if __name__ == "__main__":
    uvicorn.run(app.streamable_http_app(), host="127.0.0.1", port=int(sys.argv[1]), log_level="warning")
