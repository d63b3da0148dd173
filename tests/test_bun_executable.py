"""A Bun single-file executable names the TypeScript SDK its embedded sources carry: the module graph is found as
Bun lays it out (appended before the trailer, or in an ELF `.bun` section) and read a chunk at a time; the same
marks outside such a region say nothing."""

from __future__ import annotations

import struct
from pathlib import Path

import pytest

from mcpfuzz.engine.attribution import binfile, bun
from mcpfuzz.engine.attribution.bundled import SERVER_MARKS, V1_MARK
from mcpfuzz.engine.attribution.detect import binary_sdk
from mcpfuzz.engine.attribution.sdks import Sdk

pytestmark = pytest.mark.unit

RUNTIME = b"\x7fELF\x02\x01\x01" + b"\0" * 57 + b"runtime code " * 200_000 + b"Bun v1.3.10 (Linux x64)\0"


def _graph(*, v1: bool = True, named: bytes = b"") -> bytes:
    """Embedded sources as a bundler leaves them: SDK code between other modules, a mark across a chunk's edge."""
    code = [b"// node_modules/@modelcontextprotocol/sdk/dist/esm/server/index.js\n",
            b'throw new Error(`' + SERVER_MARKS[0] + b'${method})`);\n',
            b"x" * (binfile._CHUNK - 20),  # the next mark straddles the boundary of a 1 MiB read
            b'throw new Error("' + SERVER_MARKS[1] + b'");\n', named]
    if v1:
        code.append(b"super(`" + V1_MARK + b"code}: ${message}`);\n")
    return b"".join(code)


def _appended(path: Path, graph: bytes) -> Path:
    """Bun's older layout: runtime, graph, the record starting with the graph's size, trailer, file size."""
    record = struct.pack("<Q", len(graph)) + b"\0" * 24
    body = RUNTIME + graph + record + bun.TRAILER
    path.write_bytes(body + struct.pack("<Q", len(body) + 8))
    return path


def test_an_appended_module_graph_names_the_sdk_major_and_the_bun_release(tmp_path: Path) -> None:
    found = binary_sdk(_appended(tmp_path / "server", _graph()))
    assert found is not None and (found.sdk, found.version) == (Sdk.TYPESCRIPT, "1.x")
    assert "Bun executable" in found.source and "Bun v1.3.10" in found.source
    found = binary_sdk(_appended(tmp_path / "server2", _graph(v1=False)))
    assert found is not None and found.version == "2.x"


def test_a_version_the_embedded_sources_name_is_taken(tmp_path: Path) -> None:
    """An isolated install (Bun's, pnpm's) keeps the version in the store folder a module's path goes through."""
    graph = _graph(named=b"// node_modules/.bun/@modelcontextprotocol+sdk@1.26.0/node_modules/@modelcontextprotocol/"
                         b"sdk/dist/esm/types.js\n")
    found = binary_sdk(_appended(tmp_path / "server", graph))
    assert found is not None and found.version == "1.26.0"


def test_the_marks_outside_a_bun_module_graph_say_nothing(tmp_path: Path) -> None:
    plain = tmp_path / "not-bun"
    plain.write_bytes(RUNTIME + _graph())  # no trailer: no module graph
    assert bun.bun_sdk(plain) is None
    half = _appended(tmp_path / "half", _graph().replace(SERVER_MARKS[1], b"another transport"))
    assert bun.bun_sdk(half) is None  # one mark alone is no SDK server class and transport


def test_a_graph_record_that_is_not_plausible_falls_back_to_the_bounded_tail(tmp_path: Path) -> None:
    graph = _graph()
    body = RUNTIME + graph + b"\xff" * 32 + bun.TRAILER  # a record of another layout: an absurd size
    path = tmp_path / "server"
    path.write_bytes(body + struct.pack("<Q", len(body) + 8))
    start, end = bun.embedded_region(path) or (None, None)
    assert start == max(0, len(body) - len(bun.TRAILER) - bun.MAX_GRAPH_BYTES) and end == len(body) - len(bun.TRAILER)
    assert bun.bun_sdk(path) is not None


def test_scan_marks_finds_needles_and_matches_across_chunk_edges_only_once(tmp_path: Path) -> None:
    import re
    path = tmp_path / "blob"
    edge = binfile._CHUNK
    blob = bytearray(b"." * (3 * edge))
    for at, text in ((edge - 5, b"NEEDLE"), (2 * edge - 10, b"sdk@1.2.3"), (10, b"sdk@1.2.3")):
        blob[at:at + len(text)] = text
    path.write_bytes(bytes(blob))
    marks = binfile.scan_marks(path, 0, len(blob), (b"NEEDLE", b"ABSENT"), re.compile(rb"sdk@\d+\.\d+\.\d+"))
    assert marks.found == {b"NEEDLE"} and marks.matches == [b"sdk@1.2.3"]
    assert binfile.scan_marks(path, edge, len(blob), (b"NEEDLE",), re.compile(rb"x")).found == set()
