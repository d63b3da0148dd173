"""One spawned server process in its own process group: its pipes pumped, its stderr kept, its end recorded."""

from __future__ import annotations

import contextlib
import os
import subprocess
import time
from collections.abc import Callable, Sequence
from time import perf_counter

import anyio
import anyio.abc

from mcpfuzz.jsonrpc.call_split import SPLIT
from mcpfuzz.jsonrpc.exchange import ProcessEnd
from mcpfuzz.transport import process_groups
from mcpfuzz.transport.errors import ServerStartError
from mcpfuzz.transport.line_reader import LineSink, LineSplitter
from mcpfuzz.transport.stderr_tail import StderrTail

READ_CHUNK = 256 * 1024
# After the process exits, its last stdout lines may still be in the pipe; a grandchild that
# holds the pipe open must not keep us waiting, so the drain is bounded.
DRAIN_AFTER_EXIT = 0.5
# What a standby may write to stdout before anyone asks it anything (kept for its first case); past this it is
# a server that talks on its own, and a standby cannot stand in for a fresh start of it.
HELD_LIMIT = 1024 * 1024
CONTEXT_LINES = 80  # stderr lines kept with a process's end to tell whose words ended it (20 are shown)


async def spawn(argv: Sequence[str], *, env: dict[str, str] | None, cwd: str | None) -> anyio.abc.Process:
    """Start `argv` with piped stdio in a new process group (registered for the atexit kill)."""
    try:
        process = await anyio.open_process(
            list(argv), stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            start_new_session=True, env=env, cwd=cwd)
    except FileNotFoundError as error:
        # The same error names a missing working directory; say which of the two is missing.
        if cwd is not None and not os.path.isdir(cwd):
            raise ServerStartError(f"the working directory {cwd!r} does not exist (the server's cwd)") from None
        raise ServerStartError(f"command not found: {argv[0]!r} ({error.strerror})") from None
    except PermissionError as error:
        raise ServerStartError(f"cannot execute {argv[0]!r}: {error.strerror}") from None
    except OSError as error:
        raise ServerStartError(f"cannot start {argv[0]!r}: {error}") from None
    process_groups.register(process.pid)
    return process


class ServerProcess:
    """A spawned server: its stdout goes to `on_line` (a standby's, or a process set aside, is held until its first
    write after `take`), its stderr to a tail of its own, and its end is recorded once (`exited`, `end`)."""

    def __init__(self, process: anyio.abc.Process, *, on_line: LineSink, max_line: int, stderr_limit: int,
                 standby: bool = False) -> None:
        self.process = process
        self.spawned_at = time.monotonic()
        self.stderr = StderrTail(stderr_limit)
        self.exited = anyio.Event()
        self.end: ProcessEnd | None = None
        self._splitter = LineSplitter(on_line, max_line)
        # A standby's stdout, read while nobody asked it anything: handed on at its first write once taken, so a
        # line it writes on its own lands in its first case, as it would on a process started for that case.
        self._held: bytearray | None = bytearray() if standby else None
        self._live = not standby  # its output may be handed on (it is the process in use)
        self.overflowed = False  # held output past HELD_LIMIT: it talks on its own, and what it said is cut

    @property
    def pid(self) -> int:
        """The pid (and process group id)."""
        return self.process.pid

    @property
    def alive(self) -> bool:
        """True until its exit has been seen."""
        return not self.exited.is_set()

    def take(self) -> None:
        """The process becomes the server in use: what it wrote while held goes out at its first write."""
        self._live = True

    def hold_output(self) -> None:
        """The process is set aside (another is in use for a while): what it writes is held until taken again."""
        self._live = False
        if self._held is None:
            self._held = bytearray()

    def release_held(self) -> None:
        """Hand on what the process wrote before it was written to (called just before each write)."""
        held, self._held = self._held, None
        if held:
            self._splitter.feed(bytes(held))

    @property
    def holds_output(self) -> bool:
        """True while output read from the process waits for its first write."""
        return self._held is not None

    async def watch(self, on_end: Callable[[ServerProcess], None]) -> None:
        """Pump stdout and stderr until the process ends; record its end once, then tell `on_end`."""
        process = self.process
        stdout_done = anyio.Event()
        async with anyio.create_task_group() as group:
            group.start_soon(self._pump_stdout, stdout_done)
            group.start_soon(self._pump_stderr)
            returncode = await process.wait()
            with anyio.move_on_after(DRAIN_AFTER_EXIT):
                await stdout_done.wait()
            group.cancel_scope.cancel()
        # Grandchildren may still hold the pipes: the group dies with the leader.
        process_groups.kill_group(process.pid)
        self.record_end(returncode)
        on_end(self)
        # Closing the process, not only its streams, closes the pipes' transports too (anyio >= 4.14.1): a process
        # that left the session (setsid) may still hold their other ends, and a transport left open outlives the
        # event loop, where asyncio's __del__ fails on it ("Exception ignored ... Event loop is closed").
        with anyio.move_on_after(DRAIN_AFTER_EXIT, shield=True):
            with contextlib.suppress(anyio.BrokenResourceError, OSError):
                await process.aclose()

    def record_end(self, returncode: int | None) -> None:
        """The process ended with `returncode` (recorded once)."""
        if not self.exited.is_set():
            self.end = ProcessEnd(returncode, self.stderr.text(), self.stderr.text(CONTEXT_LINES))
            self.exited.set()

    async def kill(self) -> None:
        """SIGKILL the process group and wait until the end is recorded."""
        process_groups.kill_group(self.process.pid)
        if self.exited.is_set():
            return
        # Wait on the process itself: when the run is being cancelled, the watcher task that would record the end
        # may already be gone.
        with anyio.move_on_after(5):
            self.record_end(await self.process.wait())

    async def _pump_stdout(self, done: anyio.Event) -> None:
        stdout = self.process.stdout
        assert stdout is not None
        try:
            while True:
                chunk = await stdout.receive(READ_CHUNK)
                held = self._held
                if held is None and SPLIT.on:
                    SPLIT.read()
                    started = perf_counter()
                    self._splitter.feed(chunk)
                    SPLIT.add("parse", started)
                    continue
                if held is None:
                    self._splitter.feed(chunk)
                    continue
                held += chunk
                if len(held) > HELD_LIMIT:
                    if self._live:
                        self.release_held()  # taken, and its first write not due yet: nothing is lost by now
                    else:
                        self.overflowed = True
                        del held[HELD_LIMIT:]
        except (anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError, OSError):
            if self._live:
                self.release_held()
                self._splitter.finish()
        finally:
            done.set()

    async def _pump_stderr(self) -> None:
        stderr = self.process.stderr
        assert stderr is not None
        try:
            while True:
                self.stderr.add(await stderr.receive(READ_CHUNK))
        except (anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError, OSError):
            pass
