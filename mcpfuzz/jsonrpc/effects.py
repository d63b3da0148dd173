"""What a server process was seen doing while one call ran (`--observe`, `--security`): files, processes, network.

Plain data the engine fills from the hook loaded into the server (mcpfuzz.engine.observe) and the oracles judge.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass, field
from enum import Enum


class Op(str, Enum):
    """One kind of side effect, as the hooks name it."""

    READ = "read"
    WRITE = "write"
    CREATE = "create"
    DELETE = "delete"
    RENAME = "rename"
    LINK = "link"
    CHMOD = "chmod"
    LIST = "list"
    STAT = "stat"
    EXEC = "exec"
    CONNECT = "connect"
    DNS = "dns"


FILE_OPS = frozenset({Op.READ, Op.WRITE, Op.CREATE, Op.DELETE, Op.RENAME, Op.LINK, Op.CHMOD, Op.LIST, Op.STAT})
CHANGES = frozenset({Op.WRITE, Op.CREATE, Op.DELETE, Op.RENAME, Op.LINK, Op.CHMOD})
NETWORK = frozenset({Op.CONNECT, Op.DNS})


@dataclass(frozen=True)
class Effect:
    """One side effect: what was done, to which path (resolved) or address, by which process.

    `outside`: a path outside every folder the server was given (its workspace, the --allow-path folders) and not
    one its runtime or its own start-up uses; decided by the engine, which knows those folders. `ambiguous`: the hook
    could not tell which request it served and several calls were in flight then (a pipelined window): it is charged
    to each of them, and no finding is made of it (the window's calls are run alone instead).
    """

    op: Op
    path: str = ""  # a file operation's resolved path (a rename's or link's first name)
    to: str = ""  # a rename's new name, a link's target as written
    argv: tuple[str, ...] = ()  # a process started: its arguments, the program first
    address: str = ""  # a connection's host:port (or URL), a name looked up
    pid: int = 0
    program: str = ""
    outside: bool = False
    ambiguous: bool = False

    def line(self) -> str:
        """The effect as a syscall-like line: `write("/tmp/x/outside.txt") pid 123 (python server.py)`."""
        if self.op is Op.EXEC:
            what = shlex.join(self.argv)
        elif self.op in NETWORK:
            what = self.address
        else:
            what = self.path + (f" -> {self.to}" if self.to else "")
        return f"{self.op.value}({what!r}) pid {self.pid} ({self.program})"


@dataclass(frozen=True)
class Observation:
    """The side effects of one call, and what its tool declared (MCP server/tools `ToolAnnotations`)."""

    effects: tuple[Effect, ...] = ()
    read_only: bool = False  # annotated readOnlyHint: true
    open_world: bool = False  # annotated openWorldHint: true
    inputs: tuple[str, ...] = field(default=())  # the strings of the call's arguments (what came from the input)
    workspace: str = ""  # the folder the server was given, in messages
