"""Split a byte stream into lines of any length, keeping at most a capped prefix of each."""

from __future__ import annotations

from collections.abc import Callable

LineSink = Callable[[bytes, int], None]


class LineSplitter:
    """Feed chunks, get (prefix, full size) per newline-terminated line; memory stays bounded."""

    def __init__(self, sink: LineSink, max_line: int) -> None:
        self._sink = sink
        self._max_line = max_line
        self._buffer = bytearray()
        self._size = 0

    def feed(self, chunk: bytes) -> None:
        """Consume a chunk, emitting every line it completes."""
        start = 0
        while True:
            end = chunk.find(b"\n", start)
            if end < 0:
                self._keep(chunk, start, len(chunk))
                return
            self._keep(chunk, start, end)
            self._emit()
            start = end + 1

    def finish(self) -> None:
        """Emit a last line that had no newline before end of stream."""
        if self._size:
            self._emit()

    def _keep(self, chunk: bytes, start: int, end: int) -> None:
        room = self._max_line - len(self._buffer)
        if room > 0:
            self._buffer += chunk[start:min(end, start + room)]
        self._size += end - start

    def _emit(self) -> None:
        line, size = bytes(self._buffer), self._size
        self._buffer.clear()
        self._size = 0
        if line.endswith(b"\r") and size == len(line):
            line, size = line[:-1], size - 1
        if size or line:
            self._sink(line, size)
