"""The TypeScript SDK 2.x answers in words of its own that its known-behaviour rows match: resources/read of an
unknown URI is its ResourceNotFoundError (-32602 `Resource not found: <uri>`), and a server's own words for the
same code are not."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from types import SimpleNamespace

import pytest

from mcpfuzz.engine.attribution.known import explain
from mcpfuzz.engine.attribution.sdks import Sdk, SdkInfo

pytestmark = pytest.mark.process

INSTALLED = Path(__file__).resolve().parent / "sdk_servers" / "ts" / "node_modules"
SERVER = """
import { McpServer } from "@modelcontextprotocol/server";
import { StdioServerTransport } from "@modelcontextprotocol/server/stdio";
const server = new McpServer({ name: "resources", version: "0.1.0" });
server.registerResource("notes", "notes://one", {}, async (uri) => ({ contents: [{ uri: uri.href, text: "x" }] }));
await server.connect(new StdioServerTransport());
"""
FRAMES = [{"jsonrpc": "2.0", "id": 1, "method": "initialize",
           "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                      "clientInfo": {"name": "t", "version": "1"}}},
          {"jsonrpc": "2.0", "method": "notifications/initialized"},
          {"jsonrpc": "2.0", "id": 2, "method": "resources/read", "params": {"uri": "notes://mcpfuzz-missing"}}]


def test_the_2x_sdks_unknown_resource_answer_is_its_known_behaviour(tmp_path: Path) -> None:
    package = INSTALLED / "@modelcontextprotocol" / "server"
    if shutil.which("node") is None or not (package / "package.json").is_file():
        pytest.skip("node or the TypeScript SDK 2.x is not installed (npm ci in tests/sdk_servers/ts)")
    (tmp_path / "node_modules").symlink_to(INSTALLED, target_is_directory=True)
    (tmp_path / "server.mjs").write_text(SERVER)
    done = subprocess.run(["node", "server.mjs"], cwd=tmp_path, capture_output=True, text=True, timeout=120,
                          input="".join(json.dumps(frame) + "\n" for frame in FRAMES))
    answer = next(line for line in done.stdout.splitlines() if json.loads(line).get("id") == 2)
    version = json.loads((package / "package.json").read_text())["version"]
    sdk = SdkInfo(Sdk.TYPESCRIPT, version, "package.json")
    finding = SimpleNamespace(oracle="resource-not-found", key="code:-32602", target="resource/notes://one-missing",
                              received=(answer,), message="", stderr_tail="")
    known = explain(sdk, "stdio", finding)
    assert known is not None and known.id == "typescript-resource-not-found-invalid-params", answer
    own = SimpleNamespace(**{**vars(finding), "received": (
        '{"jsonrpc":"2.0","id":2,"error":{"code":-32602,"message":"no such note"}}',)})
    assert explain(sdk, "stdio", own) is None
