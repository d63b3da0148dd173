"""tests/servers/tool_server.py with `search` annotated readOnlyHint: true, so its calls share pipelined windows.

Usage: ``python tests/servers/read_only_tools.py [--bug NAME]... [--fired FILE]``

A target for windows of calls: the planted bugs of `search` (a crash at its maximum, a hang on an enum value, ...)
must each be found on exactly the call that causes it, as when every call runs alone. One bug of its own,
``--bug racy-count``, shows only under concurrency: `search` answers its `count` as a string when another
`tools/call` is already waiting to be read, which never happens to a call sent alone (each such wrong answer is
appended to FILE). Lines are read as they come, several at once when a client pipelines them.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from mcp_server import write  # noqa: E402
from tool_server import BUGS, TOOLS, ToolServer  # noqa: E402

READ_ONLY_TOOLS: list[dict[str, Any]] = [
    {**tool, "annotations": {"readOnlyHint": True}} if tool["name"] == "search" else tool for tool in TOOLS
]
RACY = "racy-count"


class ReadOnlyToolServer(ToolServer):
    """The tool server, its `search` declared read-only; `calls_waiting`: tool calls read but not yet handled."""

    TOOLS = READ_ONLY_TOOLS
    BUGS = {**BUGS, RACY: "search answers count as a string while another tools/call waits to be read"}
    calls_waiting = 0
    fired: Path | None = None

    def call_tool(self, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        """The tool server's answer (its output checked against the outputSchema), then racy-count's change."""
        answer = super().call_tool(name, arguments)
        if RACY in self.bugs and self.calls_waiting and name == "search" and "structuredContent" in answer:
            answer["structuredContent"]["count"] = str(answer["structuredContent"]["count"])
            if self.fired is not None:
                with self.fired.open("a") as log:
                    log.write("racy\n")
        return answer


def serve(server: ReadOnlyToolServer) -> None:
    """Answer stdin's lines until EOF, each read chunk's lines in order, knowing how many calls wait behind each."""
    rest = b""
    while chunk := os.read(0, 1 << 16):
        *lines, rest = (rest + chunk).split(b"\n")
        for index, line in enumerate(lines):
            server.calls_waiting = sum(b'"tools/call"' in later for later in lines[index + 1:])
            write(server.handle_line(line + b"\n"))
    if rest.strip():
        server.calls_waiting = 0
        write(server.handle_line(rest))


def main() -> int:
    parser = argparse.ArgumentParser(description="The tool server with a read-only search.")
    parser.add_argument("--bug", action="append", default=[], choices=sorted(ReadOnlyToolServer.BUGS))
    parser.add_argument("--fired", type=Path, help="append a line here each time racy-count answers wrongly")
    args = parser.parse_args()
    sys.set_int_max_str_digits(100_000)  # as mcp_server.py: big integers in arguments, with a cap
    server = ReadOnlyToolServer(set(args.bug))
    server.fired = args.fired
    try:
        serve(server)
    except BrokenPipeError:
        return 0  # the client went away
    return 0


if __name__ == "__main__":
    sys.exit(main())
