"""Byte-level edits of an encoded frame: CRLF, JSON whitespace, truncation, BOM, bad bytes, two frames joined.

None of them writes a line feed or a carriage return inside the frame: on stdio either can end the
line (text-mode readers split at a lone CR), and then it would be two frames, not one.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from hypothesis import strategies as st
from mcpfuzz.strategies.frames.read import BOM

MAX_FRAME = 1 << 20  # huge whitespace stays within 1 MiB
WHITESPACE_SIZES = (1, 2, 16, 255, 4096, 65_536, MAX_FRAME)
WHITESPACE = (b" ", b"\t", b" \t")
# Invalid UTF-8 (a lone byte, a bad continuation, a stray continuation, an overlong '/', an encoded
# surrogate, a 5-byte form) and raw control characters, which JSON strings must escape.
BAD_BYTES = (b"\xff", b"\xc3\x28", b"\x80", b"\xc0\xaf", b"\xed\xa0\x80", b"\xf8\x88\x80\x80\x80", b"\x00", b"\x1f")
STRING = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"', re.DOTALL)
STRUCTURAL = re.compile(rb"[{}\[\]:,]")
Again = Callable[[], tuple[bytes, tuple[Any, ...]]]


def scan(data: bytes) -> tuple[list[int], list[tuple[int, int]]]:
    """Where JSON allows whitespace (around structural characters and strings), and where each string's
    contents are. A heuristic on bytes that may be broken already; the expectation never relies on it."""
    boundaries = {0, len(data)}
    strings: list[tuple[int, int]] = []
    last = 0
    for match in STRING.finditer(data):
        boundaries.update(p for s in STRUCTURAL.finditer(data, last, match.start()) for p in s.span())
        boundaries.update(match.span())
        strings.append((match.start() + 1, match.end() - 1))
        last = match.end()
    boundaries.update(p for s in STRUCTURAL.finditer(data, last) for p in s.span())
    return sorted(boundaries), strings


@dataclass(frozen=True)
class Crlf:
    """A CR before the line feed (applied after every other edit, so the CR stays last)."""

    last = True

    def apply(self, data: bytes, again: Again) -> tuple[bytes, tuple[Any, ...]]:
        """The frame ending in CR."""
        return (data if data.endswith(b"\r") else data + b"\r"), ()

    def describe(self) -> str:
        """In words."""
        return "ends in CRLF"


@dataclass(frozen=True)
class Whitespace:
    """JSON whitespace between two tokens (or before or after the text)."""

    size: int
    kind: int
    at: int
    last = False

    def apply(self, data: bytes, again: Again) -> tuple[bytes, tuple[Any, ...]]:
        """The frame with the whitespace in."""
        points = scan(data)[0]
        count = min(self.size, MAX_FRAME - len(data))
        if count <= 0:
            return data, ()
        unit = WHITESPACE[self.kind % len(WHITESPACE)]
        position = points[self.at % len(points)]
        return data[:position] + (unit * (count // len(unit) + 1))[:count] + data[position:], ()

    def describe(self) -> str:
        """In words."""
        return f"{self.size} bytes of whitespace"


@dataclass(frozen=True)
class Truncate:
    """The frame cut short: `keep` per mille of it stays (always at least one byte, never all)."""

    keep: int
    last = False

    def apply(self, data: bytes, again: Again) -> tuple[bytes, tuple[Any, ...]]:
        """The first part of the frame."""
        if len(data) < 2:
            return data, ()
        return data[:1 + (len(data) - 2) * self.keep // 1000], ()

    def describe(self) -> str:
        """In words."""
        return "truncated"


@dataclass(frozen=True)
class Bom:
    """A UTF-8 byte order mark first (RFC 8259 section 8.1: a reader MAY ignore it)."""

    last = False

    def apply(self, data: bytes, again: Again) -> tuple[bytes, tuple[Any, ...]]:
        """The frame after a BOM."""
        return BOM + data, ()

    def describe(self) -> str:
        """In words."""
        return "a UTF-8 BOM first"


@dataclass(frozen=True)
class BadBytes:
    """Invalid UTF-8 or a raw control character, inside a string's contents or between tokens."""

    which: int
    inside: bool
    at: int
    last = False

    def apply(self, data: bytes, again: Again) -> tuple[bytes, tuple[Any, ...]]:
        """The frame with the bytes in."""
        boundaries, strings = scan(data)
        bad = BAD_BYTES[self.which % len(BAD_BYTES)]
        if self.inside and strings:
            start, end = strings[(self.at // 2) % len(strings)]
            position = start if self.at % 2 == 0 else end  # never inside an escape sequence
        else:
            position = boundaries[self.at % len(boundaries)]
        return data[:position] + bad + data[position:], ()

    def describe(self) -> str:
        """In words."""
        bad = BAD_BYTES[self.which % len(BAD_BYTES)]
        return f"bytes {bad.hex(' ')} {'inside a string' if self.inside else 'between tokens'}"


@dataclass(frozen=True)
class Join:
    """The message again (with its own id) right after the frame, with no line feed between them."""

    last = False

    def apply(self, data: bytes, again: Again) -> tuple[bytes, tuple[Any, ...]]:
        """Two frames on one line."""
        second, ids = again()
        return data + second, ids

    def describe(self) -> str:
        """In words."""
        return "a second message on the same line"


def byte_edits() -> st.SearchStrategy[Any]:
    """One byte-level edit, the gentlest first (the shrinker moves toward the start of this list)."""
    position = st.integers(0, 10_000)
    return st.one_of(
        st.just(Crlf()),
        st.builds(Whitespace, st.sampled_from(WHITESPACE_SIZES), st.integers(0, len(WHITESPACE) - 1), position),
        st.builds(Truncate, st.integers(0, 1000)),
        st.just(Bom()),
        st.builds(BadBytes, st.integers(0, len(BAD_BYTES) - 1), st.booleans(), position),
        st.just(Join()),
    )
