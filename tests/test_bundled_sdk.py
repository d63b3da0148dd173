"""A server whose TypeScript SDK is bundled into its own single JavaScript file (what esbuild and webpack ship: no
node_modules for the SDK) is named from the bundle's code, and its evidence says `bundled in <file>`; a bundle
that carries only the SDK's client, or an SDK only on disk, names nothing."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from mcpfuzz.engine.attribution.node import node_stack
from mcpfuzz.engine.attribution.running import running_stack
from mcpfuzz.engine.attribution.sdks import Sdk

pytestmark = pytest.mark.process

INSTALLED = Path(__file__).resolve().parent / "sdk_servers" / "ts" / "node_modules"
SDK_CJS = INSTALLED / "@modelcontextprotocol" / "sdk" / "dist" / "cjs"
_REQUIRE = re.compile(r"""require\("(\.{1,2}/[^"]+)"\)""")
# The app bundled with the SDK: one echo tool over stdio (an esbuild bundle's last module is the entry's code).
APP = """
const { McpServer } = __bundled("server/mcp.js");
const { StdioServerTransport } = __bundled("server/stdio.js");
const server = new McpServer({ name: "bundled", version: "1.0.0" });
server.tool("echo", async () => ({ content: [{ type: "text", text: "ok" }] }));
server.connect(new StdioServerTransport());
"""
INITIALIZE = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
              "params": {"protocolVersion": "2025-03-26", "capabilities": {},
                         "clientInfo": {"name": "t", "version": "1"}}}


def _need_sdk() -> None:
    if shutil.which("node") is None:
        pytest.skip("node is not installed")
    if not (SDK_CJS / "server" / "mcp.js").is_file():
        pytest.skip("the TypeScript SDK 1.x is not installed: npm ci in tests/sdk_servers/ts")


def bundle(roots: list[str], app: str, out: Path) -> Path:
    """The SDK's CommonJS modules reachable from `roots` (relative requires followed), wrapped one function each in a
    single file the way a bundler does, then `app`; packages the SDK requires stay external (found via NODE_PATH)."""
    modules: dict[str, str] = {}
    pending = list(roots)
    while pending:
        name = pending.pop()
        if name in modules:
            continue
        source = (SDK_CJS / name).read_text(encoding="utf-8")

        def local(match: re.Match[str], folder: str = str(Path(name).parent)) -> str:
            target = os.path.normpath(os.path.join(folder, match.group(1)))
            pending.append(target)
            return f'__bundled("{target}")'

        modules[name] = _REQUIRE.sub(local, source)
    parts = ["var __modules = {}, __cache = {};",
             "function __bundled(n) { if (!__cache[n]) { var m = { exports: {} }; __cache[n] = m;"
             " __modules[n](m, m.exports); } return __cache[n].exports; }"]
    parts += [f"__modules[{json.dumps(name)}] = function (module, exports) {{\n{source}\n}};"
              for name, source in modules.items()]
    out.write_text("\n".join([*parts, app]), encoding="utf-8")
    return out


@contextmanager
def serving(script: Path) -> Iterator[int]:
    """`node script` with the SDK's own dependencies on NODE_PATH, its pid once it answered initialize."""
    environment = {**os.environ, "NODE_PATH": str(INSTALLED)}
    process = subprocess.Popen(["node", script.name], cwd=script.parent, env=environment, stdin=subprocess.PIPE,
                               stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, start_new_session=True)
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
            raise AssertionError("the bundled server ended without answering initialize")
        yield process.pid
    finally:
        watchdog.cancel()
        os.killpg(process.pid, 9)
        process.wait()


def test_a_running_server_with_the_sdk_bundled_in_its_entry_is_named_from_the_bundle(tmp_path: Path) -> None:
    _need_sdk()
    entry = bundle(["server/mcp.js", "server/stdio.js"], APP, tmp_path / "main.js")
    (tmp_path / "package.json").write_text(json.dumps({"name": "bundled-server", "private": True}))
    assert not (tmp_path / "node_modules").exists()
    with serving(entry) as pid:
        found = running_stack(pid)
    assert found is not None
    assert (found.sdk, found.version) == (Sdk.TYPESCRIPT, "1.x")  # a minified bundle keeps no version
    assert found.evidence().startswith(f"bundled in {entry.resolve()} (process {pid}: node main.js")


def test_a_bundlers_license_file_gives_the_bundled_sdks_version(tmp_path: Path) -> None:
    _need_sdk()
    entry = bundle(["server/mcp.js", "server/stdio.js"], APP, tmp_path / "main.js")
    version = json.loads((SDK_CJS.parent.parent / "package.json").read_text())["version"]
    (tmp_path / "main.js.LICENSE.txt").write_text(f"/*! @modelcontextprotocol/sdk@{version} | MIT */\n")
    found = node_stack(entry)
    assert found is not None and (found.sdk, found.version) == (Sdk.TYPESCRIPT, version)


def test_a_bundle_a_package_path_names_is_read_as_what_the_entry_runs(tmp_path: Path) -> None:
    """`require("core-pkg/lib/bundle")`: the bundle that package ships is code the entry runs."""
    _need_sdk()
    package = tmp_path / "node_modules" / "core-pkg"
    (package / "lib").mkdir(parents=True)
    (package / "package.json").write_text(json.dumps({"name": "core-pkg", "version": "1.0.0"}))
    bundle(["server/mcp.js", "server/stdio.js"], "module.exports = { __bundled };", package / "lib" / "bundle.js")
    entry = tmp_path / "cli.js"
    entry.write_text('const { __bundled } = require("core-pkg/lib/bundle");\n' + APP)
    with serving(entry) as pid:
        found = running_stack(pid)
    assert found is not None and found.sdk is Sdk.TYPESCRIPT
    assert found.source == f"bundled in {(package / 'lib' / 'bundle.js').resolve()}"


def test_a_bundle_of_the_sdks_client_only_names_no_server_stack(tmp_path: Path) -> None:
    _need_sdk()
    entry = bundle(["client/index.js"], "", tmp_path / "main.js")
    assert node_stack(entry) is None


def test_an_sdk_on_disk_beside_an_entry_that_neither_imports_nor_bundles_it_is_never_named(tmp_path: Path) -> None:
    _need_sdk()
    (tmp_path / "node_modules" / "@modelcontextprotocol").mkdir(parents=True)
    (tmp_path / "node_modules" / "@modelcontextprotocol" / "sdk").symlink_to(SDK_CJS.parent.parent)
    unused = bundle(["server/mcp.js", "server/stdio.js"], "", tmp_path / "unused-bundle.js")
    entry = tmp_path / "main.js"
    entry.write_text('process.stdin.on("data", () => {});\n')
    assert unused.is_file() and node_stack(entry) is None
