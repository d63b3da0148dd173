"""A minimal raw stdio client: the ceiling a fuzzer's round trips on one server can be held against.

It does nothing a fuzzer must do (no oracle, no barrier, no bookkeeping): it writes a prepared
`tools/call` line and reads one line back, either one at a time (sequential) or with up to
WINDOW requests in flight (pipelined).
"""

from __future__ import annotations

import json
import subprocess
import threading
import time
from typing import Any

HANDSHAKE: list[dict[str, Any]] = [
    {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "bench", "version": "1"}}},
    {"jsonrpc": "2.0", "method": "notifications/initialized"},
]
WINDOW = 64  # requests in flight when pipelined: enough to keep the server busy, bounded memory


class RawServer:
    """A server process after the legacy handshake, with its pipes at hand."""

    def __init__(self, argv: list[str]) -> None:
        self.process = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                        stderr=subprocess.DEVNULL)
        assert self.process.stdin is not None and self.process.stdout is not None
        self.stdin, self.stdout = self.process.stdin, self.process.stdout
        for message in HANDSHAKE:
            self.stdin.write(json.dumps(message).encode() + b"\n")
        self.stdin.flush()
        if not self.stdout.readline():
            raise RuntimeError(f"{argv} did not answer initialize")

    def close(self) -> None:
        """EOF on stdin, then wait (a bounded wait; kill if the server lingers)."""
        try:
            self.stdin.close()
            self.process.wait(5)
        except (OSError, subprocess.TimeoutExpired):
            self.process.kill()
            self.process.wait()


def call_line(rid: int, tool: str, arguments: dict[str, Any]) -> bytes:
    """One tools/call request as a wire line."""
    return json.dumps({"jsonrpc": "2.0", "id": rid, "method": "tools/call",
                       "params": {"name": tool, "arguments": arguments}}).encode() + b"\n"


def sequential(argv: list[str], tool: str, arguments: dict[str, Any], seconds: float) -> float:
    """Round trips per second, one request at a time."""
    server = RawServer(argv)
    count, rid = 0, 100
    started = time.perf_counter()
    deadline = started + seconds
    try:
        while time.perf_counter() < deadline:
            rid += 1
            server.stdin.write(call_line(rid, tool, arguments))
            server.stdin.flush()
            if not server.stdout.readline():
                raise RuntimeError("the server closed stdout")
            count += 1
        return count / (time.perf_counter() - started)
    finally:
        server.close()


def pipelined(argv: list[str], tool: str, arguments: dict[str, Any], seconds: float) -> float:
    """Round trips per second with up to WINDOW requests in flight (a writer thread, this thread reads)."""
    server = RawServer(argv)
    slots = threading.Semaphore(WINDOW)
    stop = threading.Event()
    sent = [0]

    def write() -> None:
        rid = 100
        try:
            while not stop.is_set():
                if not slots.acquire(timeout=0.5):
                    continue
                rid += 1
                server.stdin.write(call_line(rid, tool, arguments))
                server.stdin.flush()
                sent[0] += 1
        except OSError:
            stop.set()

    writer = threading.Thread(target=write, daemon=True)
    received = 0
    started = time.perf_counter()
    deadline = started + seconds
    writer.start()
    try:
        while time.perf_counter() < deadline:
            if not server.stdout.readline():
                raise RuntimeError("the server closed stdout")
            received += 1
            slots.release()
        elapsed = time.perf_counter() - started
        return received / elapsed
    finally:
        stop.set()
        writer.join(timeout=2)
        server.close()
