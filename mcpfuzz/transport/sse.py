"""An incremental reader of Server-Sent Events (the WHATWG event-stream format) as it arrives in chunks."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class SseEvent:
    """One dispatched event: its type ("message" when unnamed), data lines joined by newlines, and id."""

    event: str
    data: str
    id: str | None


class SseParser:
    """Feed bytes, get the events completed so far; comments (":") and retry fields are skipped."""

    def __init__(self, max_event: int = 8 * 1024 * 1024) -> None:
        self._buffer = b""
        self._event = ""
        self._data: list[str] = []
        self._id: str | None = None
        self._max_event = max_event
        self.oversized = 0

    def feed(self, chunk: bytes) -> list[SseEvent]:
        """Add bytes; return each event whose blank line has arrived."""
        self._buffer += chunk
        events: list[SseEvent] = []
        while True:
            line, found = self._next_line()
            if not found:
                break
            event = self._line(line)
            if event is not None:
                events.append(event)
        if len(self._buffer) > self._max_event:
            # One line without an end: drop it rather than hold unbounded memory.
            self._buffer = b""
            self.oversized += 1
        return events

    def _next_line(self) -> tuple[bytes, bool]:
        # The format allows CRLF, LF or a lone CR as line ends.
        buffer = self._buffer
        lf, cr = buffer.find(b"\n"), buffer.find(b"\r")
        if cr == -1 or (lf != -1 and lf < cr):
            if lf == -1:
                return b"", False
            self._buffer = buffer[lf + 1:]
            return buffer[:lf], True
        if cr + 1 == len(buffer):
            return b"", False  # wait: the next byte may be the LF of a CRLF
        skip = 2 if buffer[cr + 1:cr + 2] == b"\n" else 1
        self._buffer = buffer[cr + skip:]
        return buffer[:cr], True

    def _line(self, raw: bytes) -> SseEvent | None:
        if not raw:
            return self._dispatch()
        line = raw.decode("utf-8", "replace")
        if line.startswith(":"):
            return None
        name, _, value = line.partition(":")
        value = value[1:] if value.startswith(" ") else value
        if name == "event":
            self._event = value
        elif name == "data":
            self._data.append(value)
        elif name == "id" and "\x00" not in value:
            self._id = value
        return None

    def _dispatch(self) -> SseEvent | None:
        if not self._data:
            self._event = ""
            return None
        event = SseEvent(self._event or "message", "\n".join(self._data), self._id)
        self._event, self._data = "", []
        return event
