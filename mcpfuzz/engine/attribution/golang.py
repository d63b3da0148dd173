"""A Go server's MCP module, read from the build information the Go linker embeds in every binary.

The `.go.buildinfo` blob starts with `\\xff Go buildinf:`, a pointer size and flags; since Go 1.18 (flag 2) the Go
version and the module list follow inline as two varint-length strings. The module list is `runtime/debug`'s text:
`mod` (the main module), `dep` (each dependency) and `=>` (a replacement of the line above), tab-separated path,
version and sum. Older binaries point at those strings instead; their module text is found by its sentinel.
"""

from __future__ import annotations

from pathlib import Path

from mcpfuzz.engine.attribution.binfile import MAX_SCAN_BYTES, elf_section, read_at, scan
from mcpfuzz.engine.attribution.sdks import Sdk, SdkInfo

BUILDINFO_MAGIC = b"\xff Go buildinf:"
_HEADER_SIZE = 32
_INLINE_STRINGS = 0x2
# runtime/debug wraps the module text in 16 bytes each side.
_MODINFO_START = bytes.fromhex("3077af0c9274080241e1c107e6d618e6")
_MODINFO_END = bytes.fromhex("f932433186182072008242104116d8f2")
MAX_BUILDINFO_BYTES = 1 << 20

GO_MODULES = {
    "github.com/modelcontextprotocol/go-sdk": Sdk.GO,
    "github.com/mark3labs/mcp-go": Sdk.MCP_GO,
}


def go_sdk(binary: Path) -> SdkInfo | None:
    """The MCP Go module (and version) a Go binary was built with, or None (no Go binary, or no MCP module)."""
    text = module_text(binary)
    if text is None:
        return None
    for path, version in modules(text):
        sdk = GO_MODULES.get(path)
        if sdk is not None:
            return SdkInfo(sdk, version, str(binary))
    return None


def module_text(binary: Path) -> str | None:
    """The module list a Go binary carries (`mod`/`dep`/`=>` lines), None when it has none."""
    blob = elf_section(binary, ".go.buildinfo")
    if blob is None or not blob.startswith(BUILDINFO_MAGIC):
        at = scan(binary, BUILDINFO_MAGIC)
        if at is None:
            return None
        blob = read_at(binary, at, MAX_BUILDINFO_BYTES)
    if len(blob) < _HEADER_SIZE:
        return None
    if blob[15] & _INLINE_STRINGS:
        strings = _varint_strings(blob[_HEADER_SIZE:], 2)
        return _unwrap(strings[1]) if len(strings) == 2 else None
    # Before Go 1.18 the header holds pointers to the strings: look for the module text itself.
    at = scan(binary, _MODINFO_START, MAX_SCAN_BYTES)
    if at is None:
        return None
    return _unwrap(read_at(binary, at, MAX_BUILDINFO_BYTES))


def modules(text: str) -> list[tuple[str, str]]:
    """(module path, version) of the main module and every dependency, a replacement's version where replaced."""
    found: list[tuple[str, str]] = []
    for line in text.splitlines():
        fields = line.split("\t")
        if fields[0] in ("mod", "dep") and len(fields) >= 3:
            found.append((fields[1], fields[2]))
        elif fields[0] == "=>" and found and len(fields) >= 3:
            # A local replacement has no version: the replaced module's says what it was meant to be.
            path, version = found[-1]
            found[-1] = (path, fields[2] or version)
    return found


def _varint_strings(data: bytes, count: int) -> list[bytes]:
    """`count` strings, each prefixed with its length as an unsigned varint."""
    strings = []
    at = 0
    for _ in range(count):
        length = shift = 0
        while at < len(data):
            byte = data[at]
            at += 1
            length |= (byte & 0x7F) << shift
            shift += 7
            if not byte & 0x80:
                break
        if at + length > len(data):
            break
        strings.append(data[at:at + length])
        at += length
    return strings


def _unwrap(raw: bytes) -> str | None:
    """The module text between runtime/debug's sentinels (a binary built without modules has none)."""
    if not raw.startswith(_MODINFO_START):
        return None
    body = raw[len(_MODINFO_START):]
    end = body.find(_MODINFO_END)
    return (body if end < 0 else body[:end]).decode("utf-8", "replace")
