"""Bounded reads of a compiled server's file: one ELF section, or the file's first bytes when it has no such table.

A detector never reads a whole binary: an ELF file names where each section lies, so only the few bytes a
reader needs are read; any other file (Mach-O, PE, a stripped-of-sections ELF) is read up to MAX_SCAN_BYTES.
"""

from __future__ import annotations

import re
import struct
from dataclasses import dataclass, field
from pathlib import Path

ELF_MAGIC = b"\x7fELF"
MAX_SECTION_BYTES = 64 << 20  # a larger section is not one a detector needs whole
MAX_SCAN_BYTES = 64 << 20
MAX_SECTION_HEADERS = 4096
_CHUNK = 1 << 20


def is_executable_image(path: Path) -> bool:
    """True for a compiled program (ELF, Mach-O, PE), not a script."""
    head = read_at(path, 0, 4)
    return head[:4] == ELF_MAGIC or head[:2] == b"MZ" or head[:4] in (
        b"\xcf\xfa\xed\xfe", b"\xce\xfa\xed\xfe", b"\xca\xfe\xba\xbe")


def read_at(path: Path, offset: int, size: int) -> bytes:
    """Up to `size` bytes at `offset` (b"" when unreadable)."""
    try:
        with open(path, "rb") as handle:
            handle.seek(offset)
            return handle.read(max(0, size))
    except (OSError, ValueError):
        return b""


def elf_section(path: Path, name: str) -> bytes | None:
    """The bytes of an ELF section (at most MAX_SECTION_BYTES), None when the file is no ELF or has no such section."""
    found = elf_section_span(path, name)
    if found is None:
        return None
    offset, size = found
    return read_at(path, offset, min(size, MAX_SECTION_BYTES))


def elf_section_span(path: Path, name: str) -> tuple[int, int] | None:
    """(file offset, size) of an ELF section by name, from the section header table."""
    header = read_at(path, 0, 64)
    if len(header) < 52 or header[:4] != ELF_MAGIC:
        return None
    wide = header[4] == 2
    order = "<" if header[5] == 1 else ">"
    if wide:
        shoff, = struct.unpack_from(order + "Q", header, 0x28)
        entsize, count, names_index = struct.unpack_from(order + "HHH", header, 0x3A)
    else:
        shoff, = struct.unpack_from(order + "I", header, 0x20)
        entsize, count, names_index = struct.unpack_from(order + "HHH", header, 0x2E)
    if not shoff or not count or count > MAX_SECTION_HEADERS or names_index >= count or entsize < (64 if wide else 40):
        return None
    table = read_at(path, shoff, entsize * count)
    if len(table) < entsize * count:
        return None

    def span(index: int) -> tuple[int, int, int]:
        base = index * entsize
        if wide:
            name_at, = struct.unpack_from(order + "I", table, base)
            offset, size = struct.unpack_from(order + "QQ", table, base + 0x18)
        else:
            name_at, = struct.unpack_from(order + "I", table, base)
            offset, size = struct.unpack_from(order + "II", table, base + 0x10)
        return name_at, offset, size

    _, names_offset, names_size = span(names_index)
    names = read_at(path, names_offset, min(names_size, 1 << 20))
    wanted = name.encode()
    for index in range(count):
        name_at, offset, size = span(index)
        if names[name_at:name_at + len(wanted) + 1] == wanted + b"\0":
            return offset, size
    return None


def scan(path: Path, needle: bytes, limit: int = MAX_SCAN_BYTES) -> int | None:
    """The file offset of the first `needle` in the file's first `limit` bytes, read a chunk at a time."""
    try:
        with open(path, "rb") as handle:
            carry = b""
            read = 0
            while read < limit:
                chunk = handle.read(min(_CHUNK, limit - read))
                if not chunk:
                    return None
                window = carry + chunk
                at = window.find(needle)
                if at >= 0:
                    return read - len(carry) + at
                read += len(chunk)
                carry = window[-(len(needle) - 1):] if len(needle) > 1 else b""
    except OSError:
        return None
    return None


def section_or_head(path: Path, *names: str) -> bytes:
    """The first of the named ELF sections the file has, else the file's first MAX_SCAN_BYTES."""
    for name in names:
        found = elf_section(path, name)
        if found is not None:
            return found
    return read_at(path, 0, MAX_SCAN_BYTES)


@dataclass
class Marks:
    """What a chunked scan of a region found: which of the needles occur, and every match of the pattern."""

    found: set[bytes] = field(default_factory=set)
    matches: list[bytes] = field(default_factory=list)


MATCH_OVERLAP = 256  # a pattern's match longer than this may be cut at a chunk's edge


def scan_marks(path: Path, start: int, end: int, needles: tuple[bytes, ...], pattern: re.Pattern[bytes]) -> Marks:
    """The needles and pattern matches in the bytes [start, end) of a file, read a chunk at a time (a chunk and the
    end of the one before it in memory, never the region whole)."""
    marks = Marks()
    overlap = max([MATCH_OVERLAP, *(len(needle) for needle in needles)])
    try:
        with open(path, "rb") as handle:
            handle.seek(start)
            carry = b""
            position = start
            while position < end:
                chunk = handle.read(min(_CHUNK, end - position))
                if not chunk:
                    break
                window = carry + chunk
                marks.found.update(needle for needle in needles if needle in window)
                for match in pattern.finditer(window):
                    if match.end() > len(carry) and match.group(0) not in marks.matches:  # not seen in the carry
                        marks.matches.append(match.group(0))
                position += len(chunk)
                carry = window[-overlap:]
    except (OSError, ValueError):
        return marks
    return marks
