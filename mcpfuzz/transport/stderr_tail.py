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
        # Asked after every case: decode only the end (a chatty server keeps the whole limit filled). Cut just after
        # a newline byte, the end decodes as it does within the whole (UTF-8 resynchronises on ASCII), and lines
        # break there too, so once it holds enough lines its last ones are the whole's; else the whole is read.
        data = self._data
        cut = len(data)
        for _ in range(2 * lines + 2):
            cut = data.rfind(b"\n", 0, cut)
            if cut < 0:
                break
        if cut > 0 and lines > 0:
            tail = data[cut + 1:].decode("utf-8", "replace").rstrip().splitlines()
            if len(tail) >= lines:
                return "\n".join(tail[-lines:])
        return whole_text(data, lines)


def whole_text(data: bytes | bytearray, lines: int) -> str:
    """The last `lines` lines of all of `data`, decoded (what StderrTail.text gives, read the long way)."""
    decoded = data.decode("utf-8", "replace").rstrip()
    return "\n".join(decoded.splitlines()[-lines:])
