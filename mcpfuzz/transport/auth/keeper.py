"""One token for every connection of a process: fetched once, renewed before it expires and after a 401.

Every HTTP connection to the same server with the same settings (the session's, a soak's slices, the extra
connections of the concurrency and flight phases) shares one keeper, so a renewal happens once however many
requests are in flight; a request that got a 401 with a token already replaced just takes the new one.
"""

from __future__ import annotations

from typing import Protocol

import anyio
import anyio.lowlevel

from mcpfuzz.jsonrpc.issued_secrets import remember
from mcpfuzz.transport.auth.client_credentials import ClientCredentialsSource
from mcpfuzz.transport.auth.command import CommandSource
from mcpfuzz.transport.auth.settings import AuthSettings
from mcpfuzz.transport.auth.token import Token


class TokenSource(Protocol):
    """Where fresh tokens come from (a command, a token endpoint)."""

    async def fetch(self) -> Token:
        """A new token, or AuthError."""
        ...


class TokenKeeper:
    """The current token of one source; `renewals` counts the tokens fetched after the first."""

    def __init__(self, source: TokenSource) -> None:
        self.source = source
        self.token: Token | None = None
        self.retired: list[Token] = []  # earlier tokens, newest last (the auth probes use an expired one)
        self.renewals = 0
        self._locks: dict[object, anyio.Lock] = {}

    def _lock(self) -> anyio.Lock:
        """A lock of the running event loop (a process may run several loops one after the other)."""
        loop = anyio.lowlevel.current_token()
        if loop not in self._locks:
            self._locks.clear()
            self._locks[loop] = anyio.Lock()
        return self._locks[loop]

    async def current(self) -> str:
        """The token to send now: fetched when there is none yet or it is due for renewal."""
        token = self.token
        if token is not None and not token.due():
            return token.value
        async with self._lock():
            if self.token is token or self.token is None or self.token.due():
                await self._fetch()
            assert self.token is not None
            return self.token.value

    async def rejected(self, value: str) -> str:
        """The server refused `value` with a 401: a new token (unless another request already replaced it)."""
        async with self._lock():
            if self.token is None or self.token.value == value:
                await self._fetch()
            assert self.token is not None
            return self.token.value

    async def _fetch(self) -> None:
        token = await self.source.fetch()
        remember(token.value)
        if self.token is not None:
            self.retired = [*self.retired[-3:], self.token]
            self.renewals += 1
        self.token = token


_KEEPERS: dict[tuple[AuthSettings, str], TokenKeeper] = {}


def keeper_for(settings: AuthSettings, url: str) -> TokenKeeper:
    """The process's keeper for this server and these settings (made on first use)."""
    key = (settings, url)
    if key not in _KEEPERS:
        source: TokenSource
        if settings.token_command is not None:
            source = CommandSource(settings.token_command)
        else:
            assert settings.client_id is not None and settings.client_secret_env is not None
            source = ClientCredentialsSource(url, settings.client_id, settings.client_secret_env, settings.scope)
        _KEEPERS[key] = TokenKeeper(source)
    return _KEEPERS[key]
