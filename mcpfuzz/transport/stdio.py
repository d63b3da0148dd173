"""Run a server as a child process and talk to it over its stdin and stdout."""

from __future__ import annotations

import asyncio
import contextlib
import math
import os
import subprocess
from collections.abc import Mapping, Sequence

import anyio
import anyio.abc

from mcpfuzz.jsonrpc.exchange import ProcessEnd
from mcpfuzz.jsonrpc.http_reply import HttpReply
from mcpfuzz.jsonrpc.transport_kind import TransportKind
from mcpfuzz.transport import process_groups
from mcpfuzz.transport.base import ExitSink
from mcpfuzz.transport.errors import ConnectionClosed, ServerStartError, WriteTimeout
from mcpfuzz.transport.line_reader import LineSink, LineSplitter
from mcpfuzz.transport.stderr_tail import StderrTail

READ_CHUNK = 256 * 1024
# After the process exits, its last stdout lines may still be in the pipe; a grandchild that
# holds the pipe open must not keep us waiting, so the drain is bounded.
DRAIN_AFTER_EXIT = 0.5


class StdioServer:
    """One server process in its own process group; restartable; killed with its group on close.

    Use as an async context manager; `start()` spawns, `kill()` ends the current process.
    Lines go to `on_line(prefix, size)`, the end of a process to `on_exit(ProcessEnd)`.
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
        self._process: anyio.abc.Process | None = None
        self._group: anyio.abc.TaskGroup | None = None
        self._exited = anyio.Event()
        self.stderr = StderrTail(stderr_limit)
        self.starts = 0
        self.end: ProcessEnd | None = None

    async def __aenter__(self) -> StdioServer:
        self._group = anyio.create_task_group()
        await self._group.__aenter__()
        return self

    async def __aexit__(self, *exc_info: object) -> bool | None:
        with anyio.CancelScope(shield=True):
            await self.kill()
        assert self._group is not None
        self._group.cancel_scope.cancel()
        # Our own pump tasks were cancelled; the caller's exception (if any) propagates unwrapped.
        await self._group.__aexit__(None, None, None)
        return None

    @property
    def alive(self) -> bool:
        """True while the current process runs and its exit has not been seen."""
        return self._process is not None and not self._exited.is_set()

    @property
    def pid(self) -> int | None:
        """The pid (and process group id) of the current process."""
        return self._process.pid if self._process else None

    async def start(self) -> None:
        """Spawn a fresh process (the previous one must be dead or killed first)."""
        assert self._group is not None, "use StdioServer as an async context manager"
        if self.alive:
            await self.kill()
        self.stderr = StderrTail(self._stderr_limit)
        self.end = None
        self._exited = anyio.Event()
        try:
            process = await anyio.open_process(
                self.argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                start_new_session=True, env=self._env, cwd=self._cwd)
        except FileNotFoundError as error:
            raise ServerStartError(f"command not found: {self.argv[0]!r} ({error.strerror})") from None
        except PermissionError as error:
            raise ServerStartError(f"cannot execute {self.argv[0]!r}: {error.strerror}") from None
        except OSError as error:
            raise ServerStartError(f"cannot start {self.argv[0]!r}: {error}") from None
        process_groups.register(process.pid)
        self._process = process
        self.starts += 1
        self._group.start_soon(self._watch, process, self._exited)

    kind = TransportKind.STDIO
    # A line-based stream: answers arrive in order, so a barrier request proves earlier frames were handled.
    needs_barrier = True
    replies_on_request = False
    joins_writes = True
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
        process = self._process
        if process is None or process.stdin is None or not self.alive:
            raise ConnectionClosed("the server is not running")
        try:
            writer = _asyncio_writer(process.stdin)
            if writer is None:
                with anyio.fail_after(self.write_timeout):
                    await process.stdin.send(data)
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

    async def wait_exit(self, timeout: float = math.inf) -> bool:
        """Wait until the current process has ended; True when it did within `timeout`."""
        with anyio.move_on_after(timeout):
            await self._exited.wait()
        return self._exited.is_set()

    async def kill(self) -> None:
        """Kill the current process group at once and wait until its exit is recorded."""
        process = self._process
        if process is None:
            return
        process_groups.kill_group(process.pid)
        if self._exited.is_set():
            return
        # Wait on the process itself: when the run is being cancelled, the watcher task that
        # would set `_exited` may already be gone.
        with anyio.move_on_after(5):
            returncode = await process.wait()
            if not self._exited.is_set():
                self.end = ProcessEnd(returncode, self.stderr.text())
                self._exited.set()

    async def _watch(self, process: anyio.abc.Process, exited: anyio.Event) -> None:
        """Pump stdout and stderr of one process; record its end once."""
        stdout_done = anyio.Event()
        async with anyio.create_task_group() as group:
            group.start_soon(self._pump_stdout, process, stdout_done)
            group.start_soon(self._pump_stderr, process)
            returncode = await process.wait()
            with anyio.move_on_after(DRAIN_AFTER_EXIT):
                await stdout_done.wait()
            group.cancel_scope.cancel()
        # Grandchildren may still hold the pipes: the group dies with the leader.
        process_groups.kill_group(process.pid)
        self.end = ProcessEnd(returncode, self.stderr.text())
        exited.set()
        if process is self._process:
            self._on_exit(self.end)
        # Closing the process, not only its streams, closes the pipes' transports too (anyio >= 4.14.1): a process
        # that left the session (setsid) may still hold their other ends, and a transport left open outlives the
        # event loop, where asyncio's __del__ fails on it ("Exception ignored ... Event loop is closed").
        with anyio.move_on_after(DRAIN_AFTER_EXIT, shield=True):
            with contextlib.suppress(anyio.BrokenResourceError, OSError):
                await process.aclose()

    async def _pump_stdout(self, process: anyio.abc.Process, done: anyio.Event) -> None:
        splitter = LineSplitter(self._on_line, self._max_line)
        assert process.stdout is not None
        try:
            while True:
                splitter.feed(await process.stdout.receive(READ_CHUNK))
        except (anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError, OSError):
            splitter.finish()
        finally:
            done.set()

    async def _pump_stderr(self, process: anyio.abc.Process) -> None:
        assert process.stderr is not None
        try:
            while True:
                self.stderr.add(await process.stderr.receive(READ_CHUNK))
        except (anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError, OSError):
            pass


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
