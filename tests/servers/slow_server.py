"""MCP server whose one tool takes a while, answering pings meanwhile: slow is not dropped.

Usage: ``python tests/servers/slow_server.py [--delay SECONDS] [--progress] [--drop]``

``report`` (no arguments; any argument is refused at once by the base server) answers after
``--delay`` seconds from a thread while the main loop keeps serving every other request (pings,
the barrier). ``--progress`` sends a ``notifications/progress``
every half second while it works (with the request's progressToken, or a token of its own when the
request carried none, so a test can see progress without drawing tokens). ``--drop`` never answers
``report`` at all (a real dropped request). Everything else comes from ``mcp_server.Server``.
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

from mcp_server import NoReply, RemembersCancels, log, text_item  # noqa: E402

TOOLS: list[dict[str, Any]] = [{
    "name": "report",
    "description": "Build a report; takes a while.",
    "inputSchema": {"type": "object", "properties": {}, "required": [], "additionalProperties": False},
    "annotations": {"readOnlyHint": True},
}]
_write_lock = threading.Lock()


def write(values: list[Any]) -> None:
    """One compact JSON line per value, whole lines only (the main loop and workers share stdout)."""
    with _write_lock:
        for value in values:
            sys.stdout.buffer.write(json.dumps(value, separators=(",", ":")).encode("ascii") + b"\n")
        sys.stdout.buffer.flush()


class SlowServer(RemembersCancels):
    """`report` is answered late from a thread; the rest at once."""

    TOOLS = TOOLS
    SERVER_INFO = {"name": "slow", "version": "1.0"}
    BUGS: dict[str, str] = {}

    def __init__(self, delay: float, progress: bool, drop: bool) -> None:
        super().__init__(set())
        self.delay, self.progress, self.drop = delay, progress, drop

    def handle_request(self, rid: Any, method: str, params: dict[str, Any], *, first: bool) -> list[Any]:
        """tools/call of `report` goes to a worker; everything else as the base server does."""
        if method == "tools/call" and params.get("name") == "report" and params.get("arguments", {}) == {}:
            if not self.drop:
                token = (params.get("_meta") or {}).get("progressToken", f"report-{rid}")
                modern = "io.modelcontextprotocol/protocolVersion" in (params.get("_meta") or {})
                threading.Thread(target=self._answer_later, args=(rid, token, modern), daemon=True).start()
            else:
                log("dropping report")
            raise NoReply
        return super().handle_request(rid, method, params, first=first)

    def _answer_later(self, rid: Any, token: Any, modern: bool) -> None:
        started = time.monotonic()
        step = 0
        while time.monotonic() - started < self.delay:
            time.sleep(min(0.5, self.delay))
            if rid in self.cancelled:
                return
            step += 1
            if self.progress:
                write([{"jsonrpc": "2.0", "method": "notifications/progress",
                        "params": {"progressToken": token, "progress": step}}])
        if rid in self.cancelled:
            return
        result: dict[str, Any] = {"content": [text_item("the report")], "isError": False}
        if modern:
            result["resultType"] = "complete"
        write(self.result(rid, result))


def main() -> int:
    """Serve stdin until EOF."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--delay", type=float, default=8.0)
    parser.add_argument("--progress", action="store_true")
    parser.add_argument("--drop", action="store_true")
    args = parser.parse_args()
    server = SlowServer(args.delay, args.progress, args.drop)
    try:
        for raw in iter(sys.stdin.buffer.readline, b""):
            write(server.handle_line(raw))
    except BrokenPipeError:
        return 0
    return 0


if __name__ == "__main__":
    sys.exit(main())
