"""Start and stop the HTTP test servers (tests/servers/http_server.py and the SDK ones) from pytest.

``start_http_server(*args)`` and ``start_sdk_server(name)`` are context managers yielding the base URL;
``run_http_server`` / ``run_sdk_server`` yield a ``RunningServer`` with the pid as well (for memory
checks). Every server listens on 127.0.0.1 in its own process group, which is sent SIGTERM, then
SIGKILL, on exit. stderr goes to a file (a pipe nobody reads would block a chatty server), and its tail
is in the error when a server does not come up.
"""

from __future__ import annotations

import ast
import contextlib
import importlib.util
import os
import re
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
HTTP_SERVER = ROOT / "tests" / "servers" / "http_server.py"


def sibling_imports(script: Path) -> tuple[str, ...]:
    """The files of `script`'s own folder it imports, directly or through each other (a private copy needs them
    beside it), read from the source so a new import can never be left out of the copy."""
    found: list[str] = []
    pending = [script]
    while pending:
        tree = ast.parse(pending.pop().read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            names = [node.module] if isinstance(node, ast.ImportFrom) and node.module and not node.level else \
                [alias.name for alias in node.names] if isinstance(node, ast.Import) else []
            for name in names:
                sibling = script.parent / f"{name}.py"
                if sibling.is_file() and sibling.name not in found and sibling != script:
                    found.append(sibling.name)
                    pending.append(sibling)
    return tuple(found)


# The modules the HTTP test server imports from its own folder.
HTTP_SERVER_IMPORTS = sibling_imports(HTTP_SERVER)
SDK_SERVERS = ROOT / "tests" / "sdk_servers"
READY_LINE = re.compile(rb"^ready (http://127\.0\.0\.1:[0-9]+/\S*)$", re.MULTILINE)
STOP_GRACE = 5.0
# name -> (script, path served); sdk1* run on mcp 1.x, sdk2* on mcp 2.x.
SDK_SCRIPTS = {
    "sdk1": ("sdk1_http_server.py", "/mcp"),
    "sdk2": ("sdk2_http_server.py", "/mcp"),
    "sdk1-sse": ("sdk1_sse_server.py", "/sse"),
    "sdk1-slow": ("sdk1_slow_server.py", "/mcp"),
    "sdk2-slow": ("sdk2_slow_server.py", "/mcp"),
}


@dataclass(frozen=True)
class RunningServer:
    """A started server: its base URL, its process (group leader) and its stderr file."""

    url: str
    pid: int
    stderr_path: Path

    def stderr_tail(self, lines: int = 30) -> str:
        """The last lines the server wrote to stderr."""
        return stderr_tail(self.stderr_path, lines)


def stderr_tail(path: Path, lines: int = 30) -> str:
    """The last ``lines`` lines of a stderr file."""
    try:
        text = path.read_text(errors="replace")
    except OSError:
        return ""
    return "\n".join(text.splitlines()[-lines:])


def free_port() -> int:
    """A port nobody listens on right now (bind 0, read it, close; a small race we accept)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def port_open(port: int) -> bool:
    """Whether 127.0.0.1:port accepts a TCP connection."""
    with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), timeout=0.5):
        return True
    return False


def stop_group(process: subprocess.Popen[bytes]) -> None:
    """SIGTERM the server's process group, then SIGKILL whatever is left after a grace period."""
    for sig, wait in ((signal.SIGTERM, STOP_GRACE), (signal.SIGKILL, STOP_GRACE)):
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, sig)
        try:
            process.wait(timeout=wait)
            break
        except subprocess.TimeoutExpired:
            continue
    # Children that outlived their leader are still in the group: make sure they go too.
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGKILL)


