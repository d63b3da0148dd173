"""Stdout lines of any length: a capped prefix is kept, the full size is reported."""

from __future__ import annotations

import pytest

from mcpfuzz.transport.line_reader import LineSplitter

pytestmark = pytest.mark.unit


def test_a_100_megabyte_line_keeps_only_the_cap_and_reports_its_size() -> None:
    """Memory stays bounded by the cap whatever the line length."""
    lines: list[tuple[bytes, int]] = []
    splitter = LineSplitter(lambda line, size: lines.append((line, size)), max_line=1024)
    chunk = b"x" * (1 << 20)
    for _ in range(100):
        splitter.feed(chunk)
    splitter.feed(b'\n{"jsonrpc":"2.0"}\r\n')
    assert [(len(line), size) for line, size in lines] == [(1024, 100 << 20), (17, 17)]
    assert lines[1][0] == b'{"jsonrpc":"2.0"}'


def test_lines_split_across_chunks_and_blank_lines_skipped() -> None:
    """A line may arrive in pieces; empty lines are not messages."""
    lines: list[bytes] = []
    splitter = LineSplitter(lambda line, size: lines.append(line), max_line=64)
    for piece in (b'{"a"', b":1}\n\n", b'{"b":2}'):
        splitter.feed(piece)
    splitter.finish()
    assert lines == [b'{"a":1}', b'{"b":2}']


def test_env_option_adds_to_the_inherited_environment() -> None:
    """`--env` adds variables; the server still inherits mcpfuzz's environment (the report contract)."""
    import os

    from mcpfuzz.transport.stdio import inherited_env

    env = inherited_env({"MCPFUZZ_TEST_TOKEN": "x"})
    assert env is not None and env["MCPFUZZ_TEST_TOKEN"] == "x" and env["PATH"] == os.environ["PATH"]
    assert inherited_env({}) is None
