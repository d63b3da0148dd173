"""The bounded tail of what a server wrote to stderr (its logs; shown with crashes and stuck servers)."""

from __future__ import annotations


class StderrTail:
    """The last bytes a server wrote to stderr (bounded: servers may log without end)."""

    def __init__(self, limit: int) -> None:
        self._limit = limit
        self._data = bytearray()

    def add(self, chunk: bytes) -> None:
        """Append, dropping the oldest bytes past the limit."""
        self._data += chunk
        if len(self._data) > self._limit:
            del self._data[: len(self._data) - self._limit]

    def text(self, lines: int = 20) -> str:
        """The last few lines as text."""
        decoded = self._data.decode("utf-8", "replace").rstrip()
        return "\n".join(decoded.splitlines()[-lines:])
