"""The run's loopback listener: where URL payloads point, so that a tool that fetches them connects somewhere real.

It listens on 127.0.0.1 only, answers every request with a short `200 OK` and counts the connections; nothing it
does leaves the machine.
"""

from __future__ import annotations

import contextlib
import socket
import threading

ANSWER = b"HTTP/1.0 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok"
READ_LIMIT = 65536
WAIT = 2.0  # seconds a connection may take to send its request


class LoopbackListener:
    """A TCP listener on 127.0.0.1 in a daemon thread, closed by `close`."""

    def __init__(self) -> None:
        self.socket = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.socket.bind(("127.0.0.1", 0))
        self.socket.listen(16)
        self.port: int = self.socket.getsockname()[1]
        self.connections = 0
        self._closed = threading.Event()
        self._thread = threading.Thread(target=self._serve, name="mcpfuzz-listener", daemon=True)
        self._thread.start()

    @property
    def url(self) -> str:
        """`http://127.0.0.1:PORT`."""
        return f"http://127.0.0.1:{self.port}"

    def _serve(self) -> None:
        while not self._closed.is_set():
            try:
                connection, _ = self.socket.accept()
            except OSError:
                return
            self.connections += 1
            with contextlib.suppress(OSError), connection:
                connection.settimeout(WAIT)
                connection.recv(READ_LIMIT)
                connection.sendall(ANSWER)

    def close(self) -> None:
        """Stop listening."""
        self._closed.set()
        with contextlib.suppress(OSError):
            self.socket.shutdown(socket.SHUT_RDWR)
        self.socket.close()
        self._thread.join(timeout=WAIT)
