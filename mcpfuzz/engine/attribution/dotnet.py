"""A .NET server's `ModelContextProtocol` package and version, read from its `*.deps.json`.

A framework-dependent app ships `NAME.deps.json` beside `NAME.dll` (and its apphost `NAME`); a single-file app
carries the same file inside its bundle, whose header the host finds through an offset stored right before a
fixed 32-byte signature in the host's data.
"""

from __future__ import annotations

import re
import struct
from pathlib import Path

from mcpfuzz.engine.attribution.binfile import read_at, scan, section_or_head
from mcpfuzz.engine.attribution.sdks import Sdk, SdkInfo

# The .NET host's bundle marker (the SHA-256 of ".net core bundle").
BUNDLE_SIGNATURE = bytes.fromhex("8b1202b96a612038727b930214d7a03213f5b9e6efae3318ee3b2dce24b36aae")
_LIBRARY = re.compile(rb'"ModelContextProtocol(?:\.Core)?/(\d[^"]*)"')
MAX_DEPS_BYTES = 8 << 20
MAX_DEPS_FILES = 20  # deps.json files beside a binary looked at (a folder of many apps is not crawled)


def dotnet_sdk(program: Path) -> SdkInfo | None:
    """The C# SDK behind a .NET app: the deps.json beside the program (its apphost or dll), else its bundle's."""
    for deps in _deps_beside(program):
        found = _from_deps(read_at(deps, 0, MAX_DEPS_BYTES), str(deps))
        if found is not None:
            return found
    deps_text = bundled_deps(program)
    return None if deps_text is None else _from_deps(deps_text, f"{program} (bundled deps.json)")


def _deps_beside(program: Path) -> list[Path]:
    """`NAME.deps.json` for `NAME` or `NAME.dll` first, then the folder's other deps.json files."""
    own = program.with_name(program.name.removesuffix(".dll").removesuffix(".exe") + ".deps.json")
    try:
        others = sorted(path for path in program.parent.glob("*.deps.json") if path != own)[:MAX_DEPS_FILES]
    except OSError:
        others = []
    return ([own] if own.is_file() else []) + others


def _from_deps(text: bytes, source: str) -> SdkInfo | None:
    match = _LIBRARY.search(text)
    return None if match is None else SdkInfo(Sdk.CSHARP, match.group(1).decode(), source)


def bundled_deps(program: Path) -> bytes | None:
    """The deps.json inside a single-file bundle, or None (no bundle, or one without it)."""
    data = section_or_head(program, ".data")
    at = data.find(BUNDLE_SIGNATURE)
    if at >= 8:
        header_offset, = struct.unpack_from("<q", data, at - 8)
    else:
        found = scan(program, BUNDLE_SIGNATURE)
        if found is None or found < 8:
            return None
        header_offset, = struct.unpack("<q", read_at(program, found - 8, 8))
    if header_offset <= 0:  # an apphost that is no bundle keeps the placeholder's zero
        return None
    header = read_at(program, header_offset, 4096)
    span = _deps_span(header)
    if span is None:
        return None
    offset, size = span
    return read_at(program, offset, min(size, MAX_DEPS_BYTES))


def _deps_span(header: bytes) -> tuple[int, int] | None:
    """(offset, size) of deps.json from a bundle header: major, minor, file count, bundle id, then (v2+) the span."""
    if len(header) < 13:
        return None
    major, _minor, _count = struct.unpack_from("<IIi", header, 0)
    if major < 2:
        return None
    at = 12
    length = shift = 0
    while at < len(header):  # the bundle id, prefixed with its length as a 7-bit varint
        byte = header[at]
        at += 1
        length |= (byte & 0x7F) << shift
        shift += 7
        if not byte & 0x80:
            break
    at += length
    if at + 16 > len(header):
        return None
    offset, size = struct.unpack_from("<qq", header, at)
    return (offset, size) if offset > 0 and size > 0 else None
