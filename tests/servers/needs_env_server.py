"""tests/servers/mcp_server.py, but it refuses to start without MCPFUZZ_NEEDED_TOKEN (as a server needing an API
key does): replay of a transcript whose run gave it that variable must name it when it is missing."""

from __future__ import annotations

import os
import runpy
import sys
from pathlib import Path

if __name__ == "__main__":
    if not os.environ.get("MCPFUZZ_NEEDED_TOKEN"):
        sys.stderr.write("error: configuration incomplete\n")
        sys.exit(1)
    runpy.run_path(str(Path(__file__).with_name("mcp_server.py")), run_name="__main__")
