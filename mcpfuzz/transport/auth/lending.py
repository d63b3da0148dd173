"""`--workers`: the parent process keeps the tokens and lends them to its worker processes, one pipe each.

N workers then renew once, not N times: the parent's keeper for a server (the keeper one process uses) is renewed
when it is due or when a worker says a server refused it, and every worker takes the token it holds. A token travels
only over the pipe (a socket pair, in memory), never through a file. A worker whose pipe breaks (the parent gone, no
answer in time) gets its own tokens from then on, and says so once.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from multiprocessing.connection import Connection, wait

import anyio
import anyio.to_thread

from mcpfuzz.transport.auth.errors import AuthError
from mcpfuzz.transport.auth.keeper import TokenSource, keeper_for, own_source, take_sources_from
from mcpfuzz.transport.auth.settings import AuthSettings
from mcpfuzz.transport.auth.token import Token

POLL = 0.5  # seconds between two looks at whether the lender should stop
# How long a worker waits for the parent's answer: far above what a token source may take (a command gets 60 s, each
# discovery or token request 30 s), since the parent may be renewing for another worker first.
ANSWER_WAIT = 300.0
STOP_WAIT = 5.0


@dataclass(frozen=True)
class Ask:
    """A worker's question: the token for this server and these settings (after `refused` was refused, if given)."""

    settings: AuthSettings
    url: str
    refused: str | None = field(default=None, repr=False)


@dataclass(frozen=True)
class Loan:
    """The parent's answer: its current token and the seconds it has left, or why it has none (`error`)."""

    value: str = field(default="", repr=False)
    left: float | None = None
    lifetime: float | None = None
    error: str | None = None

    def token(self) -> Token:
        """The token as the worker keeps it (its end measured on the worker's own clock)."""
        expires_at = time.monotonic() + self.left if self.left is not None else None
        return Token(self.value, expires_at, self.lifetime if expires_at is not None else None)


class TokenLender:
    """The parent's side: a thread that answers the workers' asks from the parent's keepers, one ask at a time (so a
    renewal one worker caused is what the next worker gets)."""

    def __init__(self) -> None:
        self._connections: list[Connection] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._serve, daemon=True, name="mcpfuzz-token-lender")

    def channel(self) -> Connection:
        """A new worker's end of a pipe (give it to the worker's process, then close it here)."""
        parent_end, worker_end = multiprocessing.Pipe()
        self._connections.append(parent_end)
        return worker_end

    def start(self) -> None:
        """Answer asks until `close`."""
        self._thread.start()

    def close(self) -> None:
        """Stop answering; a worker still asking then gets its own tokens."""
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(STOP_WAIT)
        elif self._thread.ident is None:  # never started: nobody else closes the parent's ends
            for connection in self._connections:
                connection.close()

    def _serve(self) -> None:
        try:
            while self._connections and not self._stop.is_set():
                for connection in wait(self._connections, timeout=POLL):
                    assert isinstance(connection, Connection)
                    self._answer(connection)
        finally:
            for connection in self._connections:
                connection.close()

    def _answer(self, connection: Connection) -> None:
        try:
            ask = connection.recv()
            connection.send(anyio.run(_lend, ask))
        except Exception:  # noqa: BLE001 (a worker gone, or a defect here: that worker gets its own tokens)
            self._connections.remove(connection)
            connection.close()


async def _lend(ask: Ask) -> Loan:
    """The parent's keeper's token for the worker's server (renewed if due, or if it is the one refused)."""
    keeper = keeper_for(ask.settings, ask.url)
    try:
        value = await (keeper.rejected(ask.refused) if ask.refused is not None else keeper.current())
    except AuthError as error:
        return Loan(error=str(error))
    token = keeper.token
    if token is None or token.expires_at is None or token.value != value:
        return Loan(value)
    return Loan(value, token.expires_at - time.monotonic(), token.lifetime)


class ParentChannel:
    """A worker's end of its pipe to the parent: one ask at a time; once it broke, never used again."""

    def __init__(self, connection: Connection, notice: Callable[[str], None], answer_wait: float = ANSWER_WAIT) -> None:
        self.connection = connection
        self.notice = notice
        self.answer_wait = answer_wait
        self.broken = False
        self._lock = threading.Lock()

    def ask(self, ask: Ask) -> Loan | None:
        """The parent's answer (blocking), or None once the pipe is broken."""
        with self._lock:
            if self.broken:
                return None
            try:
                self.connection.send(ask)
                if not self.connection.poll(self.answer_wait):
                    raise TimeoutError(f"no answer within {self.answer_wait:g}s")
                loan = self.connection.recv()
            except (OSError, EOFError) as error:
                reason = str(error) if isinstance(error, TimeoutError) else f"its pipe closed: {type(error).__name__}"
                self.broken = True
                with contextlib.suppress(OSError):
                    self.connection.close()
            else:
                return loan if isinstance(loan, Loan) else None
        self.notice(f"the parent process stopped lending auth tokens ({reason}); this worker gets its own from now on")
        return None


class BorrowedSource:
    """A worker's token source: the parent's token, or this worker's own source once the parent cannot be asked."""

    def __init__(self, channel: ParentChannel, settings: AuthSettings, url: str) -> None:
        self.channel = channel
        self.ask = Ask(settings, url)
        self.own = own_source(settings, url)

    @property
    def origin(self) -> TokenSource:
        """The source this worker falls back on."""
        return self.own

    async def fetch(self) -> Token:
        """The parent's current token (renewed by the parent if due)."""
        return await self._borrow(self.ask)

    async def after_refusal(self, refused: str) -> Token:
        """The parent's token after a server refused `refused` (the parent renews it unless it already did)."""
        return await self._borrow(Ask(self.ask.settings, self.ask.url, refused))

    async def _borrow(self, ask: Ask) -> Token:
        # Abandoned on cancellation: the thread still reads the answer, so the pipe stays in step.
        loan = await anyio.to_thread.run_sync(self.channel.ask, ask, abandon_on_cancel=True)
        if loan is None:
            return await self.own.fetch()
        if loan.error is not None:
            raise AuthError(loan.error)
        return loan.token()


def borrow_tokens(connection: Connection, notice: Callable[[str], None]) -> None:
    """Make this (worker) process borrow every token from the parent over `connection`; `notice` tells of a break."""
    channel = ParentChannel(connection, notice)
    take_sources_from(lambda settings, url: BorrowedSource(channel, settings, url))
