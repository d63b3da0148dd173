"""What every description of a server under test answers, whatever its kind: callers ask it, never test its class."""

from __future__ import annotations

from collections.abc import Iterable
from enum import Enum
from typing import Any, Protocol


class ServerKind(str, Enum):
    """What a target names; a transcript's server block is keyed by the first two."""

    COMMAND = "command"  # a process spoken to over its stdin and stdout
    URL = "url"  # an HTTP endpoint (perhaps launched by mcpfuzz)
    MEMORY = "memory"  # a Python handler in this process (tests)

    def __str__(self) -> str:
        return self.value


class Redaction(Protocol):
    """How a target hides secrets in what it writes (the corpus' Redactor is one)."""

    def text(self, s: str) -> str:
        """`s` with secrets and credential-shaped substrings replaced."""

    def argv(self, args: Iterable[str]) -> list[str]:
        """A command line with secrets replaced (and the values of `--token`-like flags)."""


class TargetDescription(Protocol):
    """A server under test as reports, transcripts and reproductions see it."""

    @property
    def kind(self) -> ServerKind:
        """Which kind of server this is (a tagged union of targets narrows on it)."""

    @property
    def label(self) -> str:
        """The server as a shell command line or a URL: its name in reports and example databases."""

    @property
    def secrets(self) -> tuple[str, ...]:
        """Values of this target that must never be written anywhere (header values)."""

    def to_json(self, redaction: Redaction) -> dict[str, Any]:
        """The server block of a transcript or checkpoint, redacted (header values left out)."""
