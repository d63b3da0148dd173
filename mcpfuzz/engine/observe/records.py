"""The hooks' records, read from their file as they are appended: each one parsed into a `Record`."""

from __future__ import annotations

import contextlib
import json
import os
from dataclasses import dataclass
from typing import Any

from mcpfuzz.jsonrpc.effects import Effect, Op

MAX_READ = 8 * 1024 * 1024  # bytes read per look: a server that floods its records is read in parts


@dataclass(frozen=True)
class Record:
    """One record: when (monotonic seconds), which process, and the effect (None for a `hello`)."""

    at: float
    pid: int
    effect: Effect | None
    request: str | None = None  # the id of the request whose handler did it, when the hook could tell
    parent: int | None = None  # a hello's parent pid
    argv: tuple[str, ...] = ()  # a hello's command line


def parse(line: bytes) -> Record | None:
    """A record from one line of the file, or None for a line that is not one (a torn write, garbage)."""
    try:
        data = json.loads(line)
        at = int(data["t"]) / 1e9
        pid = int(data["pid"])
        op = str(data["op"])
    except (ValueError, KeyError, TypeError):
        return None
    program = str(data.get("prog", ""))
    request = None if data.get("req") is None else json.dumps(data["req"])
    if op == "hello":
        parent = data.get("ppid")
        return Record(at, pid, None, parent=int(parent) if isinstance(parent, int) else None,
                      argv=tuple(str(word) for word in data.get("argv") or ()))
    try:
        kind = Op(op)
    except ValueError:
        return None
    return Record(at, pid, _effect(kind, data, pid, program), request)


def _effect(op: Op, data: dict[str, Any], pid: int, program: str) -> Effect:
    argv = data.get("argv")
    return Effect(op, path=str(data.get("path") or ""), to=str(data.get("to") or ""),
                  argv=tuple(str(word) for word in argv) if isinstance(argv, list) else (),
                  address=str(data.get("addr") or ""), pid=pid, program=program)


class RecordFile:
    """The hooks' file, read from where the last read stopped (whole lines only)."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.offset = 0
        self.rest = b""

    def read(self) -> list[Record]:
        """The records appended since the last read."""
        chunk = b""
        with contextlib.suppress(OSError), open(self.path, "rb") as handle:
            handle.seek(self.offset)
            chunk = handle.read(MAX_READ)
        self.offset += len(chunk)
        data = self.rest + chunk
        lines = data.split(b"\n")
        self.rest = lines.pop()
        return [record for line in lines if line and (record := parse(line)) is not None]

    def size(self) -> int:
        """How many bytes the hooks wrote so far."""
        try:
            return os.path.getsize(self.path)
        except OSError:
            return 0
