"""One token for every connection of a process: fetched once, renewed before it expires and after a 401.

Every HTTP connection to the same server with the same settings (the session's, a soak's slices, the extra
connections of the concurrency and flight phases) shares one keeper, so a renewal happens once however many
requests are in flight; a request that got a 401 with a token already replaced just takes the new one. A worker
process of `--workers` borrows its tokens from the parent process instead (see lending.py).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol, runtime_checkable

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


@runtime_checkable
class SharedSource(TokenSource, Protocol):
    """A source other processes renew from too: told which token a server refused, so it is renewed once for all."""

    async def after_refusal(self, refused: str) -> Token:
        """A token other than `refused` (renewed unless another process already did), or AuthError."""
        ...

    @property
    def origin(self) -> TokenSource:
        """Where this process would get tokens by itself (the auth probes ask it for other audiences)."""
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
                await self._fetch(refused=value)
            assert self.token is not None
            return self.token.value

    @property
    def origin(self) -> TokenSource:
        """Where tokens really come from (a shared source's own source)."""
        return self.source.origin if isinstance(self.source, SharedSource) else self.source

    async def _fetch(self, refused: str | None = None) -> None:
        source = self.source
        if refused is not None and isinstance(source, SharedSource):
            token = await source.after_refusal(refused)
        else:
            token = await source.fetch()
        remember(token.value)
        if self.token is not None and self.token.value == token.value:
            self.token = token  # the same token with its lifetime told again (a shared source's answer)
            return
        if self.token is not None:
            self.retired = [*self.retired[-3:], self.token]
            self.renewals += 1
        self.token = token


SourceFactory = Callable[[AuthSettings, str], TokenSource]


def own_source(settings: AuthSettings, url: str) -> TokenSource:
    """The source these settings name: the token command, or the server's authorization server."""
    if settings.token_command is not None:
        return CommandSource(settings.token_command)
    assert settings.client_id is not None and settings.client_secret_env is not None
    return ClientCredentialsSource(url, settings.client_id, settings.client_secret_env, settings.scope)


_KEEPERS: dict[tuple[AuthSettings, str], TokenKeeper] = {}
_source_for: SourceFactory = own_source


def keeper_for(settings: AuthSettings, url: str) -> TokenKeeper:
    """The process's keeper for this server and these settings (made on first use).

    A token command is not told which server it is for, so its token serves every server of the run (each one a run
    launches, on whatever port); a client-credentials token is for one resource (RFC 8707), so one keeper per URL.
    """
    key = (settings, url if settings.token_command is None else "")
    if key not in _KEEPERS:
        _KEEPERS[key] = TokenKeeper(_source_for(settings, url))
    return _KEEPERS[key]


def take_sources_from(factory: SourceFactory) -> None:
    """Make every keeper made from now on get its tokens from `factory`'s sources (a worker borrowing them)."""
    global _source_for
    _source_for = factory
