"""How a run gets its bearer token: the options as given, never a token itself."""

from __future__ import annotations

import shlex
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class AuthSettings:
    """`--auth-token-command` or `--oauth-client-id` with `--oauth-client-secret-env` (and `--oauth-scope`).

    The client secret is named by its environment variable: the value is read when a token is first needed and
    is never part of the settings, so transcripts and reports can carry these settings whole.
    """

    token_command: str | None = None
    client_id: str | None = None
    client_secret_env: str | None = None
    scope: str | None = None

    def __post_init__(self) -> None:
        if self.token_command is not None and self.client_id is not None:
            raise ValueError("give either a token command or OAuth client credentials, not both")
        if (self.client_id is None) != (self.client_secret_env is None):
            raise ValueError("OAuth client credentials need both the client id and the secret's variable")
        if self.scope is not None and self.client_id is None:
            raise ValueError("an OAuth scope needs OAuth client credentials")

    @property
    def kind(self) -> str:
        """`token-command` or `oauth-client-credentials`."""
        return "token-command" if self.token_command is not None else "oauth-client-credentials"

    def replay_options(self) -> list[str]:
        """The command-line options that supply the same authentication on replay."""
        if self.token_command is not None:
            return ["--auth-token-command", self.token_command]
        options = ["--oauth-client-id", str(self.client_id), "--oauth-client-secret-env", str(self.client_secret_env)]
        return [*options, *(["--oauth-scope", self.scope] if self.scope else [])]

    def describe(self) -> str:
        """The settings in words, for a transcript or a notice (a secret's variable by name only)."""
        if self.token_command is not None:
            return "a bearer token printed by --auth-token-command (run again before it expires and on a 401)"
        scope = f", scope {self.scope!r}" if self.scope else ""
        return (f"OAuth 2.1 client credentials (client {self.client_id!r}, secret in ${self.client_secret_env}"
                f"{scope}), discovered from the server's 401")

    def to_json(self) -> dict[str, Any]:
        """The transcript's `auth` block: how the run authenticated and the options to replay with."""
        data: dict[str, Any] = {"kind": self.kind, "replay": shlex.join(self.replay_options())}
        if self.token_command is not None:
            data["token_command"] = self.token_command
        else:
            data.update(client_id=self.client_id, client_secret_env=self.client_secret_env)
            if self.scope:
                data["scope"] = self.scope
        return data

    @classmethod
    def from_json(cls, data: Any) -> AuthSettings | None:
        """The settings of a transcript's `auth` block (None when there is none or it is unreadable)."""
        if not isinstance(data, Mapping):
            return None
        try:
            return cls(token_command=_text(data.get("token_command")), client_id=_text(data.get("client_id")),
                       client_secret_env=_text(data.get("client_secret_env")), scope=_text(data.get("scope")))
        except ValueError:
            return None


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None
