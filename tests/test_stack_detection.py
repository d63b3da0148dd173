"""The stack a server runs is named by what it runs: the package its entry imports (a Node server with the TypeScript
SDK 1.x in node_modules for types and 2.x imported), the environment its interpreter loads from (mcp 1.x in
.venv-mcp1), the process a shell starts; the run header and the JSON report say it, or say it is unknown."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from mcpfuzz.engine.attribution.detect import Sdk, detect_sdk
from mcpfuzz.engine.attribution.running import running_stack
from mcpfuzz.engine.events import Event, StackFound
from mcpfuzz.transport.http_target import HttpTarget
from tests.engine_runs import fixture_command, run_engine
from tests.http_servers import mcp1_python, run_http_server

pytestmark = pytest.mark.process

SDK_SERVERS = Path(__file__).resolve().parent / "sdk_servers"
TS = SDK_SERVERS / "ts"
INSTALLED = TS / "node_modules"
INITIALIZE = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
              "params": {"protocolVersion": "2025-03-26", "capabilities": {},
                         "clientInfo": {"name": "t", "version": "1"}}}


def _need_node_sdks() -> None:
    if shutil.which("node") is None:
        pytest.skip("node is not installed")
    for package in ("sdk", "server", "core"):
        if not (INSTALLED / "@modelcontextprotocol" / package / "package.json").is_file():
            pytest.skip("the TypeScript SDK 1.x and 2.x are not installed: npm ci in tests/sdk_servers/ts")


def _layout(root: Path, script: str, dependencies: dict[str, str], dev_dependencies: dict[str, str]) -> Path:
    """A server package of its own: package.json, node_modules linking every installed SDK package (both majors
    sit there whatever the server imports), and one of our TypeScript servers as its entry."""
    root.mkdir()
    (root / "package.json").write_text(json.dumps({"name": "layout-server", "type": "module", "private": True,
                                                   "dependencies": dependencies,
                                                   "devDependencies": dev_dependencies}))
    modules = root / "node_modules" / "@modelcontextprotocol"
    modules.mkdir(parents=True)
    for package in ("sdk", "server", "core"):
        (modules / package).symlink_to(INSTALLED / "@modelcontextprotocol" / package, target_is_directory=True)
    (root / "node_modules" / "zod").symlink_to(INSTALLED / "zod", target_is_directory=True)
    entry = root / "index.mjs"
    shutil.copy(TS / script, entry)
    return entry


@contextmanager
def _serving(command: list[str], cwd: Path | None = None) -> Iterator[int]:
    """The server's pid once it has answered initialize (its imports are loaded by then); killed afterwards."""
    process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                               cwd=cwd, start_new_session=True)
    assert process.stdin is not None and process.stdout is not None
    watchdog = threading.Timer(120, process.kill)  # a server that never answers ends the read below
    watchdog.start()
    try:
        process.stdin.write((json.dumps(INITIALIZE) + "\n").encode())
        process.stdin.flush()
        for line in process.stdout:
            if line.startswith(b"{") and json.loads(line).get("id") == 1:
                break
        else:
            raise AssertionError("the server ended without answering initialize")
        yield process.pid
    finally:
        watchdog.cancel()
        os.killpg(process.pid, 9)
        process.wait()


def test_a_server_importing_the_2x_sdk_with_1x_beside_it_is_named_by_its_import(tmp_path: Path) -> None:
    """@modelcontextprotocol/sdk 1.x is a devDependency (its types); the entry imports @modelcontextprotocol/server."""
    _need_node_sdks()
    entry = _layout(tmp_path / "app", "server2.mjs", {"@modelcontextprotocol/server": "2.4.0"},
                    {"@modelcontextprotocol/sdk": "1.32.2"})
    found = detect_sdk(["node", str(entry)])
    assert found is not None and (found.sdk, found.version) == (Sdk.TYPESCRIPT, "2.4.0"), found
    with _serving(["node", str(entry)]) as pid:
        running = running_stack(pid)
    assert running is not None and running.name() == "TypeScript SDK 2.4.0"
    assert f"node {entry}" in running.runtime


def test_a_server_importing_the_1x_sdk_with_2x_beside_it_is_named_by_its_import(tmp_path: Path) -> None:
    _need_node_sdks()
    entry = _layout(tmp_path / "app", "server.mjs", {"@modelcontextprotocol/sdk": "1.32.2"},
                    {"@modelcontextprotocol/server": "2.4.0"})
    with _serving(["node", "index.mjs"], cwd=entry.parent) as pid:  # a relative entry, read from its own folder
        running = running_stack(pid)
    assert running is not None and running.name() == "TypeScript SDK 1.32.2"


def test_an_sdk_only_on_disk_is_never_named(tmp_path: Path) -> None:
    """A script that imports no MCP package, in a package whose node_modules holds both SDKs as devDependencies."""
    _need_node_sdks()
    entry = _layout(tmp_path / "app", "server.mjs", {}, {"@modelcontextprotocol/sdk": "1.32.2"})
    entry.write_text("process.stdin.resume();\n")
    assert detect_sdk(["node", str(entry)]) is None


def test_a_server_a_shell_starts_is_named_from_the_process_that_runs() -> None:
    """`sh -c 'node server2.mjs'`: the command's files say nothing; the shell's child node process does."""
    _need_node_sdks()
    command = ["sh", "-c", f"node {TS / 'server2.mjs'}; true"]  # `; true`: the shell stays as the parent
    assert detect_sdk(command) is None
    with _serving(command) as pid:
        running = running_stack(pid)
    assert running is not None and running.name() == "TypeScript SDK 2.4.0"


def test_a_python_server_on_mcp_1x_is_named_python_sdk_1_30_0_in_the_header_and_report() -> None:
    python = mcp1_python()
    if python is None:
        pytest.skip("no mcp 1.x environment: .ci/run creates .venv-mcp1 (or set MCPFUZZ_MCP1_PYTHON)")
    events: list[Event] = []
    finished = run_engine([python, str(SDK_SERVERS / "sdk1_server.py")], phases=(), timeout=5, events=events)
    assert finished.stack is not None
    assert (finished.stack["name"], finished.stack["version"]) == ("Python SDK", "1.30.0")
    assert "mcp-1.30.0.dist-info" in finished.stack["evidence"] and "process " in finished.stack["evidence"]
    said = [event for event in events if isinstance(event, StackFound)]
    assert len(said) == 1 and said[0].summary.startswith("Python SDK 1.30.0 (")


def test_a_server_on_no_known_stack_is_said_to_be_unknown() -> None:
    events: list[Event] = []
    finished = run_engine(fixture_command(), phases=(), events=events)
    assert finished.stack is None
    said = [event for event in events if isinstance(event, StackFound)]
    assert len(said) == 1 and said[0].stack is None and said[0].summary.startswith("unknown")


def test_a_server_mcpfuzz_did_not_start_has_an_unknown_stack_and_the_header_says_why() -> None:
    events: list[Event] = []
    with run_http_server() as server:
        finished = run_engine([], http=HttpTarget(server.url), phases=(), events=events)
    assert finished.stack is None
    said = [event for event in events if isinstance(event, StackFound)]
    assert len(said) == 1 and said[0].summary.startswith("unknown: mcpfuzz did not start the server")
