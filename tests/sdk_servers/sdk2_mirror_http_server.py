"""The sdk2_server tools plus one whose `region` argument is mirrored into `Mcp-Param-Region` (x-mcp-header),
over streamable HTTP on 127.0.0.1:PORT/mcp (mcp 2.x MCPServer, uvicorn, DNS-rebinding protection on).

Usage: python tests/sdk_servers/sdk2_mirror_http_server.py PORT
"""

from __future__ import annotations

import sys
from typing import Annotated

import uvicorn
from pydantic import Field
from sdk2_server import app


@app.tool()
def route(region: Annotated[str, Field(json_schema_extra={"x-mcp-header": "Region"})], query: str) -> str:
    """Say where a query would run."""
    return f"region {region}: {len(query)} characters"


if __name__ == "__main__":
    uvicorn.run(app.streamable_http_app(host="127.0.0.1"), host="127.0.0.1", port=int(sys.argv[1]),
                log_level="warning")
