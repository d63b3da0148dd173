"""The TypeScript SDK inside a Bun single-file executable (`bun build --compile`), read from its embedded sources.

Such a program is Bun's own runtime with the server's bundled JavaScript (Bun's "module graph") embedded: in an
ELF section `.bun` (recent releases) or appended at the end of the file, where it ends with the trailer
`\\n---- Bun! ----\\n` and the file's size as 8 bytes (a record before the trailer gives the graph's size).
Only that region is read, a chunk at a time and up to a bound, for the SDK's own marks (bundled.py's: the server
class's refusal of a capability it was not given, the stdio transport's double start, 1.x's `MCP error ${`) and
a version a path or manifest names; the runtime's own banner (`Bun v1.3.10`) is read from the file's start for
the evidence.
"""

from __future__ import annotations

import os
import re
import struct
from pathlib import Path

from mcpfuzz.engine.attribution.binfile import elf_section_span, read_at, scan, scan_marks
from mcpfuzz.engine.attribution.bundled import NAMED_VERSION, SERVER_MARKS, V1_MARK, named_version
from mcpfuzz.engine.attribution.sdks import Sdk, SdkInfo

TRAILER = b"\n---- Bun! ----\n"
MAX_GRAPH_BYTES = 64 << 20  # the embedded sources of one server (an appended graph is read from the end)
_OFFSETS_SIZE = 32  # Bun's record before the trailer starts with the graph's byte count (a u64)
_RECORD_SLACK = 4096  # a release whose record is laid out otherwise still has its graph within this of the count
MAX_BANNER_OFFSET = 32 << 20  # the runtime's version string lies in its first few megabytes
_BANNER = re.compile(rb"Bun v(\d+\.\d+\.\d+)")


def bun_sdk(binary: Path) -> SdkInfo | None:
    """The TypeScript SDK a Bun-compiled executable embeds (its version when the sources name it, else its major
    as `1.x` or `2.x`), or None for any other file."""
    region = embedded_region(binary)
    if region is None:
        return None
    marks = scan_marks(binary, *region, (*SERVER_MARKS, V1_MARK), NAMED_VERSION)
    if not all(mark in marks.found for mark in SERVER_MARKS):
        return None
    major = "1" if V1_MARK in marks.found else "2"
    version = named_version(marks.matches, major) or f"{major}.x"
    runtime = bun_release(binary)
    where = f"bundled in the Bun executable {binary}" + (f" (Bun v{runtime})" if runtime else "")
    return SdkInfo(Sdk.TYPESCRIPT, version, where)


def embedded_region(binary: Path) -> tuple[int, int] | None:
    """[start, end) of the module graph: the `.bun` section, or the bytes before an appended graph's trailer."""
    span = elf_section_span(binary, ".bun")
    if span is not None:
        offset, size = span
        return offset, offset + min(size, MAX_GRAPH_BYTES)
    try:
        size = os.path.getsize(binary)
    except OSError:
        return None
    tail = read_at(binary, size - len(TRAILER) - 8, len(TRAILER) + 8) if size > len(TRAILER) + 8 else b""
    if not tail.startswith(TRAILER):
        return None
    end = size - len(TRAILER) - 8
    return max(0, end - _appended_size(binary, end)), end


def _appended_size(binary: Path, trailer_at: int) -> int:
    """How many bytes before the trailer to read: the graph's byte count where Bun's offsets record (just before
    the trailer) gives a plausible one, with room for the record itself; else the bound."""
    record = read_at(binary, trailer_at - _OFFSETS_SIZE, 8)
    count = struct.unpack("<Q", record)[0] if len(record) == 8 else 0
    if 0 < count <= min(MAX_GRAPH_BYTES, trailer_at):
        return count + _RECORD_SLACK
    return MAX_GRAPH_BYTES


def bun_release(binary: Path) -> str | None:
    """The Bun release the runtime part says it is (`1.3.10`)."""
    for needle in (b"Bun v1.", b"Bun v2."):
        at = scan(binary, needle, MAX_BANNER_OFFSET)
        match = _BANNER.match(read_at(binary, at, 32)) if at is not None else None
        if match:
            return match.group(1).decode()
    return None
