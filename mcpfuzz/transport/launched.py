"""A server process mcpfuzz starts itself for an HTTP URL (`--launch`): started, awaited, watched, killed."""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from urllib.parse import urlsplit

import anyio

from mcpfuzz.transport.base import DEFAULT_STARTUP_TIMEOUT, ExitSink
from mcpfuzz.transport.errors import ServerStartError
from mcpfuzz.transport.stderr_tail import StderrTail
from mcpfuzz.transport.stdio import StdioServer

START_POLL = 0.05


def host_port(url: str) -> tuple[str, int]:
    """The host and port a URL connects to."""
    parts = urlsplit(url)
    port = parts.port or (443 if parts.scheme == "https" else 80)
    return parts.hostname or "127.0.0.1", port


async def port_open(host: str, port: int) -> bool:
    """True when a TCP connection to host:port succeeds at once."""
    try:
        stream = await anyio.connect_tcp(host, port)
    except OSError:
        return False
    await stream.aclose()
    return True


class LaunchedServer:
    """The process behind `--launch CMD`: its output is logs, its liveness is the URL's."""

    def __init__(self, argv: Sequence[str], url: str, *, on_exit: ExitSink, env: dict[str, str] | None,
                 start_timeout: float = DEFAULT_STARTUP_TIMEOUT) -> None:
        self.url = url
        self.start_timeout = start_timeout
        self.process = StdioServer(argv, on_line=lambda line, size: None, on_exit=on_exit, env=env)

    async def __aenter__(self) -> LaunchedServer:
        await self.process.__aenter__()
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.process.__aexit__(*exc_info)

    @property
    def alive(self) -> bool:
        """True while the process runs."""
        return self.process.alive

    @property
    def stderr(self) -> StderrTail:
        """The process' stderr tail (its logs)."""
        return self.process.stderr

    async def start(self) -> None:
        """Start the process and wait until its port accepts connections."""
        await self.process.start()
        host, port = host_port(self.url)
        started = time.monotonic()
        while not await port_open(host, port):
            if not self.process.alive:
                await self.process.wait_exit(1.0)
                tail = self.process.stderr.text(10)
                raise ServerStartError(f"the --launch command exited before {self.url} answered"
                                       + (f"; its stderr:\n{tail}" if tail else ""))
            if time.monotonic() - started > self.start_timeout:
                await self.process.kill()
                raise ServerStartError(f"{self.url} did not accept connections within {self.start_timeout:g}s "
                                       "of starting the --launch command (raise --startup-timeout for a slow starter)")
            await anyio.sleep(START_POLL)

    async def kill(self) -> None:
        """Kill the process group."""
        await self.process.kill()

    async def wait_exit(self, timeout: float = math.inf) -> bool:
        """Wait for the process to end."""
        return await self.process.wait_exit(timeout)

