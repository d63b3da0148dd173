"""A clean MCP server over stdio whose one tool takes ``--delay`` seconds on every call, answering pings meanwhile.

Usage: ``python tests/servers/slow_async_server.py [--delay SECONDS]``

As an SDK server on an event loop does: each ``tools/call`` is handled on a thread of its own, so the liveness
request mcpfuzz sends after a frame is answered at once while the call is still working. The tool, ``lookup``,
takes one string; valid or not (a lone surrogate included), every call is answered after the delay, unless a
``notifications/cancelled`` named it meanwhile (then it gets no answer, as the spec asks). Nothing here is a
bug: a correct run gives zero findings; everything else comes from ``mcp_server.Server``.
"""

from __future__ import annotations

import argparse
import json
import sys
import threading
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from mcp_server import RemembersCancels, check_arguments, text_item, tool_error, write  # noqa: E402

DELAY = 0.5
WRITE_LOCK = threading.Lock()


class SlowAsyncServer(RemembersCancels):
    """One tool, ``lookup(text)``, slow on every call."""

    TOOLS: list[dict[str, Any]] = [{
        "name": "lookup", "description": "Look a text up (slowly).",
        "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"],
                        "additionalProperties": False},
    }]

    def call_tool(self, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        """Invalid arguments are an isError result, valid ones a text result; both after the delay."""
        time.sleep(DELAY)
        problem = check_arguments(self.TOOLS[0]["inputSchema"], arguments)
        if problem is not None:
            return tool_error(f"invalid arguments: {problem}")
        return {"content": [text_item(f"{len(arguments['text'])} characters looked up")], "isError": False}


def is_tool_call(raw: bytes) -> bool:
    """True for a single JSON object asking for tools/call (it goes to a thread of its own)."""
    try:
        value = json.loads(raw)
    except ValueError:
        return False
    return isinstance(value, dict) and value.get("method") == "tools/call" and "id" in value


def answer(server: SlowAsyncServer, raw: bytes) -> None:
    """Handle one line and write its answers (but to a request cancelled meanwhile), one writer at a time."""
    replies = [reply for reply in server.handle_line(raw) if not (
        isinstance(reply, dict) and isinstance(reply.get("id"), int | str) and reply["id"] in server.cancelled)]
    with WRITE_LOCK:
        write(replies)


def main() -> int:
    """Serve stdin until EOF; tool calls run on threads, everything else in order on this one."""
    global DELAY
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--delay", type=float, default=DELAY, help="seconds every tool call takes")
    DELAY = parser.parse_args().delay
    server = SlowAsyncServer(set())
    try:
        for raw in iter(sys.stdin.buffer.readline, b""):
            if is_tool_call(raw):
                threading.Thread(target=answer, args=(server, raw), daemon=True).start()
            else:
                answer(server, raw)
    except BrokenPipeError:
        return 0
    return 0


if __name__ == "__main__":
    sys.exit(main())
