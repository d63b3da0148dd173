"""The sdk2_server tools over streamable HTTP on 127.0.0.1:PORT/mcp (mcp 2.x MCPServer, uvicorn).

Both eras: a POST whose MCP-Protocol-Version header is not a handshake-era version goes to the SDK's
stateless 2026-07-28 entry; everything else to the session transport. ``host="127.0.0.1"`` turns the SDK's
DNS-rebinding protection on (a Host other than 127.0.0.1/localhost/[::1] gets 421, a foreign Origin 403);
it is on by default for that host, but saying so keeps it on if the default changes. It imports its stdio
module by name, so run it by its path.

Usage: /tmp/venv2/bin/python tests/sdk_servers/sdk2_http_server.py PORT
"""

from __future__ import annotations

import sys

import uvicorn
from sdk2_server import app

if __name__ == "__main__":
    uvicorn.run(
        app.streamable_http_app(host="127.0.0.1"),
        host="127.0.0.1",
        port=int(sys.argv[1]),
        log_level="warning",
    )
