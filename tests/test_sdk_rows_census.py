"""The SDK rows written from the census: each explains the answer the SDK itself gives (checked on a real server
of the stack where one is installed: the TypeScript SDK 1.32.2 over HTTP, the Python SDK 1.30.0), and none
explains a server's own answer that shares the oracle and key."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path
from types import SimpleNamespace

import pytest

from mcpfuzz.engine.attribution.known import explain
from mcpfuzz.engine.attribution.sdks import Sdk, SdkInfo

pytestmark = pytest.mark.process

ROOT = Path(__file__).resolve().parent.parent
TS_MODULES = ROOT / "tests" / "sdk_servers" / "ts" / "node_modules"
MCP1_PYTHON = Path(os.environ.get("MCPFUZZ_MCP1_PYTHON") or ROOT / ".venv-mcp1" / "bin" / "python")


# The Python and TypeScript rows this module checks (the suite's SDK servers do not show them: a stateless HTTP
# server, no 2026-07-28 era on the installed 2.x, no Express app): tests/test_sdk_servers.py leaves them here.
CHECKED_HERE = frozenset({
    "typescript-modern-list-results-without-cache-fields", "typescript-express-html-400",
    "typescript-express-html-400-invalid", "typescript-http-session-errors-id-null",
    "typescript-http-unsafe-integer-id-rounded",
    "python-handler-exception-code-0", "python-handler-exception-code-0-resource",
    # tests/test_sdk1_transport_rows.py: a stateful mcp 1.x HTTP server, a cancel, a handler a cancel cannot stop
    "python-cancelled-request-code-0", "python-respond-after-cancel-crash", "python-http-errors-id-server-error",
    "python-http-invalid-envelope-invalid-params", "python-http-post-exception-internal-error",
    "python-http-invalid-id-accepted",
})


def finding(oracle: str, key: str, target: str, *received: str) -> SimpleNamespace:
    return SimpleNamespace(oracle=oracle, key=key, target=target, received=received, message="", stderr_tail="")


def known(sdk: Sdk, version: str, transport: str, found: SimpleNamespace, packages: frozenset[str] = frozenset()
          ) -> str | None:
    row = explain(SdkInfo(sdk, version, "test", packages=packages), transport, found)
    return None if row is None else row.id


# ---- the answers the census servers gave (their report.json), and a server's own answers alike ------------------

EXPRESS_PAGE = ('<body: <!DOCTYPE html> <html lang="en"> <head> <meta charset="utf-8"> <title>Error</title> </head> '
                '<body> <pre>SyntaxError: Unexpected token &#39;n&#39;, &quot;null&quot; is not valid JSON<br>')


def test_the_express_apps_html_400_is_the_sdks_and_a_json_400_is_not() -> None:
    express = frozenset({"@modelcontextprotocol/express"})
    for oracle in ("parse-error", "invalid-request"):
        page = finding(oracle, "silent-low", "envelope/null", "<HTTP 400, text/html, 1630-byte body>", EXPRESS_PAGE)
        assert known(Sdk.TYPESCRIPT, "2.0.0", "http", page, express) is not None
        assert known(Sdk.TYPESCRIPT, "1.32.2", "http", page, express) is None  # 1.x ships no Express app
        own = finding(oracle, "silent-low", "envelope/null", "<HTTP 400, text/plain, 11-byte body>",
                      "<body: Bad Request>")
        assert known(Sdk.TYPESCRIPT, "2.0.0", "http", own, express) is None


def test_the_same_html_400_from_a_servers_own_express_app_is_the_servers() -> None:
    """mongodb-mcp-server's HTTP runner calls express.json() itself on the SDK 2.x: Express's page is its own."""
    for oracle in ("parse-error", "invalid-request"):
        page = finding(oracle, "silent-low", "envelope/null", "<HTTP 400, text/html, 1630-byte body>", EXPRESS_PAGE)
        assert known(Sdk.TYPESCRIPT, "2.4.0", "http", page, frozenset({"@modelcontextprotocol/node"})) is None


def test_a_2x_servers_own_parse_error_for_a_null_body_is_not_the_sdks() -> None:
    """context7-mcp's own body-error handler answers -32700 "Parse error" for `null`: the server's to fix."""
    own = finding("invalid-request", "code:-32700", "envelope/null", "<HTTP 400, application/json, 1 message>",
                  '{"jsonrpc":"2.0","error":{"code":-32700,"message":"Parse error"},"id":null}')
    assert known(Sdk.TYPESCRIPT, "2.0.0", "http", own) is None


def test_modern_list_results_without_cache_fields_are_the_2x_sdks() -> None:
    sdk_answer = '{"result":{"resources":[]},"jsonrpc":"2.0","id":10005}'
    found = finding("response-schema", "the resources/list result:`resultType` is #, not # or #", "probe/x",
                    sdk_answer)
    assert known(Sdk.TYPESCRIPT, "2.0.0", "stdio", found) == "typescript-modern-list-results-without-cache-fields"
    with_type = '{"result":{"resources":[],"resultType":"complete"},"jsonrpc":"2.0","id":10005}'
    assert known(Sdk.TYPESCRIPT, "2.0.0", "stdio", finding("response-schema", found.key, "probe/x", with_type)) \
        is None
    assert known(Sdk.TYPESCRIPT, "1.32.2", "stdio", found) is None


def test_the_go_sdk_v1_8_answers_method_null_and_string_arguments_its_own_way() -> None:
    method_null = '{"jsonrpc":"2.0","id":111,"error":{"code":-32601,"message":"method not found: \\"\\""}}'
    found = finding("invalid-request", "code:-32601", "envelope/method-null", method_null)
    assert known(Sdk.GO, "v1.8.0", "stdio", found) == "go-method-null-method-not-found"
    assert known(Sdk.GO, "v1.4.1", "stdio", found) is None  # v1.4.1 drops it (its own row)
    own = '{"jsonrpc":"2.0","id":111,"error":{"code":-32601,"message":"Method not found"}}'
    assert known(Sdk.GO, "v1.8.0", "stdio", finding("invalid-request", "code:-32601", "envelope/method-null",
                                                     own)) is None
    arguments = ('{"jsonrpc":"2.0","id":120,"error":{"code":0,"message":"failed to unmarshal tool call arguments: '
                 'json: cannot unmarshal string into Go value of type map[string]interface {} for tool x"}}')
    found = finding("invalid-params", "code:0", "params/call-arguments-string", arguments)
    assert known(Sdk.GO, "v1.8.0", "stdio", found) == "go-tool-arguments-code-0"
    assert known(Sdk.GO, "v1.4.1", "stdio", found) is None  # seen from v1.8.0 only
    own = '{"jsonrpc":"2.0","id":120,"error":{"code":0,"message":"bad arguments"}}'
    assert known(Sdk.GO, "v1.8.0", "stdio", finding("invalid-params", "code:0", "params/x", own)) is None


def test_rmcp_2_2s_id_less_error_is_its_own() -> None:
    idless = '{"jsonrpc":"2.0","error":{"code":-32600,"message":"Invalid request"}}'
    assert known(Sdk.RUST, "2.2.0", "stdio", finding("invalid-request", "id-not-null", "envelope/null", idless)) == \
        "rust-invalid-request-without-id"
    assert known(Sdk.RUST, "2.2.0", "stdio", finding(
        "response-schema", "the response envelope:the `id` member is missing", "envelope/null", idless)) == \
        "rust-error-response-without-id"
    assert known(Sdk.RUST, "1.1.1", "stdio", finding("invalid-request", "id-not-null", "envelope/null", idless)) \
        is None
    # Its id-less answer to a request whose id was readable reads as no reply to that id: the same answer.
    silent = finding("invalid-request", "silent-medium", "frames/envelope", idless)
    assert known(Sdk.RUST, "2.2.0", "stdio", silent) == "rust-invalid-request-without-id"
    # A request with an id of the wrong type, mutated by the fuzzer, is dropped as the id/* frames are.
    assert known(Sdk.RUST, "1.1.1", "stdio", finding("invalid-request", "silent-low", "frames/id", "<no reply>")) \
        == "rust-invalid-id-dropped"
    own = '{"jsonrpc":"2.0","error":{"code":-32600,"message":"bad frame"}}'
    assert known(Sdk.RUST, "2.2.0", "stdio", finding("invalid-request", "id-not-null", "envelope/null", own)) is None


# ---- checked on real servers of the stack ------------------------------------------------------------------------

STATEFUL_TS_SERVER = """
import { createServer } from "node:http";
import { randomUUID } from "node:crypto";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
const server = new McpServer({ name: "stateful", version: "0.1.0" });
const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: () => randomUUID() });
await server.connect(transport);
const port = Number(process.argv[2]);
createServer((req, res) => transport.handleRequest(req, res)).listen(port, "127.0.0.1");
"""


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _post(url: str, body: dict) -> str:
    request = urllib.request.Request(url, data=json.dumps(body).encode(), method="POST", headers={
        "Content-Type": "application/json", "Accept": "application/json, text/event-stream"})
    try:
        with urllib.request.urlopen(request, timeout=10) as answer:
            return answer.read().decode()
    except urllib.error.HTTPError as refused:
        return refused.read().decode()


def _first_answer(tmp_path: Path, script: str, body: dict) -> str:
    """Start a node server script on a free port (the TypeScript SDKs linked in) and POST `body` until it answers."""
    (tmp_path / "node_modules").symlink_to(TS_MODULES, target_is_directory=True)
    (tmp_path / "server.mjs").write_text(script)
    port = _free_port()
    server = subprocess.Popen(["node", "server.mjs", str(port)], cwd=tmp_path, stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                if answer := _post(f"http://127.0.0.1:{port}/mcp", body):
                    return answer
            except OSError:
                time.sleep(0.2)
        return ""
    finally:
        server.kill()
        server.wait(timeout=10)


def test_the_ts_sdk_1x_refuses_a_request_before_initialize_with_id_null(tmp_path: Path) -> None:
    package = TS_MODULES / "@modelcontextprotocol" / "sdk" / "package.json"
    if shutil.which("node") is None or not package.is_file():
        pytest.skip("node or the TypeScript SDK 1.x is not installed (npm ci in tests/sdk_servers/ts)")
    answer = _first_answer(tmp_path, STATEFUL_TS_SERVER, {"jsonrpc": "2.0", "id": 905, "method": "tools/list"})
    assert '"id":null' in answer, answer
    version = json.loads(package.read_text())["version"]
    found = finding("id-preserved", "http-null", "http/session-missing", "<HTTP 400, application/json, 1 message>",
                    answer)
    assert known(Sdk.TYPESCRIPT, version, "http", found) == "typescript-http-session-errors-id-null", answer
    own = '{"jsonrpc":"2.0","error":{"code":-32000,"message":"no session"},"id":null}'
    assert known(Sdk.TYPESCRIPT, version, "http", finding("id-preserved", "http-null", "http/x", own)) is None


# A 2.x server behind `createMcpHandler`, the web-standard entry context7-mcp serves through, on node's http.
TS2_HANDLER_SERVER = """
import { createServer } from "node:http";
import { McpServer, createMcpHandler } from "@modelcontextprotocol/server";
const handler = createMcpHandler(() => new McpServer({ name: "big-ids", version: "0.1.0" }));
const port = Number(process.argv[2]);
createServer(async (req, res) => {
  const chunks = [];
  for await (const chunk of req) chunks.push(chunk);
  const request = new Request(`http://127.0.0.1:${port}${req.url}`, {method: req.method, headers: req.headers,
    body: ["GET", "HEAD"].includes(req.method) ? undefined : Buffer.concat(chunks)});
  const answer = await handler.fetch(request);
  res.writeHead(answer.status, Object.fromEntries(answer.headers));
  res.end(Buffer.from(await answer.arrayBuffer()));
}).listen(port, "127.0.0.1");
"""
BEYOND_2_53 = 9007199254740993


def test_the_ts_sdk_2x_refuses_an_id_beyond_2_53_over_http_and_echoes_it_rounded(tmp_path: Path) -> None:
    package = TS_MODULES / "@modelcontextprotocol" / "server" / "package.json"
    if shutil.which("node") is None or not package.is_file():
        pytest.skip("node or the TypeScript SDK 2.x is not installed (npm ci in tests/sdk_servers/ts)")
    answer = _first_answer(tmp_path, TS2_HANDLER_SERVER, {"jsonrpc": "2.0", "id": BEYOND_2_53, "method": "tools/list"})
    echoed = json.loads(answer)
    assert echoed["error"]["code"] == -32600 and echoed["id"] == BEYOND_2_53 - 1, answer  # rounded to 2**53
    version = json.loads(package.read_text())["version"]
    found = finding("id-preserved", "limit:big-integer", "id/above-2-53", "<HTTP 400, application/json, 1 message>",
                    answer)
    assert known(Sdk.TYPESCRIPT, version, "http", found) == "typescript-http-unsafe-integer-id-rounded", answer
    assert known(Sdk.TYPESCRIPT, version, "stdio", found) is None  # its stdio transport drops the frame instead
    assert known(Sdk.TYPESCRIPT, "1.32.2", "http", found) is None  # 1.x answers -32700 with its own words
    own = json.dumps({"jsonrpc": "2.0", "id": BEYOND_2_53 - 1, "error": {"code": -32600, "message": "Invalid id"}})
    assert known(Sdk.TYPESCRIPT, version, "http", finding("id-preserved", "limit:big-integer", "id/above-2-53",
                                                          own)) is None


PYTHON_SDK1_SERVER = """
from mcp.server.fastmcp import FastMCP
server = FastMCP("code-zero")
@server.prompt()
def greet(who: str) -> str:
    return f"hello {who}"
