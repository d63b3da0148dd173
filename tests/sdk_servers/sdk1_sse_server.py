"""The sdk1_server tools over the deprecated 2024-11-05 HTTP+SSE transport (mcp 1.x FastMCP, uvicorn).

GET http://127.0.0.1:PORT/sse opens the stream; its first event names ``/messages/?session_id=ID``.
FastMCP's default host (127.0.0.1) turns the SDK's DNS-rebinding protection on: a Host other than
127.0.0.1/localhost/[::1] gets 421, a foreign Origin 403.

Usage: /tmp/venv-mcp1/bin/python tests/sdk_servers/sdk1_sse_server.py PORT
"""

from __future__ import annotations

import sys

import uvicorn
from sdk1_server import app

if __name__ == "__main__":
    uvicorn.run(app.sse_app(), host="127.0.0.1", port=int(sys.argv[1]), log_level="warning")
