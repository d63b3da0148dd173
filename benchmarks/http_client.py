"""Streamable HTTP: the test server on 127.0.0.1, and a minimal raw client's POST round trips against it.

The raw client speaks the era mcpfuzz negotiates with tests/servers/http_server.py (2026-07-28:
stateless POSTs, `params._meta`, the SEP-2243 headers), over keep-alive connections of the standard
library, and does nothing a fuzzer must do: it is the ceiling for that server.
"""

from __future__ import annotations

import contextlib
import http.client
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

HTTP_SERVER = Path(__file__).resolve().parent.parent / "tests" / "servers" / "http_server.py"
READY = re.compile(rb"^ready (http://127\.0\.0\.1:[0-9]+/\S*)$", re.MULTILINE)
READY_TIMEOUT = 30.0
MODERN = "2026-07-28"
CONNECTIONS = 8  # parallel keep-alive connections of the "pipelined" figure, one thread each


@contextlib.contextmanager
def http_server() -> Iterator[str]:
    """tests/servers/http_server.py (clean, streamable) on a free port of 127.0.0.1; yields its URL."""
    with tempfile.TemporaryFile() as log:
        process = subprocess.Popen([sys.executable, str(HTTP_SERVER), "--port", "0"], stdin=subprocess.DEVNULL,
                                   stdout=log, stderr=log, start_new_session=True)
        try:
            yield _wait_ready(process, log)
        finally:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGTERM)  # our own process group, by its pid
            try:
                process.wait(5)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(process.pid, signal.SIGKILL)
                process.wait()


def _wait_ready(process: subprocess.Popen[bytes], log: Any) -> str:
    deadline = time.monotonic() + READY_TIMEOUT
    while time.monotonic() < deadline:
        log.seek(0)
        match = READY.search(log.read())
        if match is not None:
            return match.group(1).decode()
        if process.poll() is not None:
            raise RuntimeError(f"the HTTP test server exited with status {process.returncode}")
        time.sleep(0.05)
    raise RuntimeError(f"the HTTP test server was not ready after {READY_TIMEOUT:g}s")


class RawHttp:
    """One keep-alive connection that POSTs prepared modern-era tools/call requests."""

    def __init__(self, url: str, tool: str, arguments: dict[str, Any]) -> None:
        parts = urlsplit(url)
        self.path = parts.path or "/"
        self.connection = http.client.HTTPConnection(parts.hostname or "127.0.0.1", parts.port, timeout=10)
        self.tool, self.arguments = tool, arguments
        self.headers = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream",
                        "MCP-Protocol-Version": MODERN, "Mcp-Method": "tools/call", "Mcp-Name": tool}

    def call(self, rid: int) -> bytes:
        """One round trip; the answer's body (an error if the status is not 200)."""
        body = json.dumps({"jsonrpc": "2.0", "id": rid, "method": "tools/call", "params": {
            "name": self.tool, "arguments": self.arguments,
            "_meta": {"io.modelcontextprotocol/protocolVersion": MODERN,
                      "io.modelcontextprotocol/clientCapabilities": {}}}}).encode()
        self.connection.request("POST", self.path, body, self.headers)
        response = self.connection.getresponse()
        data = response.read()
        if response.status != 200:
            raise RuntimeError(f"HTTP {response.status}: {data[:200]!r}")
        return data

    def close(self) -> None:
        """Close the connection."""
        self.connection.close()


def sequential(url: str, tool: str, arguments: dict[str, Any], seconds: float) -> float:
    """Round trips per second, one POST at a time over one keep-alive connection."""
    client = RawHttp(url, tool, arguments)
    try:
        if b'"result"' not in client.call(1):
            raise RuntimeError("the HTTP test server did not answer tools/call with a result")
        count = 0
        started = time.perf_counter()
        deadline = started + seconds
        while time.perf_counter() < deadline:
            count += 1
            client.call(count + 1)
        return count / (time.perf_counter() - started)
    finally:
        client.close()


def parallel(url: str, tool: str, arguments: dict[str, Any], seconds: float, connections: int = CONNECTIONS) -> float:
    """Round trips per second with `connections` keep-alive connections in flight (one thread each)."""
    counts = [0] * connections
    errors: list[BaseException] = []
    start = threading.Barrier(connections + 1)
    stop = threading.Event()

    def work(index: int) -> None:
        client = RawHttp(url, tool, arguments)
        try:
            client.call(1)
            start.wait()
            rid = 1
            while not stop.is_set():
                rid += 1
                client.call(rid)
                counts[index] += 1
        except BaseException as error:  # reported below: a figure from failed requests is no figure
            errors.append(error)
            with contextlib.suppress(threading.BrokenBarrierError):
                start.abort()
        finally:
            client.close()

    threads = [threading.Thread(target=work, args=(i,), daemon=True) for i in range(connections)]
    for thread in threads:
        thread.start()
    try:
        start.wait()
    except threading.BrokenBarrierError:
        for thread in threads:
            thread.join(timeout=15)
        raise RuntimeError(f"raw HTTP client: {errors[0]!r}") from None
    started = time.perf_counter()
    time.sleep(seconds)
    stop.set()
    elapsed = time.perf_counter() - started
    for thread in threads:
        thread.join(timeout=15)
    if errors:
        raise RuntimeError(f"raw HTTP client: {errors[0]!r}")
    return sum(counts) / elapsed
