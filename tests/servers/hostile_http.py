"""Hostile HTTP "servers" on 127.0.0.1 that test the fuzzer's own limits, not the protocol oracles.

Usage: ``python tests/servers/hostile_http.py MODE``; prints ``port=N`` on stdout once listening. MODE:

- ``huge-body``: every request gets 400 with a 100 MB body of spaces.
- ``slowloris``: every request gets 200 (application/json, chunked), then one byte every half second.
- ``endless-sse``: every request gets 200 text/event-stream, then a comment every 50 ms, forever.
"""

from __future__ import annotations

import contextlib
import sys
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

HUGE = 100 * 1024 * 1024
CHUNK = b" " * 65536


class Hostile(BaseHTTPRequestHandler):
    """Answers every GET and POST the way its mode says."""

    mode = ""
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: object) -> None:  # noqa: A002 (the base class's name)
        """Quiet: the test reads stdout for the port only."""

    def _drain(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        if length:
            self.rfile.read(length)

    def do_GET(self) -> None:  # noqa: N802 (http.server's naming)
        """Same as POST."""
        self.do_POST()

    def do_POST(self) -> None:  # noqa: N802 (http.server's naming)
        """The mode's answer; a client that goes away ends it."""
        self._drain()
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):
            getattr(self, "_" + self.mode.replace("-", "_"))()

    def _huge_body(self) -> None:
        self.send_response(400)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(HUGE))
        self.end_headers()
        for _ in range(HUGE // len(CHUNK)):
            self.wfile.write(CHUNK)

    def _slowloris(self) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        while True:
            self.wfile.write(b"1\r\n \r\n")
            self.wfile.flush()
            time.sleep(0.5)

    def _endless_sse(self) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.end_headers()
        while True:
            self.wfile.write(b": still here\n\n")
            self.wfile.flush()
            time.sleep(0.05)


def main(argv: list[str]) -> int:
    """Serve the mode until killed."""
    if len(argv) != 1 or argv[0] not in ("huge-body", "slowloris", "endless-sse"):
        sys.stderr.write("usage: hostile_http.py {huge-body,slowloris,endless-sse}\n")
        return 2
    Hostile.mode = argv[0]
    server = ThreadingHTTPServer(("127.0.0.1", 0), Hostile)
    server.daemon_threads = True
    print(f"port={server.server_address[1]}", flush=True)
    server.serve_forever()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
