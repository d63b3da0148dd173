"""The stack that runs, where it hides: a server whose entry imports only its vendor's command package (the SDK 2.x
imported by the vendor's core, a 1.x copy listed by a UI helper and never loaded), and a server compiled into a
Bun single-file executable. Each is named from its files and from its running process, and its SDK's own stdio
behaviours are marked as the SDK's on a real run."""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from mcpfuzz.engine.attribution.detect import detect_sdk
from mcpfuzz.engine.attribution.running import running_stack
from mcpfuzz.engine.attribution.sdks import Sdk, SdkInfo
from tests.engine_runs import run_engine

pytestmark = pytest.mark.process

TS = Path(__file__).resolve().parent / "sdk_servers" / "ts"
INSTALLED = TS / "node_modules"
VENDOR_APP = TS / "vendor_app" / "server.mjs"
# The stdio silences of the TypeScript SDK (tests/test_sdk_servers.py pins them on a plain SDK server).
SDK_SILENCES = {"parse-error", "invalid-request", "invalid-params"}


def _need(package: str) -> None:
    if shutil.which("node") is None:
        pytest.skip("node is not installed")
    if not (INSTALLED / "@modelcontextprotocol" / package / "package.json").is_file():
        pytest.skip("the TypeScript SDKs are not installed: npm ci in tests/sdk_servers/ts")


@contextmanager
def _serving(command: list[str], cwd: Path | None = None) -> Iterator[int]:
    """A stdio server kept alive on an open pipe, for as long as the block runs."""
    process = subprocess.Popen(command, cwd=cwd, stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL)
    try:
        yield process.pid
    finally:
        process.kill()
        process.wait(timeout=30)


def _stack_once_started(pid: int) -> SdkInfo | None:
    """The stack read from the running process, once it can be read: a process just spawned may not have exec'd
    its command yet, which a loaded machine makes likely (waited for, with a generous deadline)."""
    deadline = time.monotonic() + 60
    while (running := running_stack(pid)) is None and time.monotonic() < deadline:
        time.sleep(0.2)
    return running


def _silences_marked(command: list[str], version: str) -> None:
    """A run of the protocol phases: the SDK's stdio silences are found and marked as that SDK's."""
    finished = run_engine(command, timeout=3, budget=60)
    assert not finished.error
    assert finished.stack is not None and finished.stack["version"] == version, finished.stack
    silences = [f for f in finished.findings if f.oracle in SDK_SILENCES and f.key.startswith("silent")]
    assert silences, [(f.oracle, f.key) for f in finished.findings]
    for finding in silences:
        assert finding.upstream is not None, (finding.oracle, finding.target, finding.key)
        assert finding.upstream.link.startswith("https://github.com/modelcontextprotocol/typescript-sdk/")
        assert f"TypeScript SDK {version}" in finding.upstream.sdk


def test_the_sdk_a_vendors_core_package_imports_is_named_not_the_copy_a_helper_lists() -> None:
    _need("server")
    expected = INSTALLED / "@modelcontextprotocol" / "server" / "package.json"
    found = detect_sdk(["node", str(VENDOR_APP)])
    assert found is not None and (found.sdk, found.version) == (Sdk.TYPESCRIPT, "2.4.0")
    assert Path(found.source) == expected.resolve()
    with _serving(["node", "server.mjs"], cwd=VENDOR_APP.parent) as pid:
        running = _stack_once_started(pid)
    assert running is not None and running.name() == "TypeScript SDK 2.4.0"


def test_a_vendor_packaged_servers_stdio_silences_are_the_sdks() -> None:
    _need("server")
    _silences_marked(["node", str(VENDOR_APP)], "2.4.0")


BUN_SERVER = """
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
const server = new McpServer({ name: "bun-compiled", version: "0.1.0" });
server.tool("echo", "Return a fixed text.", async () => ({ content: [{ type: "text", text: "x" }] }));
await server.connect(new StdioServerTransport());
"""


@pytest.fixture(scope="module")
def bun_executable(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A server on the TypeScript SDK 1.x compiled by `bun build --compile` (bun: on PATH or MCPFUZZ_BUN)."""
    bun = os.environ.get("MCPFUZZ_BUN") or shutil.which("bun")
    if bun is None:
        pytest.skip("bun is not installed (npm i bun, then MCPFUZZ_BUN=node_modules/.bin/bun)")
    _need("sdk")
    folder = tmp_path_factory.mktemp("bun")
    (folder / "node_modules").symlink_to(INSTALLED, target_is_directory=True)
    (folder / "server.mjs").write_text(BUN_SERVER)
    subprocess.run([bun, "build", "--compile", "server.mjs", "--outfile", "server"], cwd=folder, check=True,
                   capture_output=True, timeout=300)
    return folder / "server"


def test_a_bun_executable_names_the_sdk_it_embeds(bun_executable: Path) -> None:
    found = detect_sdk([str(bun_executable)])
    assert found is not None and (found.sdk, found.version) == (Sdk.TYPESCRIPT, "1.x")
    assert "Bun executable" in found.source and "(Bun v" in found.source
    with _serving([str(bun_executable)]) as pid:
        running = _stack_once_started(pid)
    assert running is not None and running.name() == "TypeScript SDK 1.x"


def test_a_bun_executables_stdio_silences_are_the_sdks(bun_executable: Path) -> None:
    _silences_marked([str(bun_executable)], "1.x")
