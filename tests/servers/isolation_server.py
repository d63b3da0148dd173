"""MCP test server over streamable HTTP for concurrent clients: spec-correct by default, one isolation bug per
``--bug NAME``.

Usage::

    python tests/servers/isolation_server.py --port N [--bug NAME]... [--hold]

Binds 127.0.0.1 only (``--port 0`` picks a free port); prints ``ready http://127.0.0.1:N/mcp`` to stderr once
listening. Standard library only; each JSON-RPC message is handled by ``mcp_server.Server`` with one more tool,
``work`` (read-only, no arguments), which sends progress notifications (for a request with a progress token) and, in
the 2026-07-28 era, log messages at and above the request's ``io.modelcontextprotocol/logLevel`` (none without
one). Both eras on one endpoint: a POST whose ``params._meta`` names the protocol version is a stateless
2026-07-28 request; the rest is the legacy session transport (``initialize`` opens a session, DELETE ends it).
``GET /sessions`` says how many sessions are open (``{"open": N}``), for the tests.
Every request is answered on an SSE stream that ends after its answer.

With a bug planted, requests carrying a progress token with the same JSON-RPC id meet before they are handled (a
lone one waits GATHER_SECONDS), so concurrent clients' requests are in flight together whatever the machine's
speed: the bugs below show every time. The clean server handles every request at once.

Bugs (each a shared-state mistake of a server that serves several clients from one instance):
  route-by-id         answers and notifications are routed by JSON-RPC id through one map shared by every
                      session (the last stream opened for an id gets them), as one TypeScript SDK transport shared
                      between clients did (GHSA-345p-7cg4-v4c7): a client gets another's answer, or its stream
                      ends without one (with --hold it stays open without one, as that SDK's did)
  progress-broadcast  progress notifications go to every answer stream open, not only the request's
  ignore-log-level    log messages are sent whatever level the request asked (or for a request that asked none)
"""

from __future__ import annotations

import argparse
import json
import queue
import secrets
import sys
import threading
from collections import Counter
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import urlsplit

from mcp_server import META_VERSION, TOOLS, InvalidParams, Server, check_arguments, tool_error

BUGS = ("route-by-id", "progress-broadcast", "ignore-log-level")
GATHER_SECONDS = 5.0
STREAM_SECONDS = 10.0  # how long an answer stream waits for its answer before it ends unanswered
LOG_LEVELS = ("debug", "info", "notice", "warning", "error", "critical", "alert", "emergency")
LOG_LEVEL_KEY = "io.modelcontextprotocol/logLevel"
NAMED = {"tools/call": "name", "prompts/get": "name", "resources/read": "uri"}  # the body's field in Mcp-Name
END: dict[str, Any] = {}  # put on a stream to end it
WORK_TOOL = {"name": "work", "description": "Report progress, log, and say done.",
             "inputSchema": {"type": "object", "properties": {}, "required": [], "additionalProperties": False},
             "annotations": {"readOnlyHint": True}}


