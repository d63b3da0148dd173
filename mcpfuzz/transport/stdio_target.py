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
        """`{"command": [...]}`, each word redacted."""
        return {"command": redaction.argv(self.command)}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> StdioTarget | None:
        """The command of a server block; None when it names none."""
        command = data.get("command")
        return cls(tuple(str(word) for word in command)) if isinstance(command, list) and command else None
