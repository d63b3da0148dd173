"""A real redis-server for the --shared tests: on 127.0.0.1, a free port, a temp folder, no persistence."""

from __future__ import annotations

import contextlib
import shutil
import subprocess
import time
from pathlib import Path

from tests.http_servers import free_port

REDIS = shutil.which("redis-server")
START_DEADLINE = 20.0  # seconds for a redis-server to answer PING (generous: the machine is shared)


class RedisServer:
    """One redis-server process this test started (and stops by its pid), restartable on the same port."""

    def __init__(self, folder: Path, password: str | None = None) -> None:
        assert REDIS is not None
        self.folder = folder
        self.password = password
        self.port = free_port()
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        """The URL mcpfuzz is given (with the password when there is one)."""
        auth = f":{self.password}@" if self.password else ""
        return f"redis://{auth}127.0.0.1:{self.port}/0"

    def start(self) -> RedisServer:
        """Start it (empty: nothing is saved between two starts) and wait until it answers."""
        args = [str(REDIS), "--port", str(self.port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
                "--dir", str(self.folder), "--daemonize", "no", "--protected-mode", "yes"]
        if self.password:
            args += ["--requirepass", self.password]
        self.folder.mkdir(parents=True, exist_ok=True)
        log = (self.folder / "redis.log").open("ab")
        self.process = subprocess.Popen(args, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        deadline = time.monotonic() + START_DEADLINE
        while time.monotonic() < deadline:
            with contextlib.suppress(Exception):
                if self.client().ping():
                    return self
            assert self.process.poll() is None, (self.folder / "redis.log").read_text()
            time.sleep(0.05)
        raise AssertionError(f"redis-server did not answer within {START_DEADLINE}s")

    def client(self):  # noqa: ANN201 (redis.Redis; redis is imported only when the tests run)
        """A client of this server (for the test's own look at what mcpfuzz wrote)."""
        import redis

        return redis.Redis(host="127.0.0.1", port=self.port, password=self.password, socket_timeout=5)

    def stop(self) -> None:
        """Kill it by pid and wait for it to be gone (its data goes with it)."""
        if self.process is not None and self.process.poll() is None:
            self.process.kill()
            self.process.wait(timeout=30)
        self.process = None
