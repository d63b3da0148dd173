"""`--auth-token-command`: a shell command that prints a token (or a token response as JSON)."""

from __future__ import annotations

import subprocess

import anyio

from mcpfuzz.transport.auth.errors import AuthError
from mcpfuzz.transport.auth.token import Token, TokenFormatError, parse_token_output

COMMAND_TIMEOUT = 60.0  # a command may log in somewhere; longer than that, it hangs
STDERR_TAIL = 600


class CommandSource:
    """Runs the command each time a token is needed; its stdout is the token, its stderr only shown on failure."""

    def __init__(self, command: str, timeout: float = COMMAND_TIMEOUT) -> None:
        self.command = command
        self.timeout = timeout

    async def fetch(self) -> Token:
        """A fresh token from the command; AuthError with its exit status and stderr when it fails."""
        try:
            with anyio.fail_after(self.timeout):
                done = await anyio.run_process(self.command, check=False, stdin=subprocess.DEVNULL)
        except TimeoutError:
            raise AuthError(f"--auth-token-command did not finish within {self.timeout:g}s") from None
        except OSError as error:
            raise AuthError(f"--auth-token-command could not be run: {error}") from None
        stderr = done.stderr.decode("utf-8", "replace").strip()[-STDERR_TAIL:]
        said = f"; its stderr ends: {stderr}" if stderr else " and printed nothing on stderr"
        if done.returncode != 0:
            raise AuthError(f"--auth-token-command failed with exit status {done.returncode}{said}")
        try:
            return parse_token_output(done.stdout.decode("utf-8", "replace"))
        except TokenFormatError as error:
            raise AuthError(f"--auth-token-command printed no usable token: {error}{said}") from None
