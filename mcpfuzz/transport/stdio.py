"""Run a server as a child process and talk to it over its stdin and stdout."""

from __future__ import annotations

import asyncio
import math
import os
from collections.abc import Mapping, Sequence
from time import perf_counter

import anyio
import anyio.abc

from mcpfuzz.jsonrpc.call_split import SPLIT
from mcpfuzz.jsonrpc.exchange import ProcessEnd
from mcpfuzz.jsonrpc.http_reply import HttpReply
from mcpfuzz.jsonrpc.transport_kind import TransportKind
from mcpfuzz.transport.base import DeliveryKind, ExitSink
from mcpfuzz.transport.errors import ConnectionClosed, ServerStartError, WriteTimeout
from mcpfuzz.transport.line_reader import LineSink
from mcpfuzz.transport.server_process import ServerProcess, spawn
from mcpfuzz.transport.stderr_tail import StderrTail

# Standbys that exit on their own this many times in a row (none taken meanwhile): the server cannot run twice at
# once (a lock, a fixed port), so restarts go back to starting a process each time.
STANDBY_DEATHS = 3


class StdioServer:
    """The server process in use, in its own process group; restartable; killed with its group on close.

    It may hold one standby: a process of the same command started ahead (`hold_standby`), sent nothing, which
    the next `start` takes instead of spawning, so a restart does not wait for a slow server's start; or which is
    borrowed for a while (`borrow_standby`, `return_borrowed`), the process in use kept aside meanwhile.
    Use as an async context manager; `start()` spawns (or takes the standby), `kill()` ends the current process.
    Lines go to `on_line(prefix, size)`, the end of the current process to `on_exit(ProcessEnd)`.
    """

    def __init__(self, argv: Sequence[str], *, on_line: LineSink, on_exit: ExitSink,
                 max_line: int = 8 * 1024 * 1024, stderr_limit: int = 64 * 1024,
                 write_timeout: float = 5.0, env: dict[str, str] | None = None,
                 cwd: str | None = None) -> None:
        self.argv = list(argv)
        self._on_line = on_line
        self._on_exit = on_exit
        self._max_line = max_line
        self._stderr_limit = stderr_limit
        self.write_timeout = write_timeout
        self._env = env
        self._cwd = cwd
        self._current: ServerProcess | None = None
        self._standby: ServerProcess | None = None
        self._aside: ServerProcess | None = None  # the process in use while a borrowed standby runs a case
        self._group: anyio.abc.TaskGroup | None = None
        self._no_stderr = StderrTail(1)
        self.starts = 0
        self.standbys = 0  # standby processes started
        self.warm_starts = 0  # starts that took a standby
        self._standby_deaths = 0  # standbys that exited on their own since one was last taken
        self.standby_problem = ""  # why no standby is held any more ("" while they are)

    async def __aenter__(self) -> StdioServer:
        self._group = anyio.create_task_group()
        await self._group.__aenter__()
        return self

    async def __aexit__(self, *exc_info: object) -> bool | None:
        with anyio.CancelScope(shield=True):
            await self.drop_standby()
            await self.kill()
            if self._aside is not None:
                await self._aside.kill()
        assert self._group is not None
        self._group.cancel_scope.cancel()
        # Our own pump tasks were cancelled; the caller's exception (if any) propagates unwrapped.
        await self._group.__aexit__(None, None, None)
        return None

    @property
    def alive(self) -> bool:
        """True while the current process runs and its exit has not been seen."""
        return self._current is not None and self._current.alive

    @property
    def pid(self) -> int | None:
        """The pid (and process group id) of the current process."""
        return self._current.pid if self._current else None

    @property
    def end(self) -> ProcessEnd | None:
        """How the current process ended, once it has."""
        return self._current.end if self._current else None

    @property
    def stderr(self) -> StderrTail:
        """The current process' stderr tail (a standby's own is kept apart until it is taken)."""
        return self._current.stderr if self._current else self._no_stderr

    @property
    def spawned_at(self) -> float | None:
        """When the current process was spawned (monotonic; a standby's start, not when it was taken)."""
        return self._current.spawned_at if self._current else None

    async def start(self) -> None:
        """A fresh process: the standby when one is held and alive, else a new one (the previous one is killed)."""
        assert self._group is not None, "use StdioServer as an async context manager"
        if self.alive:
            await self.kill()
        current = await self._take_standby()
        if current is None:
            current = ServerProcess(await spawn(self.argv, env=self._env, cwd=self._cwd), on_line=self._on_line,
                                    max_line=self._max_line, stderr_limit=self._stderr_limit)
            self._group.start_soon(current.watch, self._ended)
        else:
            self.warm_starts += 1
        self._current = current
        self.starts += 1

    # -- the standby ------------------------------------------------------------------------------

    @property
    def has_standby(self) -> bool:
        """True while a standby process runs, ready to be taken."""
        return self._standby is not None and self._standby.alive

    @property
    def standby_pid(self) -> int | None:
        """The standby's pid, while one is held."""
        return self._standby.pid if self._standby is not None else None

    @property
    def standby_spawned_at(self) -> float | None:
        """When the standby was spawned (monotonic), while one is held."""
        return self._standby.spawned_at if self._standby is not None else None

    async def hold_standby(self) -> None:
        """Start a standby unless one runs (or standbys were given up: `standby_problem`)."""
        assert self._group is not None, "use StdioServer as an async context manager"
        if self.standby_problem or self.has_standby:
            return
        try:
            process = await spawn(self.argv, env=self._env, cwd=self._cwd)
        except ServerStartError as error:
            self.standby_problem = f"a standby process could not be started ({error})"
            return
        standby = ServerProcess(process, on_line=self._on_line, max_line=self._max_line,
                                stderr_limit=self._stderr_limit, standby=True)
        self._standby = standby
        self.standbys += 1
        self._group.start_soon(standby.watch, self._ended)

    async def borrow_standby(self) -> bool:
        """The standby becomes the process in use for a while; the current one is kept aside, alive, its output
        held, until `return_borrowed`. False (nothing changed) when no standby runs or nothing is in use."""
        current = self._current
        if self._aside is not None or current is None or not current.alive:
            return False
        standby = await self._take_standby()
        if standby is None:
            return False
        current.hold_output()
        self._aside, self._current = current, standby
        self.starts += 1
        self.warm_starts += 1
        return True

    async def return_borrowed(self) -> None:
        """Kill the borrowed process; the one kept aside is in use again (dead, if it died meanwhile)."""
        aside, self._aside = self._aside, None
        if aside is None:
            return
        await self.kill()
        if aside.overflowed:
            await aside.kill()  # it wrote more than can be held while aside: what it said is lost, so it goes
        aside.take()
        self._current = aside

    async def drop_standby(self) -> None:
        """Kill the standby (with its process group), if one is held."""
        standby, self._standby = self._standby, None
        if standby is not None:
            await standby.kill()

    async def _take_standby(self) -> ServerProcess | None:
        """The standby, taken (None when none runs, or it wrote too much on its own to stand in for a fresh start)."""
        standby = self._standby
        if standby is None or not standby.alive:
            return None
        if standby.overflowed:
            self.standby_problem = "the server writes to stdout before it is asked anything"
            await self.drop_standby()
            return None
        self._standby = None
        self._standby_deaths = 0
        standby.take()
        return standby

    def _ended(self, process: ServerProcess) -> None:
        """A process' end: the current one's is the server's exit; a standby's own exit is counted."""
        if process is self._current:
            assert process.end is not None
            self._on_exit(process.end)
        elif process is self._standby:
            self._standby = None
            self._standby_deaths += 1
            if self._standby_deaths >= STANDBY_DEATHS:
                assert process.end is not None
                self.standby_problem = (f"{STANDBY_DEATHS} standby processes exited before they were used (the last: "
                                        f"{process.end.describe()}): the server cannot run twice at once")

    # -- frames -----------------------------------------------------------------------------------

    kind = TransportKind.STDIO
    # A line-based stream: answers arrive in order, so a barrier request proves earlier frames were handled.
    delivery = DeliveryKind.JOINED_STREAM
    session_id: str | None = None
    delivering: HttpReply | None = None  # no POSTs: every line comes on the one stream

    async def send(self, data: bytes, extra_headers: Mapping[str, str | None] | None = None) -> None:
        """Send one frame: the bytes and the newline that ends it on stdio."""
        await self._write(data + b"\n")

    async def send_many(self, frames: Sequence[bytes]) -> None:
        """Several frames in one write, in order: one wake-up of the server, one write deadline."""
        await self._write(b"".join(frame + b"\n" for frame in frames))

    async def _write(self, data: bytes) -> None:
        """Write bytes to the server's stdin; a server that stops reading cannot block us forever."""
        current = self._current
        if current is None or current.process.stdin is None or not current.alive:
            raise ConnectionClosed("the server is not running")
        if current.holds_output:
            current.release_held()  # a taken standby's own output: into the case now open, as on a fresh start
        stdin = current.process.stdin
        started = perf_counter() if SPLIT.on else 0.0
        try:
            writer = _asyncio_writer(stdin)
            if writer is None:
                with anyio.fail_after(self.write_timeout):
                    await stdin.send(data)
            else:
                writer.write(data)
                if writer.transport.get_write_buffer_size():
                    # The pipe is full: wait (with the deadline) until the server reads enough of it.
                    with anyio.fail_after(self.write_timeout):
                        await writer.drain()
                else:
                    await writer.drain()  # all in the pipe: does not wait, raises if the server closed its input
        except TimeoutError:
            raise WriteTimeout(
                f"the server did not read its input for {self.write_timeout:g}s") from None
        except (anyio.BrokenResourceError, anyio.ClosedResourceError, BrokenPipeError,
                ConnectionResetError) as error:
            raise ConnectionClosed(f"the server closed its input ({type(error).__name__})") from None
        if started:
            SPLIT.add("write", started)
            SPLIT.written()

    async def wait_exit(self, timeout: float = math.inf) -> bool:
        """Wait until the current process has ended; True when it did within `timeout`."""
        current = self._current
        if current is None:
            return True
        with anyio.move_on_after(timeout):
            await current.exited.wait()
        return current.exited.is_set()

    async def kill(self) -> None:
        """Kill the current process group at once and wait until its exit is recorded."""
        if self._current is not None:
            await self._current.kill()


def _asyncio_writer(stream: object) -> asyncio.StreamWriter | None:
    """The asyncio writer under anyio's stdin stream (asyncio backend), else None.

    anyio's `send` costs two cancel scopes and a turn of the event loop per write; a frame that fits
    in the pipe needs none of them, so the write deadline is only armed when the pipe is full.
    """
    writer = getattr(stream, "_stream", None)
    return writer if isinstance(writer, asyncio.StreamWriter) else None


def inherited_env(extra: dict[str, str] | None = None) -> dict[str, str] | None:
    """The server inherits our environment (the report contract), plus any `--env` values."""
    if not extra:
        return None
    return {**os.environ, **extra}