class WorkServer(Server):
    """The clean MCP server with the `work` tool."""

    TOOLS = [*TOOLS, WORK_TOOL]
    CAPABILITIES = {"tools": {}, "logging": {}}

    def serve_method(self, method: str, params: dict[str, Any], *, modern: bool) -> dict[str, Any] | None:
        """Legacy `logging/setLevel` (the capability is declared); 2026-07-28 has a level per request instead."""
        if method != "logging/setLevel" or modern:
            return None
        if params.get("level") not in LOG_LEVELS:
            raise InvalidParams("unknown log level")
        return {}

    def call_tool(self, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        if name == "work":
            problem = check_arguments(WORK_TOOL["inputSchema"], arguments)
            if problem is not None:
                return tool_error(f"invalid arguments: {problem}")
            return {"content": [{"type": "text", "text": "done"}], "isError": False}
        return super().call_tool(name, arguments)


class Streams:
    """The answer streams open now, and where a message for one request goes."""

    def __init__(self, bugs: set[str]) -> None:
        self.bugs = bugs
        self.lock = threading.Condition()
        self.open: set[queue.Queue[dict[str, Any]]] = set()
        self.by_id: dict[str, queue.Queue[dict[str, Any]]] = {}  # route-by-id: one map for every session
        self.arrived: Counter[str] = Counter()
        self.notified: Counter[str] = Counter()

    def opened(self, key: str, own: queue.Queue[dict[str, Any]]) -> None:
        with self.lock:
            self.open.add(own)
            if "route-by-id" in self.bugs:
                self.by_id[key] = own

    def closed(self, own: queue.Queue[dict[str, Any]]) -> None:
        with self.lock:
            self.open.discard(own)

    def send(self, key: str, own: queue.Queue[dict[str, Any]], message: dict[str, Any]) -> bool:
        """Put a message of the request `key` on its stream (or where a bug puts it); False when its own stream
        did not get it."""
        with self.lock:
            if "progress-broadcast" in self.bugs and message.get("method") == "notifications/progress":
                targets = set(self.open) | {own}
            elif "route-by-id" in self.bugs:
                targets = {self.by_id.get(key, own)}
            else:
                targets = {own}
        for target in targets:
            target.put(message)
        return own in targets

    def meet(self, key: str) -> None:
        """Wait until another request with this id has arrived (or GATHER_SECONDS)."""
        with self.lock:
            self.arrived[key] += 1
            self.lock.notify_all()
            self.lock.wait_for(lambda: self.arrived[key] >= 2, timeout=GATHER_SECONDS)

    def notified_all(self, key: str) -> None:
        """Wait until every request of this id that arrived has sent its notifications (or GATHER_SECONDS)."""
        with self.lock:
            self.notified[key] += 1
            self.lock.notify_all()
            self.lock.wait_for(lambda: self.notified[key] >= self.arrived[key], timeout=GATHER_SECONDS)


class Handler(BaseHTTPRequestHandler):
    """The MCP endpoint (/mcp): POST and DELETE."""

    protocol_version = "HTTP/1.0"  # one request per connection; an answer stream ends with the connection
    sessions: dict[str, WorkServer] = {}
    streams: Streams
    bugs: set[str] = set()
    hold = False  # --hold: a stream whose answer went elsewhere stays open (STREAM_SECONDS), as the SDK's did

    def log_message(self, format: str, *args: Any) -> None:
        """Quiet: no access log."""

    def reply(self, status: int, body: bytes = b"", headers: dict[str, str] | None = None) -> None:
        self.send_response(status)
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        if body:
            self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_DELETE(self) -> None:
        sid = self.headers.get("Mcp-Session-Id") or ""
        self.reply(200 if self.sessions.pop(sid, None) is not None else 404)

    def do_GET(self) -> None:
        if self.path == "/sessions":  # for the tests: how many sessions are open now
            self.reply(200, json.dumps({"open": len(self.sessions)}).encode())
            return
        self.reply(405, headers={"Allow": "POST, DELETE"})

    def do_POST(self) -> None:
        if self.path.split("?")[0] != "/mcp":
            self.reply(404)
            return
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        try:
            message = json.loads(body)
        except ValueError:
            self.reply(400, json.dumps({"jsonrpc": "2.0", "id": None, "error": {
                "code": -32700, "message": "parse error"}}).encode())
            return
        params = message.get("params") if isinstance(message, dict) else None
        meta = params.get("_meta") if isinstance(params, dict) else None
        meta = meta if isinstance(meta, dict) else {}
        if isinstance(message, dict) and "method" not in message and ("result" in message or "error" in message):
            self.reply(202)  # a response or an error sent to the server: accepted, never answered
            return
        refusal = self.refusal(message, meta)
        if refusal is not None:
            self.reply(*refusal)
            return
        server, headers = self.server_for(message, META_VERSION in meta)
        if server is None:
            return
        if not isinstance(message, dict) or "id" not in message:
            replies = server.handle_message(message, first=False)
            if replies:
                self.reply(400, json.dumps(replies[0]).encode())
            else:
                self.reply(202)
            return
        self.answer(server, message, meta, headers)

    def refusal(self, message: Any, meta: dict[str, Any]) -> tuple[int, bytes] | None:
        """The transport's refusals: a foreign Origin (403), and in the 2026-07-28 era a standard header missing or
        disagreeing with the body (400 with -32020, streamable HTTP "Standard Request Headers")."""
        origin = self.headers.get("Origin")
        if origin is not None and urlsplit(origin).hostname not in ("127.0.0.1", "localhost"):
            return 403, b'{"jsonrpc":"2.0","id":null,"error":{"code":-32000,"message":"forbidden origin"}}'
        if META_VERSION not in meta or not isinstance(message, dict):
            return None
        params = message.get("params") if isinstance(message.get("params"), dict) else {}
        field = NAMED.get(str(message.get("method")))
        expected = {"MCP-Protocol-Version": meta[META_VERSION], "Mcp-Method": message.get("method"),
                    **({"Mcp-Name": params.get(field)} if field else {})}
        if all(self.headers.get(name) == value for name, value in expected.items()):
            return None
        return 400, json.dumps({"jsonrpc": "2.0", "id": message.get("id"), "error": {
            "code": -32020, "message": "a header disagrees with the body"}}).encode()

    def server_for(self, message: Any, modern: bool) -> tuple[WorkServer | None, dict[str, str]]:
        """The server that handles the message: a fresh one (2026-07-28, stateless), the session's, or a new
        session's for initialize; None once a refusal was sent."""
        if modern:
            return WorkServer(set()), {}
        if isinstance(message, dict) and message.get("method") == "initialize":
            sid = secrets.token_hex(8)
            self.sessions[sid] = WorkServer(set())
            return self.sessions[sid], {"Mcp-Session-Id": sid}
        sid = self.headers.get("Mcp-Session-Id")
        if not sid or sid not in self.sessions:
            rid = message.get("id") if isinstance(message, dict) else None
            self.reply(404 if sid else 400, json.dumps({"jsonrpc": "2.0", "id": rid, "error": {
                "code": -32600, "message": "unknown session" if sid else "no session"}}).encode())
            return None, {}
        return self.sessions[sid], {}

    def answer(self, server: WorkServer, message: dict[str, Any], meta: dict[str, Any],
               headers: dict[str, str]) -> None:
        """Handle a request and stream what its SSE answer carries, ending after the first answer."""
        key = json.dumps(message["id"])
        own: queue.Queue[dict[str, Any]] = queue.Queue()
        self.streams.opened(key, own)
        gather = meta.get("progressToken") is not None and bool(self.bugs)
        try:
            if gather:
                self.streams.meet(key)
            self.notifications(key, own, message, meta)
            if gather:
                self.streams.notified_all(key)
            for reply in server.handle_message(message, first=False):
                if not self.streams.send(key, own, reply) and not self.hold:
                    own.put(END)  # its answer went to another stream: this one ends without it
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Cache-Control", "no-cache")
            for name, value in headers.items():
                self.send_header(name, value)
            self.end_headers()
            while True:
                try:
                    event = own.get(timeout=STREAM_SECONDS)
                except queue.Empty:
                    return  # never answered: the stream ends without its answer
                if event is END:
                    return
                self.wfile.write(f"event: message\ndata: {json.dumps(event)}\n\n".encode())
                self.wfile.flush()
                if "method" not in event:
                    return
        except OSError:
            return  # the client went away
        finally:
            self.streams.closed(own)

    def notifications(self, key: str, own: queue.Queue[dict[str, Any]], message: dict[str, Any],
                      meta: dict[str, Any]) -> None:
        """The `work` tool's progress and, in the 2026-07-28 era, its logs at or above the level asked."""
        params = message.get("params")
        if message.get("method") != "tools/call" or not isinstance(params, dict) or params.get("name") != "work":
            return
        token = meta.get("progressToken")
        if token is not None:
            for step in (1, 2):
                self.streams.send(key, own, {"jsonrpc": "2.0", "method": "notifications/progress", "params": {
                    "progressToken": token, "progress": step, "total": 2}})
        if META_VERSION not in meta:
            return
        asked = meta.get(LOG_LEVEL_KEY)
        for level in ("debug", "info", "warning", "error"):
            wanted = asked in LOG_LEVELS and LOG_LEVELS.index(level) >= LOG_LEVELS.index(asked)
            if wanted or "ignore-log-level" in self.bugs:
                self.streams.send(key, own, {"jsonrpc": "2.0", "method": "notifications/message", "params": {
                    "level": level, "logger": "work", "data": f"work at {level}"}})


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--bug", action="append", choices=BUGS, default=[])
    parser.add_argument("--hold", action="store_true")
    args = parser.parse_args()
    Handler.bugs = set(args.bug)
    Handler.hold = args.hold
    Handler.streams = Streams(Handler.bugs)
    httpd = ThreadingHTTPServer(("127.0.0.1", args.port), Handler)
    httpd.daemon_threads = True
    sys.stderr.write(f"ready http://127.0.0.1:{httpd.server_address[1]}/mcp\n")
    sys.stderr.flush()
    httpd.serve_forever()


if __name__ == "__main__":
    main()
