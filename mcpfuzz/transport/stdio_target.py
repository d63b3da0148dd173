"""A server started as a process and spoken to over its stdin and stdout: `mcpfuzz run -- CMD`."""

from __future__ import annotations

import shlex
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar, Literal

from mcpfuzz.transport.target import Redaction, ServerKind


@dataclass(frozen=True)
class StdioTarget:
    """The command line that starts the server (a fresh process for every start).

    `env_names` are the variables the run set for it (--env, a servers file's `env`): their names are part of how
    the server is started, so transcripts and reproductions keep them; their values are secrets, never written.
    """

    command: tuple[str, ...]
    cwd: str | None = None  # the server's working directory (None: mcpfuzz's own)
    env_names: tuple[str, ...] = ()
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
        """`{"command": [...]}`, each word redacted (and `cwd` when the server runs elsewhere, `env` with the names of
        the variables the run set for it, never their values)."""
        data: dict[str, Any] = {"command": redaction.argv(self.command)}
        if self.cwd is not None:
            data["cwd"] = self.cwd
        if self.env_names:
            data["env"] = list(self.env_names)
        return data

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> StdioTarget | None:
        """The command of a server block; None when it names none."""
        command, cwd, env = data.get("command"), data.get("cwd"), data.get("env")
        if not isinstance(command, list) or not command:
            return None
        names = tuple(str(name) for name in env) if isinstance(env, list) else ()
        return cls(tuple(str(word) for word in command), cwd if isinstance(cwd, str) else None, names)
