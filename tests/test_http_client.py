"""The HTTP transports' client: a POST's head and body leave in one write, with the headers httpx would send."""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import anyio
import httpcore
import pytest

from mcpfuzz.transport.http_client import OneWriteBackend, OneWriteStream, Poster, header, new_client

pytestmark = pytest.mark.process


class Recorder(httpcore.AsyncNetworkStream):
    """A connection that only records what is written to it."""

    def __init__(self) -> None:
        self.writes: list[bytes] = []

    async def write(self, buffer: bytes, timeout: float | None = None) -> None:
        self.writes.append(buffer)

    async def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        return b"HTTP/1.1 200 OK\r\n"

    async def aclose(self) -> None:
        pass


def test_writes_wait_for_the_next_read_and_leave_as_one() -> None:
    async def main() -> list[bytes]:
        inner = Recorder()
        stream = OneWriteStream(inner)
        await stream.write(b"POST / HTTP/1.1\r\n\r\n")
        await stream.write(b"{}")
        assert inner.writes == []
        await stream.read(100)
        await stream.read(100)  # nothing held: nothing more written
        return inner.writes

    assert anyio.run(main) == [b"POST / HTTP/1.1\r\n\r\n{}"]


@contextmanager
def header_echo() -> Iterator[tuple[str, list[dict[str, Any]]]]:
    """A keep-alive server on 127.0.0.1 that records each POST's headers and body and answers JSON."""
    seen: list[dict[str, Any]] = []

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
            seen.append({"headers": {k.lower(): v for k, v in self.headers.items()}, "body": body})
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Mcp-Session-Id", "abc")
            self.send_header("Content-Length", "2")
            self.end_headers()
            self.wfile.write(b"{}")

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/mcp", seen
    finally:
        server.shutdown()
        server.server_close()


def test_a_post_carries_what_an_httpx_request_would_and_the_callers_headers_win() -> None:
    async def main(url: str) -> list[tuple[int, str | None, bytes]]:
        client, transport = new_client(5, 5)
        async with client:
            poster = Poster(client, transport)
            answers = []
            for body in (b'{"a":1}', b'{"b":2}'):
                headers = {"Accept": "application/json", "Content-Type": "application/json"}
                response = await poster.post(url, body, headers)
                answers.append((response.status, header(response, b"mcp-session-id"), await response.aread()))
                await response.aclose()
            return answers

    with header_echo() as (url, seen):
        answers = anyio.run(main, url)
    assert answers == [(200, "abc", b"{}")] * 2
    first = seen[0]["headers"]
    assert first["host"] == url.split("/")[2]
    assert first["accept"] == "application/json"  # the caller's, not httpx's default */*
    assert first["content-length"] == "7" and seen[0]["body"] == b'{"a":1}'
    assert first["user-agent"].startswith("python-httpx/")
    assert seen[1]["body"] == b'{"b":2}'


def test_an_idle_connection_the_server_closed_reads_as_readable_so_the_pool_drops_it() -> None:
    listener = socket.create_server(("127.0.0.1", 0))
    port = listener.getsockname()[1]

    async def main() -> list[bool]:
        stream = await OneWriteBackend().connect_tcp("127.0.0.1", port)
        peer, _ = listener.accept()
        seen = [stream.get_extra_info("is_readable")]  # idle and open: reusable
        peer.close()  # the server ends the keep-alive connection
        with anyio.fail_after(10):
            while not stream.get_extra_info("is_readable"):
                await anyio.sleep(0.01)
        seen.append(True)
        await stream.aclose()
        seen.append(stream.get_extra_info("is_readable"))  # no descriptor left: never reused
        return seen

    try:
        assert anyio.run(main) == [False, True, True]
    finally:
        listener.close()
