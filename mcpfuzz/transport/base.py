"""The contract between the session and a server connection, whatever carries the frames."""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from enum import Enum, auto
from typing import TYPE_CHECKING, Protocol, TypeVar

from mcpfuzz.jsonrpc.transport_kind import TransportKind
from mcpfuzz.transport.line_reader import LineSink
from mcpfuzz.transport.stderr_tail import StderrTail

if TYPE_CHECKING:  # annotations only: the command line's options import this module, and a frame's model is heavy
    from mcpfuzz.jsonrpc.exchange import ProcessEnd
    from mcpfuzz.jsonrpc.http_reply import HttpReply

__all__ = ["AUTO", "DEFAULT_STARTUP_TIMEOUT", "TRANSPORT_CHOICES", "ConnectionCallbacks", "ConnectionOptions",
           "ExitSink", "HoldsStandby", "LineSink", "ServerConnection", "StderrTail", "TransportKind",
           "transport_choice"]

ExitSink = Callable[["ProcessEnd"], None]
Connection = TypeVar("Connection", bound="ServerConnection")

# How long a process mcpfuzz started may take to give its first answer (--startup-timeout), whatever --timeout is.
DEFAULT_STARTUP_TIMEOUT = 30.0

# What a user may ask of an HTTP target with --transport (and what a transcript records): a kind, or detection.
AUTO = "auto"
TRANSPORT_CHOICES = (AUTO, TransportKind.STREAMABLE_HTTP.value, TransportKind.LEGACY_SSE.value)


def transport_choice(text: str) -> TransportKind | None:
    """A --transport value as a kind; None for "auto" (detect from the URL's answers)."""
    return None if text == AUTO else TransportKind(text)


class DeliveryKind(Enum):
    """How a transport brings the answers to the frames sent, which says what settles a frame."""

    # One ordered stream of answers, frames written to one pipe (stdio, in-memory): a frame and the barrier request
    # after it go out in one write, and the barrier's answer settles every frame before it.
    JOINED_STREAM = auto()
    # One ordered stream of answers, each frame a request of its own (legacy HTTP+SSE): the barrier goes out after
    # the frame, and its answer on the stream settles the frame.
    SHARED_STREAM = auto()
    # A response per request (streamable HTTP: JSON, or an SSE stream of its own): the end of a frame's own response
    # settles it, so no barrier is needed and several frames may be in flight at once.
    RESPONSE_PER_REQUEST = auto()


@dataclass(frozen=True)
class ConnectionCallbacks:
    """How a connection tells its owner what happened; all are called on the event loop, none may block."""

    on_line: LineSink  # one message from the server: its bytes (capped) and its full size
    on_exit: ExitSink  # the server process ended (or, without a process, became unreachable)
    on_change: Callable[[], None]  # something else a waiter may care about (an HTTP response ended)


@dataclass(frozen=True)
class ConnectionOptions:
    """Limits every connection honours."""

    timeout: float = 5.0  # the start of a session (HTTP: its first response)
    startup_timeout: float = DEFAULT_STARTUP_TIMEOUT  # a process mcpfuzz started: until it answers (--launch: its URL)
    call_timeout: float = 30.0  # HTTP: the longest a request's response may take (a slow tool's answer)
    max_line: int = 8 * 1024 * 1024
    write_timeout: float = 5.0  # stdio: a server that stops reading its input
    env: dict[str, str] | None = None  # the environment of a process mcpfuzz starts (None: ours)


class ServerConnection(Protocol):
    """A server the session can start, write frames to, hear from (through its callbacks) and kill.

    Enter it as an async context manager first; leaving it kills whatever it started.
    """

    @property
    def kind(self) -> TransportKind:
        """What carries the frames."""

    @property
    def delivery(self) -> DeliveryKind:
        """How answers come back, which says what settles a frame."""

    @property
    def delivering(self) -> HttpReply | None:
        """While a message is handed to `on_line`: the POST whose response carried it (None: a stream or a pipe)."""

    @property
    def alive(self) -> bool:
        """True while the server can be talked to."""

    @property
    def pid(self) -> int | None:
        """The server process' pid when mcpfuzz started one (its resources can then be sampled)."""

    @property
    def starts(self) -> int:
        """How many times `start` succeeded."""

    @property
    def end(self) -> ProcessEnd | None:
        """How the current server ended, once it has."""

    @property
    def stderr(self) -> StderrTail:
        """The tail of the server's log (empty when mcpfuzz did not start a process)."""

    @property
    def session_id(self) -> str | None:
        """The HTTP session the server handed out (Mcp-Session-Id), where there is one."""

    async def __aenter__(self: Connection) -> Connection: ...

    async def __aexit__(self, *exc_info: object) -> bool | None: ...

    async def start(self) -> None:
        """A fresh server (process, session or stream); ServerStartError when it cannot be had."""

    async def kill(self) -> None:
        """End the current server at once; its pending answers are dropped."""

    async def send(self, data: bytes, extra_headers: Mapping[str, str | None] | None = None) -> HttpReply | None:
        """Send one frame; over HTTP, what its request got (filled in as the response arrives).

        `extra_headers` (HTTP only) override or, with None, remove a header. TransportError on failure.
        Over HTTP, several tasks may await `send` at once: each frame is a POST on a keep-alive connection of
        its own (from the client's pool), with its own HttpReply, all in the current session; only frames
        sent one after the other reach the server in that order.
        """

    async def send_many(self, frames: Sequence[bytes]) -> None:
        """Send frames in order, in one write where the transport has writes (DeliveryKind.JOINED_STREAM)."""

    async def wait_exit(self, timeout: float = math.inf) -> bool:
        """Wait until the current server has ended; True when it did within `timeout`."""


class HoldsStandby(Protocol):
    """A connection that can keep one more server process started ahead (a standby), sent nothing of ours, which its
    next `start` takes instead of starting one: a restart then costs no process start."""

    standbys: int  # standby processes started
    warm_starts: int  # starts that took a standby
    standby_problem: str  # why standbys were given up ("" while they are kept)

    @property
    def has_standby(self) -> bool:
        """True while a standby process runs, ready to be taken."""

    @property
    def standby_pid(self) -> int | None:
        """The standby's pid, while one is held."""

    @property
    def standby_spawned_at(self) -> float | None:
        """When the standby was spawned (monotonic), while one is held."""

    @property
    def spawned_at(self) -> float | None:
        """When the current process was spawned (monotonic): a taken standby's start, not when it was taken."""

    async def hold_standby(self) -> None:
        """Start a standby unless one runs (or standbys were given up)."""

    async def borrow_standby(self) -> bool:
        """The standby becomes the process in use for a while; the current one is kept aside, alive, its output
        held, until `return_borrowed`. False (nothing changed) when no standby runs or nothing is in use."""

    async def return_borrowed(self) -> None:
        """Kill the borrowed process; the one kept aside is in use again (dead, if it died meanwhile)."""

    async def drop_standby(self) -> None:
        """Kill the standby (with its process group), if one is held."""
