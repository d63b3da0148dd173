"""A server started as a process and spoken to over its stdin and stdout: `mcpfuzz run -- CMD`."""

from __future__ import annotations

import shlex
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar, Literal

from mcpfuzz.transport.target import Redaction, ServerKind


@dataclass(frozen=True)
class StdioTarget:
    """The command line that starts the server (a fresh process for every start)."""

    command: tuple[str, ...]
    cwd: str | None = None  # the server's working directory (None: mcpfuzz's own)
    kind: ClassVar[Literal[ServerKind.COMMAND]] = ServerKind.COMMAND

    @property
    def label(self) -> str:
        """The command as one shell line."""
        return shlex.join(self.command)

    @property
    def secrets(self) -> tuple[str, ...]:
        """None of its own: a command's secrets come with --env, which is the run's."""
        return ()

    def to_json(self, redaction: Redaction) -> dict[str, Any]:
        """`{"command": [...]}`, each word redacted (and `cwd` when the server runs elsewhere)."""
        data: dict[str, Any] = {"command": redaction.argv(self.command)}
        if self.cwd is not None:
            data["cwd"] = self.cwd
        return data

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> StdioTarget | None:
        """The command of a server block; None when it names none."""
        command, cwd = data.get("command"), data.get("cwd")
        if not isinstance(command, list) or not command:
            return None
        return cls(tuple(str(word) for word in command), cwd if isinstance(cwd, str) else None)
