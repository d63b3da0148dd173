"""An in-process server built from a Python handler: a session runs on it in milliseconds, with no process."""

from __future__ import annotations

import math
import signal
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, Literal

import anyio
import anyio.abc
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream

from mcpfuzz.jsonrpc.exchange import ProcessEnd
from mcpfuzz.jsonrpc.http_reply import HttpReply
from mcpfuzz.jsonrpc.transport_kind import TransportKind
from mcpfuzz.transport.base import ConnectionCallbacks, ConnectionOptions, DeliveryKind
from mcpfuzz.transport.errors import ConnectionClosed
from mcpfuzz.transport.line_reader import LineSplitter
from mcpfuzz.transport.stderr_tail import StderrTail
from mcpfuzz.transport.target import Redaction, ServerKind

STDERR_LIMIT = 64 * 1024


@dataclass(frozen=True)
class Reply:
    """What the server does with one frame: write lines back, log, and perhaps exit."""

    lines: Sequence[bytes] = ()  # each gets its newline (a line may hold several, or none: then it joins the next)
    stderr: str = ""
    exit: int | None = None  # exit with this status once the lines are out (negative: killed by that signal)


# Called with each frame the server reads (the bytes, without the newline). None (or no lines) is silence.
Handler = Callable[[bytes], "Reply | bytes | Sequence[bytes] | None"]


@dataclass(frozen=True)
class MemoryTarget:
    """A server that is a Python function: every start is a fresh "process" over the same handler."""

    handler: Handler
    label: str = "memory"
    kind: ClassVar[Literal[ServerKind.MEMORY]] = ServerKind.MEMORY

    @property
    def secrets(self) -> tuple[str, ...]:
        """None: nothing of it leaves the process."""
        return ()

    def to_json(self, redaction: Redaction) -> dict[str, Any]:
        """`{"memory": label}`: a handler cannot be written down, so such a transcript names no server to replay on."""
        return {"memory": redaction.text(self.label)}


@dataclass(frozen=True)
class _Exit:
    """The end of the process, queued behind the lines written before it."""

    returncode: int


def as_reply(answer: Reply | bytes | Sequence[bytes] | None) -> Reply:
    """What a handler returned, as a Reply."""
    if answer is None:
        return Reply()
    if isinstance(answer, Reply):
        return answer
    if isinstance(answer, bytes):
        return Reply((answer,))
    return Reply(tuple(answer))


class MemoryServer:
    """A ServerConnection over a handler: frames are read in order, output arrives as a pipe's would (later)."""

    kind = TransportKind.MEMORY
    # One ordered stream of answers, as on stdio: a barrier settles the frames before it.
    delivery = DeliveryKind.JOINED_STREAM
    session_id: str | None = None
    delivering: HttpReply | None = None  # no POSTs: every line comes on the one stream
    pid: int | None = None  # no process whose resources could be sampled

    def __init__(self, target: MemoryTarget, callbacks: ConnectionCallbacks, options: ConnectionOptions) -> None:
        self._handler = target.handler
        self._on_line = callbacks.on_line
        self._on_exit = callbacks.on_exit
        self._max_line = options.max_line
        self.stderr = StderrTail(STDERR_LIMIT)
        self.starts = 0
        self.end: ProcessEnd | None = None
        self._group: anyio.abc.TaskGroup | None = None
        self._output: MemoryObjectSendStream[bytes | _Exit] | None = None
        self._pump_scope: anyio.CancelScope | None = None
        self._exiting = False  # the handler asked to exit: frames after that one are never read
        self._exited = anyio.Event()
        self._exited.set()

    async def __aenter__(self) -> MemoryServer:
        self._group = anyio.create_task_group()
        await self._group.__aenter__()
        return self

    async def __aexit__(self, *exc_info: object) -> bool | None:
        await self.kill()
        assert self._group is not None
        self._group.cancel_scope.cancel()
        await self._group.__aexit__(None, None, None)
        return None

    @property
    def alive(self) -> bool:
        """True from `start` until the handler's exit has been delivered or the server was killed."""
        return not self._exited.is_set()

    async def start(self) -> None:
        """A fresh "process": new output stream, empty stderr, the handler from its first frame again."""
        assert self._group is not None, "use MemoryServer as an async context manager"
        if self.alive:
            await self.kill()
        self.stderr = StderrTail(STDERR_LIMIT)
        self.end, self._exiting = None, False
        self._exited = anyio.Event()
        send, receive = anyio.create_memory_object_stream[bytes | _Exit](math.inf)
        self._output = send
        scope = self._pump_scope = anyio.CancelScope()
        self._group.start_soon(self._pump, receive, scope, self._exited)
        self.starts += 1

    async def kill(self) -> None:
        """End the current "process" as SIGKILL would: output not yet delivered is lost."""
        if not self.alive:
            return
        assert self._pump_scope is not None
        self._pump_scope.cancel()
        self._finish(-signal.SIGKILL, self._exited)

    async def send(self, data: bytes, extra_headers: Mapping[str, str | None] | None = None) -> None:
        """The handler reads one frame; what it answers is delivered by the pump."""
        await self.send_many((data,))

    async def send_many(self, frames: Sequence[bytes]) -> None:
        """The handler reads the frames in order (all at once, as from one write)."""
        if not self.alive or self._output is None:
            raise ConnectionClosed("the server is not running")
        for frame in frames:
            if self._exiting:
                return  # written into the pipe of a process on its way out: nobody reads it
            reply = as_reply(self._handler(frame))
            if reply.stderr:
                self.stderr.add(reply.stderr.encode())
            for line in reply.lines:
                self._output.send_nowait(line + b"\n")
            if reply.exit is not None:
                self._exiting = True
                self._output.send_nowait(_Exit(reply.exit))

    async def wait_exit(self, timeout: float = math.inf) -> bool:
        """Wait until the current "process" has ended; True when it did within `timeout`."""
        with anyio.move_on_after(timeout):
            await self._exited.wait()
        return self._exited.is_set()

    async def _pump(self, output: MemoryObjectReceiveStream[bytes | _Exit], scope: anyio.CancelScope,
                    exited: anyio.Event) -> None:
        """Deliver one process' output in order, each item on a later turn of the loop, as a pipe would."""
        splitter = LineSplitter(self._on_line, self._max_line)
        with scope, output:
            async for item in output:
                if isinstance(item, _Exit):
                    splitter.finish()
                    self._finish(item.returncode, exited)
                    return
                splitter.feed(item)

    def _finish(self, returncode: int, exited: anyio.Event) -> None:
        """Record the end of the process `exited` belongs to, once."""
        if exited.is_set():
            return
        end = ProcessEnd(returncode, self.stderr.text())
        exited.set()
        if exited is self._exited:
            self.end = end
            self._on_exit(end)
