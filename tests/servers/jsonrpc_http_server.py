"""The plain JSON-RPC memory store of ``jsonrpc_server.py`` over HTTP POST (no MCP transport rules).

Usage: ``python tests/servers/jsonrpc_http_server.py --port N [--bug NAME]...``

Every POST body is one JSON-RPC message or batch, answered with ``application/json``; a body that needs no
answer (notifications only) gets 204 No Content, as plain JSON-RPC endpoints commonly do (JSON-RPC 2.0 fixes
no transport). Binds 127.0.0.1 only. Standard library and ``jsonschema`` only.
"""

from __future__ import annotations

import argparse
import json
import signal
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from threading import Lock

sys.path.insert(0, str(Path(__file__).resolve().parent))

from jsonrpc_server import BUGS, Server, reply_to_line  # noqa: E402

MAX_BODY = 16 * 1024 * 1024


class Handler(BaseHTTPRequestHandler):
    """POST: one message (or batch) in, its answer out."""

    store: Server
    lock = Lock()

    def do_POST(self) -> None:  # noqa: N802 (http.server's name)
        length = int(self.headers.get("Content-Length") or 0)
        if length > MAX_BODY:
            self.send_error(413)
            return
        body = self.rfile.read(length)
        with self.lock:  # the store is not thread-safe
            try:
                out = reply_to_line(self.store, body.decode("utf-8"))
            except UnicodeDecodeError:
                out = self.store.error(None, -32700, "parse error: invalid UTF-8")
        if out is None:
            self.send_response(204)
            self.end_headers()
            return
        data = json.dumps(out).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, format: str, *args: object) -> None:  # noqa: A002 (http.server's signature)
        """Quiet: the fuzzer sends thousands of requests."""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--bug", action="append", default=[], choices=sorted(BUGS))
    args = parser.parse_args()
    Handler.store = Server(set(args.bug))
    httpd = ThreadingHTTPServer(("127.0.0.1", args.port), Handler)
    httpd.daemon_threads = True
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    httpd.serve_forever()


if __name__ == "__main__":
    main()
