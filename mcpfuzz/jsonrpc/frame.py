"""A test case: the exact bytes to send and the expected outcome."""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from functools import cached_property
from typing import Any

from mcpfuzz.jsonrpc.expectation import Expectation
from mcpfuzz.jsonrpc.versions import Era


class Posting(str, Enum):
    """How a case of several lines travels over streamable HTTP (stdio always writes them in one go)."""

    ONE = "one"  # the whole frame is one POST body
    IN_ORDER = "in-order"  # each line its own POST, sent once the previous one's response headers are in
    AT_ONCE = "at-once"  # each line its own POST, all started before any response is waited for


@dataclass(frozen=True)
class Case:
    """One frame sent on the wire, by a stable id, with what a correct server answers.

    `data` is the frame without its line terminator (stdio adds the newline, HTTP sends it as
    the body). `era` is set when the frame belongs to one era whatever was negotiated (the
    legacy handshake cases). `setup` frames go first with no judgement (e.g. `initialize` for a double
    initialize). `history` lists frames sent
    earlier on the same process that a reproduction needs (a stateful sequence); they are not
    sent again. `fresh` asks for a new server process with no handshake (lifecycle cases). `patient`: a valid
    request waited for without a barrier; `slow_ok`: a call of a target, which may take long by its nature
    (once the server shows it is alive, it gets --call-timeout; the handshake and lists keep --timeout). `http_headers`
    change the HTTP request that carries the frame (a value of None removes that header); stdio ignores them.
    `posts`: how a frame of several lines is POSTed over streamable HTTP.
    `shared_ok`: a call its maker knows has no effects (a read-only tool), so it may share a pipelined window.
    """

    id: str
    family: str
    title: str
    data: bytes
    expect: Expectation
    setup: tuple[bytes, ...] = ()
    fresh: bool = False
    patient: bool = False
    slow_ok: bool = False
    era: Era | None = None
    history: tuple[bytes, ...] = ()
    http_headers: tuple[tuple[str, str | None], ...] = ()
    posts: Posting = Posting.ONE
    shared_ok: bool = False

    @cached_property
    def pipelinable(self) -> bool:
        """True when the case may share a pipelined window: answered by id alone, harmless to the stream."""
        from mcpfuzz.jsonrpc.pipelining import isolation_reason

        return isolation_reason(self) is None

    @cached_property
    def shares_posts(self) -> bool:
        """True when the case may be one of several POSTs in flight at once (streamable HTTP: answers told by POST)."""
        from mcpfuzz.jsonrpc.pipelining import post_isolation_reason

        return post_isolation_reason(self) is None

    @cached_property
    def answered_then(self) -> tuple[bytes, ...]:
        """Frames a client sends once this case's request got a result, before any other request: after `initialize`,
        `notifications/initialized` (the SDK clients' order; no barrier goes between them)."""
        from mcpfuzz.jsonrpc.handshake_order import answered_then

        return answered_then(self.data)

    @cached_property
    def progress_token(self) -> Any:
        """The `progressToken` the frame's request carries (its progress notifications are its own), or None."""
        from mcpfuzz.jsonrpc.pipelining import progress_token

        return progress_token(self)

    @property
    def target(self) -> str:
        """The target name used in reports and corpus file names."""
        return f"{self.family}/{self.id}"
