"""MCP server whose read-only tools take a while, worked on in threads while pings are answered: work in flight.

Usage: ``python tests/servers/flight_server.py [--bug NAME]... [--unannotated]``

``report`` (no arguments) answers after ``--delay`` seconds (1 s); ``lookup`` (``key``, one of four) answers
``value of KEY`` after a third of a second. A ``notifications/cancelled`` for either stops its work: no answer.
Bugs: ``cancel-code-0`` answers a cancelled call at once with error code 0, as the Python SDK 1.x does;
``shared-argument`` keeps ``lookup``'s key in one shared variable while it works, so calls in flight at once
answer with the last one's value. Without a bug it gives no finding. ``--unannotated`` lists both tools
without annotations, as most servers do (their calls may then change state, as far as a client can tell).
"""

from __future__ import annotations

import argparse
import json
import sys
import threading
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from mcp_server import NoReply, Server, check_arguments, log, text_item, tool_error  # noqa: E402

KEYS = ["alpha", "beta", "gamma", "delta"]
READ_ONLY = {"readOnlyHint": True}
TOOLS: list[dict[str, Any]] = [
    {"name": "report", "description": "Build a report; takes a while.", "annotations": READ_ONLY,
     "inputSchema": {"type": "object", "properties": {}, "required": [], "additionalProperties": False}},
    {"name": "lookup", "description": "Look a key up; takes a moment.", "annotations": READ_ONLY,
     "inputSchema": {"type": "object", "properties": {"key": {"type": "string", "enum": KEYS}},
                     "required": ["key"], "additionalProperties": False}},
]
LOOKUP_SECONDS = 0.35
_write_lock = threading.Lock()


def write(values: list[Any]) -> None:
    """One compact JSON line per value, whole lines only (the main loop and workers share stdout)."""
    with _write_lock:
        for value in values:
            sys.stdout.buffer.write(json.dumps(value, separators=(",", ":")).encode("ascii") + b"\n")
        sys.stdout.buffer.flush()


class FlightServer(Server):
    """`report` and `lookup` are worked on in threads, each stoppable by its cancel."""

    TOOLS = TOOLS
    SERVER_INFO = {"name": "flight", "version": "1.0"}
    BUGS = {"cancel-code-0": "a cancelled call is answered at once with error code 0 (the Python SDK 1.x)",
            "shared-argument": "lookup keeps its key in shared state while it works"}

    def __init__(self, bugs: set[str], delay: float, *, annotated: bool = True) -> None:
        super().__init__(bugs)
        if not annotated:
            self.TOOLS = [{key: value for key, value in tool.items() if key != "annotations"} for tool in TOOLS]
        self.delay = delay
        self.running: dict[Any, threading.Event] = {}  # request id -> set when cancelled
        self.lock = threading.Lock()
        self.current_key = ""  # the shared-argument bug's one variable

    def handle_message(self, msg: Any, *, first: bool) -> list[dict[str, Any]]:
        """A cancel stops the request's work (and, with cancel-code-0, answers it with error code 0)."""
        if isinstance(msg, dict) and msg.get("method") == "notifications/cancelled" and "id" not in msg:
            params = msg.get("params") if isinstance(msg.get("params"), dict) else {}
            rid = params.get("requestId")
            with self.lock:
                stop = self.running.pop(rid, None) if isinstance(rid, int | str) else None
            if stop is None:
                return []  # finished or unknown: ignored
            stop.set()
            if "cancel-code-0" in self.bugs:
                return self.error(rid, 0, "Request cancelled")
            return []
        return super().handle_message(msg, first=first)

    def handle_request(self, rid: Any, method: str, params: dict[str, Any], *, first: bool) -> list[Any]:
        """A valid call of a slow tool goes to a worker; everything else as the base server does."""
        name, arguments = params.get("name"), params.get("arguments", {})
        slow = (name == "report" and arguments == {}) or (
            name == "lookup" and isinstance(arguments, dict) and set(arguments) == {"key"} and arguments["key"] in KEYS)
        if method != "tools/call" or not slow:
            return super().handle_request(rid, method, params, first=first)
        stop = threading.Event()
        with self.lock:
            self.running[rid] = stop
        modern = "io.modelcontextprotocol/protocolVersion" in (params.get("_meta") or {})
        work = self._report if name == "report" else self._lookup
        threading.Thread(target=work, args=(rid, stop, arguments, modern), daemon=True).start()
        raise NoReply

    def call_tool(self, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        """Only a call with bad arguments gets here (a valid one went to a worker): an isError result."""
        tool = next(t for t in self.TOOLS if t["name"] == name)
        problem = check_arguments(tool["inputSchema"], arguments) or "key must be one of " + ", ".join(KEYS)
        return tool_error(f"invalid arguments: {problem}")

    def _report(self, rid: Any, stop: threading.Event, arguments: dict[str, Any], modern: bool) -> None:
        if not stop.wait(self.delay):
            self._finish(rid, "the report", modern)

    def _lookup(self, rid: Any, stop: threading.Event, arguments: dict[str, Any], modern: bool) -> None:
        key = arguments["key"]
        if "shared-argument" in self.bugs:
            self.current_key = key
        if stop.wait(LOOKUP_SECONDS):
            return
        self._finish(rid, f"value of {self.current_key if 'shared-argument' in self.bugs else key}", modern)

    def _finish(self, rid: Any, text: str, modern: bool) -> None:
        with self.lock:
            if self.running.pop(rid, None) is None:
                return  # cancelled meanwhile
        result: dict[str, Any] = {"content": [text_item(text)], "isError": False}
        if modern:
            result["resultType"] = "complete"
        write(self.result(rid, result))


def main() -> int:
    """Serve stdin until EOF."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bug", action="append", default=[], choices=sorted(FlightServer.BUGS))
    parser.add_argument("--delay", type=float, default=1.0)
    parser.add_argument("--unannotated", action="store_true", help="list the tools without annotations")
    args = parser.parse_args()
    server = FlightServer(set(args.bug), args.delay, annotated=not args.unannotated)
    log(f"ready, bugs={sorted(server.bugs) or 'none'}")
    try:
        for raw in iter(sys.stdin.buffer.readline, b""):
            write(server.handle_line(raw))
    except BrokenPipeError:
        return 0
    return 0


if __name__ == "__main__":
    sys.exit(main())
