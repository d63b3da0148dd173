"""Count what reaches a stdio server: start it, copy our stdin to it, keep the counts in a file.

Usage: python benchmarks/tee_server.py COUNTS_DIR -- CMD [ARGS]...

Every tool under test starts this wrapper instead of the server, so frames are counted the same
way for all of them: a frame is one newline-terminated line that reached the server's stdin.
Each wrapper process keeps `lines bytes` in COUNTS_DIR/<pid>, rewritten in place after every
chunk, so the count survives a SIGKILL of the whole process group (tools kill and restart
servers; a run leaves one file per server process). The server's stdout and stderr are
inherited, so its answers go straight back to the tool. Standard library only.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import threading
from pathlib import Path

CHUNK = 64 * 1024
RECORD = "{lines:>20} {size:>20}\n"  # fixed width: rewritten at offset 0, never half-stale


class Counter:
    """Lines and bytes copied so far, mirrored to one small file."""

    def __init__(self, folder: str) -> None:
        self.lines = 0
        self.bytes = 0
        self._fd = os.open(Path(folder) / str(os.getpid()), os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        self._save()

    def add(self, chunk: bytes) -> None:
        """Count one chunk that reached the server."""
        self.lines += chunk.count(b"\n")
        self.bytes += len(chunk)
        self._save()

    def _save(self) -> None:
        # One pwrite per chunk: the kernel holds the record even if we are killed the next instant.
        os.pwrite(self._fd, RECORD.format(lines=self.lines, size=self.bytes).encode(), 0)


def pump(counter: Counter, server: subprocess.Popen[bytes]) -> None:
    """Copy stdin to the server until either side closes."""
    assert server.stdin is not None
    source = sys.stdin.buffer.raw  # unbuffered: a frame goes through as soon as it arrives
    target = server.stdin.fileno()
    try:
        while True:
            chunk = source.read(CHUNK)
            if not chunk:
                break
            view = memoryview(chunk)
            while view:
                view = view[os.write(target, view):]
            counter.add(chunk)  # counted once written: a frame the server never got does not count
    except OSError:
        pass  # the server closed its stdin or exited
    finally:
        with contextlib.suppress(OSError):
            server.stdin.close()


def read_counts(folder: Path) -> tuple[int, int, int]:
    """Frames, bytes and server processes recorded in a counts folder."""
    lines = size = processes = 0
    for path in folder.iterdir():
        parts = path.read_text().split()
        if len(parts) == 2:
            lines, size, processes = lines + int(parts[0]), size + int(parts[1]), processes + 1
    return lines, size, processes


def main(argv: list[str]) -> int:
    """Run the server behind the counting pipe; exit with its status."""
    if len(argv) < 3 or argv[1] != "--":
        sys.stderr.write("usage: tee_server.py COUNTS_DIR -- CMD [ARGS]...\n")
        return 2
    counter = Counter(argv[0])
    server = subprocess.Popen(argv[2:], stdin=subprocess.PIPE)

    def stop(signum: int, frame: object) -> None:
        # A tool that terminates "its server" terminates us: take the real server along.
        server.kill()
        os._exit(128 + signum)

    for signum in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(signum, stop)
    threading.Thread(target=pump, args=(counter, server), daemon=True).start()
    status = server.wait()
    return status if status >= 0 else 128 - status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
