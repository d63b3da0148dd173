"""The protected-server tests' real components: the authorization server (oauth2-mock-server, installed by .ci/run
in tests/auth_server) and the protected mcp 2.x server launched by mcpfuzz (tests/servers/protected_server.py)."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from mcpfuzz.transport.auth.settings import AuthSettings
from mcpfuzz.transport.http_target import HttpTarget

ROOT = Path(__file__).resolve().parent.parent
AUTH_SERVER = ROOT / "tests" / "auth_server"
PROTECTED = ROOT / "tests" / "servers" / "protected_server.py"
START_DEADLINE = 30.0
CLIENT_SECRET_ENV = "MCPFUZZ_TEST_CLIENT_SECRET"


@dataclass(frozen=True)
class AuthorizationServer:
    """A running authorization server: its issuer URL and the file its output (each token issued) goes to."""

    url: str
    output: Path

    def issued(self) -> list[str]:
        """Every token it issued so far, oldest first."""
        lines = self.output.read_text(encoding="utf-8").splitlines()
        return [line.split(" ", 1)[1] for line in lines if line.startswith("issued ")]


def need_authorization_server() -> None:
    """Skip the test when .ci/run could not install oauth2-mock-server (no npm, no registry)."""
    if shutil.which("node") is None or not (AUTH_SERVER / "node_modules" / "oauth2-mock-server").is_dir():
        pytest.skip("oauth2-mock-server is not installed (`cd tests/auth_server && npm ci`)")


@contextlib.contextmanager
def authorization_server(tmp_path: Path, lifetime: int = 3600) -> Iterator[AuthorizationServer]:
    """oauth2-mock-server on a free port of 127.0.0.1, issuing tokens that live `lifetime` seconds."""
    need_authorization_server()
    output = tmp_path / f"authorization-server-{lifetime}.out"
    with output.open("wb") as sink:
        process = subprocess.Popen(["node", str(AUTH_SERVER / "server.mjs"), "0", str(lifetime)], cwd=AUTH_SERVER,
                                   stdout=sink, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        deadline = time.monotonic() + START_DEADLINE
        while not (ready := [line for line in output.read_text().splitlines() if line.startswith("ready ")]):
            if process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"the authorization server did not start: {output.read_text()[-2000:]}")
            time.sleep(0.1)
        yield AuthorizationServer(ready[0].split(" ", 1)[1], output)
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(5)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()


def protected_target(issuer: str, *bugs: str, auth: AuthSettings | None = None) -> HttpTarget:
    """The protected server as mcpfuzz launches it (a port of its own each start), with OAuth client credentials."""
    launch = (sys.executable, str(PROTECTED), "{port}", issuer, *(part for bug in bugs for part in ("--bug", bug)))
    settings = auth or AuthSettings(client_id="mcpfuzz-test", client_secret_env=CLIENT_SECRET_ENV, scope="mcp")
    return HttpTarget("http://127.0.0.1:{port}/mcp", launch=launch, auth=settings)
