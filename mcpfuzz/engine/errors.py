"""Errors that end a run before it can judge anything (exit status 2)."""

from __future__ import annotations


class UnusableServer(Exception):
    """The server could not be started or never completed the handshake."""

    def __init__(self, message: str, *, stderr_tail: str = "", tip: str = "", silent: bool = False) -> None:
        super().__init__(message)
        self.message = message
        self.stderr_tail = stderr_tail
        self.tip = tip
        self.silent = silent  # the handshake got no answer at all (lint reports it as rule SEQ-004)

    def explained(self, *, say_empty: bool = False) -> str:
        """The message, the server's last stderr lines (`say_empty`: or that it wrote none) and the tip."""
        tail = (f"\nserver stderr (last lines):\n{self.stderr_tail}" if self.stderr_tail
                else "\nserver stderr was empty" if say_empty else "")
        return self.message + tail + (f"\ntip: {self.tip}" if self.tip else "")