@server.resource("notes://one")
def one() -> str:
    return "one"
server.run()
"""


def test_the_python_sdk_1x_answers_a_handlers_exception_with_code_0(tmp_path: Path) -> None:
    if not MCP1_PYTHON.exists():
        pytest.skip("no mcp 1.x environment (.venv-mcp1)")
    version = subprocess.run([str(MCP1_PYTHON), "-c", "import importlib.metadata as m; print(m.version('mcp'))"],
                             capture_output=True, text=True, timeout=60).stdout.strip()
    (tmp_path / "server.py").write_text(PYTHON_SDK1_SERVER)
    frames = [{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "prompts/get", "params": {"name": "mcpfuzz-no-such-prompt"}},
        {"jsonrpc": "2.0", "id": 3, "method": "resources/read", "params": {"uri": "notes://mcpfuzz-missing"}}]
    server = subprocess.Popen([str(MCP1_PYTHON), "server.py"], cwd=tmp_path, stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    assert server.stdin is not None and server.stdout is not None
    answers: dict[object, str] = {}
    watchdog = threading.Timer(120, server.kill)  # a server that never answers ends the read, not the suite
    watchdog.start()
    try:
        server.stdin.write("".join(json.dumps(frame) + "\n" for frame in frames))
        server.stdin.flush()
        for line in server.stdout:  # stdin stays open until both answers came (EOF ends the server at once)
            if line.startswith("{"):
                answers[json.loads(line).get("id")] = line.strip()
            if 2 in answers and 3 in answers:
                break
    finally:
        watchdog.cancel()
        server.kill()
        server.wait(timeout=10)
    assert '"code":0' in answers[2] and '"code":0' in answers[3], answers
    assert known(Sdk.PYTHON, version, "stdio", finding(
        "invalid-params", "code:0", "prompt/mcpfuzz-no-such-prompt", answers[2])) == "python-handler-exception-code-0"
    assert known(Sdk.PYTHON, version, "stdio", finding(
        "resource-not-found", "code:0", "resource/notes://one-mcpfuzz-missing", answers[3])) == \
        "python-handler-exception-code-0-resource"
    assert known(Sdk.PYTHON, "2.3.0", "stdio", finding("invalid-params", "code:0", "prompt/x", answers[2])) is None