@contextlib.contextmanager
def launch(command: Sequence[str], *, port: int | None, ready_timeout: float) -> Iterator[RunningServer]:
    """Run ``command``; ready when stderr has the ready line (``port=None``) or when ``port`` answers."""
    with tempfile.NamedTemporaryFile(prefix="mcpfuzz-http-", suffix=".stderr", delete=False) as stderr_file:
        stderr_path = Path(stderr_file.name)
        process = subprocess.Popen(list(command), stdin=subprocess.DEVNULL, stdout=stderr_file,
                                   stderr=stderr_file, start_new_session=True, cwd=ROOT)
    try:
        url = wait_ready(process, stderr_path, port, ready_timeout)
        yield RunningServer(url, process.pid, stderr_path)
    finally:
        stop_group(process)
        stderr_path.unlink(missing_ok=True)


def wait_ready(process: subprocess.Popen[bytes], stderr_path: Path, port: int | None, timeout: float) -> str:
    """The URL of the ready line (empty when waiting for a port); fails with the stderr tail when the
    server exits first or takes longer than ``timeout``."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if port is None:
            match = READY_LINE.search(stderr_path.read_bytes())
            if match is not None:
                return match.group(1).decode()
        elif port_open(port):
            return ""
        if process.poll() is not None:
            pytest.fail(f"server exited with status {process.returncode} before it was ready:\n"
                        f"{stderr_tail(stderr_path)}")
        time.sleep(0.05)
    pytest.fail(f"server not ready after {timeout:.0f}s:\n{stderr_tail(stderr_path)}")


@contextlib.contextmanager
def run_http_server(*args: str, ready_timeout: float = 10) -> Iterator[RunningServer]:
    """tests/servers/http_server.py with ARGS (``--mode``, ``--bug`` ...) on a free port."""
    command = [sys.executable, str(HTTP_SERVER), "--port", "0", *args]
    with launch(command, port=None, ready_timeout=ready_timeout) as server:
        yield server


@contextlib.contextmanager
def start_http_server(*args: str, ready_timeout: float = 10) -> Iterator[str]:
    """tests/servers/http_server.py with ARGS; yields its URL (``http://127.0.0.1:N/mcp`` or ``/sse``)."""
    with run_http_server(*args, ready_timeout=ready_timeout) as server:
        yield server.url


def mcp1_python() -> str | None:
    """The interpreter with mcp 1.x: $MCPFUZZ_MCP1_PYTHON, else the .venv-mcp1 that .ci/run creates."""
    candidate = os.environ.get("MCPFUZZ_MCP1_PYTHON") or str(ROOT / ".venv-mcp1" / "bin" / "python")
    return candidate if Path(candidate).exists() else None


def sdk_python(name: str) -> str:
    """The interpreter for an SDK server; skips the test when that SDK is not installed."""
    if name.startswith("sdk1"):
        python = mcp1_python()
        if python is None:
            pytest.skip("no mcp 1.x environment: .ci/run creates .venv-mcp1 (or set MCPFUZZ_MCP1_PYTHON)")
        return python
    # mcp 2.x is a test dependency of this project, so it lives in the interpreter running the tests.
    if importlib.util.find_spec("mcp") is None or importlib.util.find_spec("mcp.server.mcpserver") is None:
        pytest.skip("mcp 2.x is not installed in this environment")
    return sys.executable


@contextlib.contextmanager
def run_sdk_server(name: str, ready_timeout: float = 30) -> Iterator[RunningServer]:
    """An SDK server (``sdk1``, ``sdk2`` or ``sdk1-sse``) on a free port, ready once the port answers."""
    script, path = SDK_SCRIPTS[name]
    port = free_port()
    command = [sdk_python(name), str(SDK_SERVERS / script), str(port)]
    with launch(command, port=port, ready_timeout=ready_timeout) as server:
        yield RunningServer(f"http://127.0.0.1:{port}{path}", server.pid, server.stderr_path)


@contextlib.contextmanager
def start_sdk_server(name: str, ready_timeout: float = 30) -> Iterator[str]:
    """An SDK server (``sdk1``, ``sdk2`` or ``sdk1-sse``); yields its URL."""
    with run_sdk_server(name, ready_timeout=ready_timeout) as server:
        yield server.url
