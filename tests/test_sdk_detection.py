"""Which SDK a server is built on, read from package files laid out here (nothing is run)."""

from __future__ import annotations

import json
import os
import struct
import zipfile
from pathlib import Path
from types import SimpleNamespace

import pytest

from mcpfuzz.engine.attribution.detect import Sdk, SdkInfo, detect_sdk
from mcpfuzz.engine.attribution.known import explain

pytestmark = pytest.mark.process


def _venv(root: Path, *dist_infos: str) -> Path:
    """A virtual environment's files: pyvenv.cfg, bin/python (never run) and the named dist-info folders."""
    (root / "bin").mkdir(parents=True)
    (root / "pyvenv.cfg").write_text("home = /usr/bin\n")
    python = root / "bin" / "python"
    python.write_text("")
    python.chmod(0o755)
    site = root / "lib" / "python3.11" / "site-packages"
    for name in dist_infos:
        (site / name).mkdir(parents=True)
    return python


def _script(folder: Path, text: str) -> Path:
    script = folder / "server.py"
    script.write_text(text)
    return script


def test_a_server_on_the_standalone_fastmcp_names_fastmcp_over_its_mcp(tmp_path: Path) -> None:
    python = _venv(tmp_path / "venv", "mcp-2.3.0.dist-info", "fastmcp-4.2.3.dist-info",
                   "fastmcp_slim-4.2.3.dist-info")
    script = _script(tmp_path, "from fastmcp import FastMCP\nmcp = FastMCP('x')\n")
    found = detect_sdk([str(python), str(script)])
    assert found is not None and (found.sdk, found.version) == (Sdk.FASTMCP, "4.2.3")
    assert found.base is not None and (found.base.sdk, found.base.version) == (Sdk.PYTHON, "2.3.0")
    assert found.describe() == "FastMCP 4.2.3 (on the Python SDK (mcp) 2.3.0)"
    # mcp's known behaviours (its stdio transport) are FastMCP's too, and say so under FastMCP's name.
    known = explain(found, "stdio", _finding("parse-error", "silent-low", "parse/truncated", "<no reply>"))
    assert known is not None and known.id == "python-stdio-drops-unparseable"


def test_mcps_bundled_fastmcp_is_mcp(tmp_path: Path) -> None:
    """`from mcp.server.fastmcp import FastMCP` is mcp's own copy, even where fastmcp is installed too."""
    python = _venv(tmp_path / "venv", "mcp-1.30.0.dist-info", "fastmcp-4.2.3.dist-info")
    script = _script(tmp_path, "from mcp.server.fastmcp import FastMCP\n")
    found = detect_sdk([str(python), str(script)])
    assert found is not None and (found.sdk, found.version, found.base) == (Sdk.PYTHON, "1.30.0", None)


def test_a_script_that_imports_neither_is_no_sdk_server(tmp_path: Path) -> None:
    python = _venv(tmp_path / "venv", "mcp-2.3.0.dist-info", "fastmcp-4.2.3.dist-info")
    assert detect_sdk([str(python), str(_script(tmp_path, "import json\n"))]) is None


def _node_package(root: Path) -> Path:
    manifest = root / "node_modules" / "@modelcontextprotocol" / "sdk" / "package.json"
    manifest.parent.mkdir(parents=True)
    manifest.write_text('{"name": "@modelcontextprotocol/sdk", "version": "1.32.2"}')
    script = root / "node_modules" / "server" / "dist" / "index.js"
    script.parent.mkdir(parents=True)
    script.write_text('import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";\n')
    return script


@pytest.mark.parametrize("prefix", [[], ["env", "PORT={port}"], ["PORT=3001"], ["/usr/bin/env", "-i", "A=1"]])
def test_a_launch_command_with_env_and_node_options_finds_the_typescript_sdk(tmp_path: Path,
                                                                              prefix: list[str]) -> None:
    """`env PORT={port} node --require preload.cjs dist/index.js streamableHttp`: the script's SDK."""
    script = _node_package(tmp_path / "app")
    preload = tmp_path / "elsewhere" / "preload.cjs"
    preload.parent.mkdir()
    preload.write_text("")
    found = detect_sdk([*prefix, "node", "--require", str(preload), os.fspath(script), "streamableHttp"])
    assert found is not None and (found.sdk, found.version) == (Sdk.TYPESCRIPT, "1.32.2")


def test_python_dash_m_of_a_package_that_imports_mcp_beyond_its_main_is_mcps(tmp_path: Path) -> None:
    """mcp-server-time's __main__.py imports only its own package's `main`; its server module imports mcp."""
    python = _venv(tmp_path / "venv", "mcp-2.3.0.dist-info")
    package = tmp_path / "venv" / "lib" / "python3.11" / "site-packages" / "time_server"
    package.mkdir()
    (package / "__main__.py").write_text("from time_server import main\nmain()\n")
    (package / "__init__.py").write_text("from .server import serve\n\ndef main():\n    serve()\n")
    (package / "server.py").write_text("from mcp.server import Server\n")
    found = detect_sdk([str(python), "-m", "time_server"])
    assert found is not None and (found.sdk, found.version) == (Sdk.PYTHON, "2.3.0")
    (package / "server.py").write_text("import json\n")  # a hand-written server in an environment with mcp
    assert detect_sdk([str(python), "-m", "time_server"]) is None


# ---------------------------------------------------------------- compiled servers: small synthetic files

GO_MAGIC = b"\xff Go buildinf:"
MODINFO_START = bytes.fromhex("3077af0c9274080241e1c107e6d618e6")
MODINFO_END = bytes.fromhex("f932433186182072008242104116d8f2")
BUNDLE_SIGNATURE = bytes.fromhex("8b1202b96a612038727b930214d7a03213f5b9e6efae3318ee3b2dce24b36aae")


def elf(sections: dict[str, bytes], tail: bytes = b"") -> bytes:
    """A little-endian ELF64 file holding these sections (and `tail` after them), with its section header table."""
    names = b"\0" + b"".join(name.encode() + b"\0" for name in [*sections, ".shstrtab"])
    body = bytearray(64)
    spans = []
    for name, data in [*sections.items(), (".shstrtab", names)]:
        while len(body) % 16:
            body.append(0)
        spans.append((names.index(b"\0" + name.encode() + b"\0") + 1, len(body), len(data)))
        body += data
    body += tail
    while len(body) % 8:
        body.append(0)
    shoff = len(body)
    body += bytes(64)  # section 0 is the null section
    for name_at, offset, size in spans:
        body += struct.pack("<IIQQQQIIQQ", name_at, 1, 0, 0, offset, size, 0, 0, 16, 0)
    header = b"\x7fELF" + bytes([2, 1, 1]) + bytes(9)
    header += struct.pack("<HHIQQQIHHHHHH", 2, 62, 1, 0, 0, shoff, 0, 64, 0, 0, 64, len(spans) + 1, len(spans))
    body[:64] = header
    return bytes(body)


def _varint(number: int) -> bytes:
    out = bytearray()
    while True:
        byte = number & 0x7F
        number >>= 7
        out.append(byte | (0x80 if number else 0))
        if not number:
            return bytes(out)


def go_buildinfo(modules: str, go_version: str = "go1.25.0") -> bytes:
    """A Go 1.18+ build information blob: the 32-byte header, then the Go version and module text inline."""
    header = GO_MAGIC + bytes([8, 2]) + bytes(16)
    modinfo = MODINFO_START + modules.encode() + MODINFO_END
    return header + _varint(len(go_version)) + go_version.encode() + _varint(len(modinfo)) + modinfo


def dotnet_bundle(deps_json: bytes) -> bytes:
    """A single-file host: the bundle header's offset before the signature in .data; header and deps.json after."""
    data_section = bytes(24) + struct.pack("<q", 0) + BUNDLE_SIGNATURE  # the offset is patched in below
    image = bytearray(elf({".text": b"\x90" * 64, ".data": data_section}))
    deps_at = len(image)
    image += deps_json
    header_at = len(image)
    bundle_id = b"abc123"
    image += struct.pack("<IIi", 6, 0, 1) + bytes([len(bundle_id)]) + bundle_id
    image += struct.pack("<qqqqQ", deps_at, len(deps_json), 0, 0, 0)
    signature_at = bytes(image).index(BUNDLE_SIGNATURE)
    image[signature_at - 8:signature_at] = struct.pack("<q", header_at)
    return bytes(image)


def _program(path: Path, data: bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    path.chmod(0o755)
    return path


GO_SDK_MODULES = ("path\tgithub.com/jolks/mcp-cron\nmod\tgithub.com/jolks/mcp-cron\t(devel)\t\n"
                  "dep\tgithub.com/google/uuid\tv1.6.0\th1:x=\n"
                  "dep\tgithub.com/modelcontextprotocol/go-sdk\tv1.4.1\th1:y=\n"
                  "build\t-compiler=gc\n")


def test_a_go_binary_names_the_go_sdk_from_its_buildinfo_section(tmp_path: Path) -> None:
    sections = {".text": b"\x90" * 256, ".go.buildinfo": go_buildinfo(GO_SDK_MODULES)}
    server = _program(tmp_path / "mcp-cron", elf(sections))
    found = detect_sdk([str(server), "-transport", "stdio"])
    assert found is not None and (found.sdk, found.version) == (Sdk.GO, "v1.4.1")
    assert found.describe() == "the Go SDK v1.4.1"


def test_mcp_go_replaced_by_a_local_copy_keeps_the_version_it_replaces(tmp_path: Path) -> None:
    modules = ("mod\texample.com/server\tv0.1.0\t\n"
               "dep\tgithub.com/mark3labs/mcp-go\tv0.33.0\th1:z=\n=>\t../mcp-go\t\t\n")
    server = _program(tmp_path / "server", elf({".go.buildinfo": go_buildinfo(modules)}))
    found = detect_sdk([str(server)])
    assert found is not None and (found.sdk, found.version) == (Sdk.MCP_GO, "v0.33.0")


def test_a_go_binary_without_a_section_table_is_found_by_its_header(tmp_path: Path) -> None:
    """A Mach-O (or any file without ELF sections): the header is looked for in the file's first bytes."""
    blob = b"\xcf\xfa\xed\xfe" + bytes(5000) + go_buildinfo(GO_SDK_MODULES) + bytes(100)
    found = detect_sdk([str(_program(tmp_path / "server", blob))])
    assert found is not None and (found.sdk, found.version) == (Sdk.GO, "v1.4.1")


def test_a_go_binary_without_an_mcp_module_is_no_sdk_server(tmp_path: Path) -> None:
    modules = "mod\texample.com/plain\tv1.0.0\t\ndep\tgithub.com/google/uuid\tv1.6.0\th1:x=\n"
    server = _program(tmp_path / "server", elf({".go.buildinfo": go_buildinfo(modules)}))
    assert detect_sdk([str(server)]) is None


def test_a_rust_binary_names_rmcp_from_its_cargo_registry_paths(tmp_path: Path) -> None:
    rodata = (b"called `Option::unwrap()` on a `None` value\0/home/runner/.cargo/registry/src/"
              b"index.crates.io-1949cf8c6b5b557f/rmcp-0.16.0/src/service/server.rs\0"
              b"/home/runner/.cargo/registry/src/index.crates.io-1949cf8c6b5b557f/rmcp-macros-0.16.0/src/lib.rs\0")
    server = _program(tmp_path / "vaulttools-mcp", elf({".text": b"\x90" * 64, ".rodata": rodata}))
    found = detect_sdk([str(server), "--allowed-dir", "/tmp"])
    assert found is not None and (found.sdk, found.version) == (Sdk.RUST, "0.16.0")


DEPS_JSON = json.dumps({"runtimeTarget": {"name": ".NETCoreApp,Version=v9.0"},
                        "libraries": {"Server/1.0.0": {"type": "project"},
                                      "ModelContextProtocol.AspNetCore/0.9.0": {"type": "package"},
                                      "ModelContextProtocol.Core/1.0.0": {"type": "package"}}}).encode()


def test_a_dotnet_apphost_names_the_csharp_sdk_from_the_deps_json_beside_it(tmp_path: Path) -> None:
    apphost = _program(tmp_path / "app" / "Server", elf({".text": b"\x90" * 64, ".data": bytes(64)}))
    (tmp_path / "app" / "Server.deps.json").write_bytes(DEPS_JSON)
    found = detect_sdk([str(apphost)])
    assert found is not None and (found.sdk, found.version) == (Sdk.CSHARP, "1.0.0")
    found = detect_sdk(["dotnet", str(tmp_path / "app" / "Server.dll")])  # a framework-dependent app, the same
    assert found is not None and (found.sdk, found.version) == (Sdk.CSHARP, "1.0.0")


def test_a_dotnet_single_file_bundle_names_the_csharp_sdk_from_its_bundled_deps_json(tmp_path: Path) -> None:
    server = _program(tmp_path / "azmcp", dotnet_bundle(DEPS_JSON))
    found = detect_sdk([str(server), "server", "start"])
    assert found is not None and (found.sdk, found.version) == (Sdk.CSHARP, "1.0.0")
    assert found.source.endswith("(bundled deps.json)")


def _jar(path: Path, entries: dict[str, str]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(path, "w") as archive:
        for name, text in entries.items():
            archive.writestr(name, text)
    return path


def test_a_fat_jar_names_the_java_sdk_from_its_maven_metadata(tmp_path: Path) -> None:
    jar = _jar(tmp_path / "server.jar", {
        "META-INF/MANIFEST.MF": "Manifest-Version: 1.0\r\nMain-Class: example.Server\r\n",
        "META-INF/maven/io.modelcontextprotocol.sdk/mcp-core/pom.properties": "groupId=io.modelcontextprotocol.sdk\n"
                                                                              "artifactId=mcp-core\nversion=0.11.2\n",
        "io/modelcontextprotocol/spec/McpSchema.class": ""})
    found = detect_sdk(["java", "-Xmx256m", "-jar", str(jar)])
    assert found is not None and (found.sdk, found.version) == (Sdk.JAVA, "0.11.2")


def test_a_kotlin_fat_jar_names_the_kotlin_sdk(tmp_path: Path) -> None:
    jar = _jar(tmp_path / "server-all.jar", {
        "META-INF/maven/io.modelcontextprotocol/kotlin-sdk-server-jvm/pom.properties": "version=0.7.2\n",
        "io/modelcontextprotocol/kotlin/sdk/server/Server.class": ""})
    found = detect_sdk(["java", "-jar", str(jar)])
    assert found is not None and (found.sdk, found.version) == (Sdk.KOTLIN, "0.7.2")


def test_a_spring_boot_jar_and_a_manifest_class_path_name_the_sdk_jar(tmp_path: Path) -> None:
    boot = _jar(tmp_path / "boot.jar", {"BOOT-INF/lib/mcp-core-0.12.0.jar": "",
                                        "BOOT-INF/lib/jackson-core-2.17.jar": ""})
    found = detect_sdk(["java", "-jar", str(boot)])
    assert found is not None and (found.sdk, found.version) == (Sdk.JAVA, "0.12.0")
    thin = _jar(tmp_path / "thin.jar", {"META-INF/MANIFEST.MF": "Manifest-Version: 1.0\r\nClass-Path: lib/slf4j-api-2"
                                        ".0.9.jar lib/mcp-0.10.0.ja\r\n r\r\n"})  # a Class-Path folded at 72 bytes
    found = detect_sdk(["java", "-jar", str(thin)])
    assert found is not None and (found.sdk, found.version) == (Sdk.JAVA, "0.10.0")


def test_a_classpath_of_maven_repository_jars_names_the_sdk(tmp_path: Path) -> None:
    repo = tmp_path / "m2" / "io" / "modelcontextprotocol" / "sdk" / "mcp" / "0.10.0" / "mcp-0.10.0.jar"
    found = detect_sdk(["java", "-cp", f"{tmp_path}/classes:{repo}", "example.Server"])
    assert found is not None and (found.sdk, found.version) == (Sdk.JAVA, "0.10.0")
    assert detect_sdk(["java", "-cp", f"{tmp_path}/other/mcp-1.0.jar", "example.Server"]) is None


def test_an_npm_wrapper_leads_to_its_platform_package_binary(tmp_path: Path) -> None:
    """`@azure/mcp`'s bin is a node script that runs the binary of `@azure/mcp-linux-x64` (an optionalDependency)."""
    modules = tmp_path / "node_modules"
    wrapper = modules / "@acme" / "mcp"
    wrapper.mkdir(parents=True)
    (wrapper / "package.json").write_text(json.dumps({"name": "@acme/mcp", "bin": {"acme-mcp": "./index.js"},
                                                      "optionalDependencies": {"@acme/mcp-linux-x64": "1.0.0",
                                                                               "@acme/mcp-darwin-arm64": "1.0.0"}}))
    (wrapper / "index.js").write_text("#!/usr/bin/env node\nrequire('child_process')\n")
    (wrapper / "index.js").chmod(0o755)
    platform = modules / "@acme" / "mcp-linux-x64"
    _program(platform / "dist" / "acme-mcp", elf({".go.buildinfo": go_buildinfo(GO_SDK_MODULES)}))
    (platform / "package.json").write_text(json.dumps({"name": "@acme/mcp-linux-x64",
                                                       "bin": {"acme-mcp-linux-x64": "./dist/acme-mcp"}}))
    (modules / ".bin").mkdir()
    (modules / ".bin" / "acme-mcp").symlink_to("../@acme/mcp/index.js")
    found = detect_sdk([str(modules / ".bin" / "acme-mcp")])
    assert found is not None and (found.sdk, found.version) == (Sdk.GO, "v1.4.1")
    assert found.source.endswith("dist/acme-mcp")


def test_an_npm_bin_link_to_a_binary_is_read_as_the_binary(tmp_path: Path) -> None:
    binary = _program(tmp_path / "node_modules" / "mcp-x-linux-x64" / "bin" / "mcp-x",
                      elf({".go.buildinfo": go_buildinfo(GO_SDK_MODULES)}))
    link = tmp_path / "node_modules" / ".bin" / "mcp-x"
    link.parent.mkdir()
    link.symlink_to(binary)
    found = detect_sdk([str(link)])
    assert found is not None and found.sdk is Sdk.GO


def test_a_binary_a_pypi_wheel_installs_as_a_script_is_read_from_path(tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """A wheel that ships a Go server puts the binary itself in the environment's bin/ (its scripts)."""
    _venv(tmp_path / "venv", "mcp-2.3.0.dist-info")
    _program(tmp_path / "venv" / "bin" / "mcp-go-server", elf({".go.buildinfo": go_buildinfo(GO_SDK_MODULES)}))
    monkeypatch.setenv("PATH", f"{tmp_path / 'venv' / 'bin'}{os.pathsep}{os.environ.get('PATH', '')}")
    found = detect_sdk(["mcp-go-server", "--stdio"])
    assert found is not None and (found.sdk, found.version) == (Sdk.GO, "v1.4.1")  # not the venv's mcp

# ---------------------------------------------------------------- a finding is the SDK's only when its answer is

def _finding(oracle: str, key: str, target: str, *received: str, message: str = "") -> SimpleNamespace:
    return SimpleNamespace(oracle=oracle, key=key, target=target, received=received, message=message,
                           stderr_tail="")


TS = SdkInfo(Sdk.TYPESCRIPT, "1.32.2", "package.json")


def test_the_typescript_sdks_unknown_tool_answer_is_its_own_and_a_servers_catch_all_is_not() -> None:
    sdks = '{"result":{"content":[{"type":"text","text":"MCP error -32602: Tool nope not found"}],"isError":true}}'
    own = '{"result":{"content":[{"type":"text","text":"Unknown tool: nope"}],"isError":true}}'
    known = explain(TS, "stdio", _finding("invalid-params", "result", "params/call-unknown-tool", sdks))
    assert known is not None and known.id == "typescript-unknown-tool-is-error-result"
    assert explain(TS, "stdio", _finding("invalid-params", "result", "params/call-unknown-tool", own)) is None


def test_a_servers_own_internal_error_on_invalid_arguments_is_never_the_typescript_sdks() -> None:
    zod = _zod_internal_error(["params", "name"])  # the SDK's own: the request's schema failed
    own = '{"jsonrpc":"2.0","id":3,"error":{"code":-32603,"message":"MCP error -32603: bad arguments"}}'
    known = explain(TS, "stdio", _finding("invalid-params", "code:-32603", "params/call-without-name", zod))
    assert known is not None and known.id == "typescript-invalid-params-internal-error"
    assert explain(TS, "stdio", _finding("invalid-params", "code:-32603", "tool/echo", own)) is None


def test_a_go_servers_own_error_with_code_0_is_not_the_go_sdks() -> None:
    go = SdkInfo(Sdk.GO, "v1.4.1", "mcp-cron")
    sdks = ('{"jsonrpc":"2.0","id":9,"error":{"code":0,"message":"handling \'tools/call\': unmarshaling '
            '\\"x\\" into a *mcp.CallToolParamsRaw"}}')
    own = '{"jsonrpc":"2.0","id":9,"error":{"code":0,"message":"invalid input: task ID is required"}}'
    known = explain(go, "stdio", _finding("invalid-params", "code:0", "params/string", sdks))
    assert known is not None and known.link.endswith("/go-sdk/issues/976")
    assert explain(go, "stdio", _finding("invalid-params", "code:0", "tool/get_task", own)) is None


def test_a_row_with_targets_does_not_excuse_a_finding_on_another_frame() -> None:
    """A server that stops answering after a valid tool call is stuck by its own code, not the Go SDK's transport."""
    go = SdkInfo(Sdk.GO, "v1.4.1", "mcp-cron")
    assert explain(go, "stdio", _finding("no-hang", "stuck-after", "parse/truncated", "<no reply>")) is not None
    assert explain(go, "stdio", _finding("no-hang", "stuck-after", "tool/run_task", "<no reply>")) is None


def test_an_rmcp_crash_is_the_sdks_only_when_its_stderr_says_the_sdk_ended_the_session() -> None:
    rust = SdkInfo(Sdk.RUST, "1.1.1", "cortex-mcp")
    ended = _finding("no-crash", "crash:x", "parse/truncated", "<the server exited with status 0>",
                     message='{"message":"input stream terminated","target":"rmcp::service"}')
    panicked = _finding("no-crash", "crash:x", "tool/expand", "<the server exited with status 101>",
                        message="thread 'main' panicked at src/tools.rs:12:5")
    assert explain(rust, "stdio", ended) is not None
    assert explain(rust, "stdio", panicked) is None


def test_rmcps_refusal_of_a_first_request_other_than_initialize_is_its_own_in_words_or_debug_form() -> None:
    """rmcp's ServerInitializeError ends the session; a server's main shows it with Display (1.1.1's cortex-mcp) or
    with Debug (2.2.0's onshape-mcp: `Error: ExpectedInitializeRequest(...)`): the same behaviour in both."""
    words = "Error: expect initialized request, but received: Some(Request(JsonRpcRequest { id: Number(10001) }))"
    debug = ('Error: ExpectedInitializeRequest(Some(Request(JsonRpcRequest { jsonrpc: JsonRpcVersion2_0, '
             'id: Number(10001), request: CustomRequest(CustomRequest { method: "server/discover" }) })))')
    for version, stderr in (("1.1.1", words), ("2.2.0", debug)):
        crash = _finding("no-crash", "crash:x", "lifecycle/discover-first", "<the server exited with status 1>",
                         message=f"the server exited with status 1 after this frame\nstderr tail:\n{stderr}")
        known = explain(SdkInfo(Sdk.RUST, version, "rmcp"), "stdio", crash)
        assert known is not None and known.id == "rust-first-request-not-initialize", version
    other = _finding("no-crash", "crash:x", "lifecycle/discover-first", "<the server exited with status 1>",
                     message="Error: Os { code: 32, kind: BrokenPipe }")
    assert explain(SdkInfo(Sdk.RUST, "2.2.0", "rmcp"), "stdio", other) is None


def test_a_shaded_jar_of_unknown_version_gets_only_rows_for_every_version() -> None:
    python_row_sdk = SdkInfo(Sdk.PYTHON, "unknown", "x")
    known = explain(python_row_sdk, "stdio", _finding("parse-error", "silent-low", "parse/truncated", "<no reply>"))
    assert known is not None  # python-stdio-drops-unparseable holds for all versions
    assert explain(python_row_sdk, "stdio", _finding("method-not-found", "code:-32602", "method/unknown",
                   '{"error":{"code":-32602,"message":"Invalid request parameters"}}')) is None  # before 2.0.0 only


def test_a_row_of_an_oracle_folded_into_the_frames_judge_explains_the_finding() -> None:
    """One frame, one cause: the Go SDK answers id 1.5 as 1. Where the frame's judge failed in a way no row names
    (here a made-up key), the id-preserved failure folded into it is the SDK's, so the finding is marked."""
    go = SdkInfo(Sdk.GO, "v1.4.1", "mcp-cron")
    answer = '{"jsonrpc":"2.0","id":1,"result":{}}'
    judged = _finding("invalid-request", "some-other-key", "id/fraction", answer)
    assert explain(go, "stdio", judged) is None
    known = explain(go, "stdio", judged, folded=(("id-preserved", "number->integer"),))
    assert known is not None and known.id == "go-fractional-id-answered-as-integer"
    elsewhere = _finding("invalid-request", "some-other-key", "tool/run_task", answer)  # not a frame the row names
    assert explain(go, "stdio", elsewhere, folded=(("id-preserved", "number->integer"),)) is None


# ---------------------------------------------------------------- Node: what the entry imports, resolved as Node does


def _package(modules: Path, name: str, version: str, **manifest: object) -> Path:
    """An installed package's folder: its package.json (the only file detection reads of it)."""
    folder = modules / name
    folder.mkdir(parents=True)
    (folder / "package.json").write_text(json.dumps({"name": name, "version": version, **manifest}))
    return folder


def _app(root: Path, source: str, **manifest: object) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "package.json").write_text(json.dumps({"name": "app", **manifest}))
    entry = root / "dist" / "index.js"
    entry.parent.mkdir(exist_ok=True)
    entry.write_text(source)
    return entry


@pytest.mark.parametrize(("package", "version", "sdk", "base"), [
    ("fastmcp", "3.1.0", Sdk.FASTMCP_TS, "1.17.0"),
    ("mcp-framework", "0.2.15", Sdk.MCP_FRAMEWORK, "1.17.0"),
    ("@mastra/mcp", "0.10.4", Sdk.MASTRA, "1.17.0"),
    ("tmcp", "1.20.0", Sdk.TMCP, None),
])
def test_a_framework_the_entry_imports_is_named_over_the_sdk_beside_it(tmp_path: Path, package: str, version: str,
                                                                       sdk: Sdk, base: str | None) -> None:
    modules = tmp_path / "node_modules"
    framework = _package(modules, package, version,
                         dependencies={} if base is None else {"@modelcontextprotocol/sdk": "^1.17.0"})
    if base is not None:
        _package(framework / "node_modules", "@modelcontextprotocol/sdk", base)  # the framework's own copy
    _package(modules, "@modelcontextprotocol/sdk", "1.32.2")  # the app's, for types
    entry = _app(tmp_path, f'import {{ Server }} from "{package}";\nimport "@modelcontextprotocol/sdk/types.js";\n')
    found = detect_sdk(["node", str(entry)])
    assert found is not None and (found.sdk, found.version) == (sdk, version)
    assert (found.base.version if found.base is not None else None) == base  # the SDK the framework resolves


def test_tmcps_transport_packages_are_tmcp(tmp_path: Path) -> None:
    _package(tmp_path / "node_modules", "tmcp", "1.20.0")
    entry = _app(tmp_path, 'const { StdioTransport } = require("@tmcp/transport-stdio");\nrequire("tmcp");\n')
    found = detect_sdk(["node", str(entry)])
    assert found is not None and found.sdk is Sdk.TMCP


def test_the_entrys_local_imports_are_followed_and_typescript_sources_too(tmp_path: Path) -> None:
    """`tsx src/index.ts` imports `./server.js`, which is server.ts on disk, which imports the 2.x SDK."""
    modules = tmp_path / "node_modules" / "@modelcontextprotocol"
    _package(modules.parent, "@modelcontextprotocol/server", "2.4.0")
    _package(modules.parent, "@modelcontextprotocol/sdk", "1.32.2")
    (tmp_path / "package.json").write_text("{}")
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "index.ts").write_text('import { start } from "./server.js";\nstart();\n')
    (tmp_path / "src" / "server.ts").write_text('import { McpServer } from "@modelcontextprotocol/server";\n')
    found = detect_sdk(["tsx", "--tsconfig", "tsconfig.json", str(tmp_path / "src" / "index.ts")])
    assert found is not None and found.version == "2.4.0"


def test_a_bundle_is_read_from_its_runtime_dependencies_never_its_dev_dependencies(tmp_path: Path) -> None:
    modules = tmp_path / "node_modules"
    _package(modules, "@modelcontextprotocol/sdk", "1.32.2")
    entry = _app(tmp_path, "(()=>{/* bundled */})();\n", devDependencies={"@modelcontextprotocol/sdk": "1.32.2"})
    assert detect_sdk(["node", str(entry)]) is None  # a stack that may not be running is not named
    _app(tmp_path, "(()=>{/* bundled */})();\n", dependencies={"@modelcontextprotocol/sdk": "1.32.2"})
    found = detect_sdk(["node", str(entry)])
    assert found is not None and found.version == "1.32.2"


def test_a_package_is_resolved_from_the_importing_files_folder_upward(tmp_path: Path) -> None:
    """The nearest node_modules wins, as in Node: the app's 2.x, not the workspace root's 1.x."""
    _package(tmp_path / "node_modules", "@modelcontextprotocol/sdk", "1.0.0")
    app = tmp_path / "packages" / "app"
    _package(app / "node_modules", "@modelcontextprotocol/sdk", "1.32.2")
    entry = _app(app, 'import "@modelcontextprotocol/sdk/server/stdio.js";\n')
    found = detect_sdk(["node", str(entry)])
    assert found is not None and found.version == "1.32.2"


def _zod_internal_error(path: list[str]) -> str:
    """The TypeScript SDK 1.x's answer to a thrown ZodError: -32603 with the issues as indented JSON text."""
    issues = json.dumps([{"expected": "string", "code": "invalid_type", "path": path,
                          "message": "Invalid input: expected string, received undefined"}], indent=2)
    return json.dumps({"jsonrpc": "2.0", "id": 3, "error": {"code": -32603, "message": issues}})


def test_a_typescript_handlers_own_zod_error_is_the_servers() -> None:
    """The SDK's ZodError names the request's members (`params`, `name`); a handler that parses its own arguments
    with zod answers the same code and shape, but its issues name its arguments."""
    sdks, handlers = (_zod_internal_error(["params", "name"]), _zod_internal_error(["query"]))
    known = explain(TS, "stdio", _finding("invalid-params", "code:-32603", "params/call-without-name", sdks))
    assert known is not None and known.id == "typescript-invalid-params-internal-error"
    assert explain(TS, "stdio", _finding("invalid-params", "code:-32603", "tool/search", handlers)) is None


def test_the_csharp_sdks_catch_all_is_its_own_only_on_frames_it_decodes() -> None:
    """-32603 "An error occurred." answers any exception: params the SDK cannot deserialize (its own), or a
    handler's exception (the server's, on the handler's own target)."""
    csharp = SdkInfo(Sdk.CSHARP, "1.0.0", "azmcp")
    answer = '{"jsonrpc":"2.0","id":7,"error":{"code":-32603,"message":"An error occurred."}}'
    known = explain(csharp, "stdio", _finding("invalid-params", "code:-32603", "params/string", answer))
    assert known is not None and known.id == "csharp-malformed-params-internal-error"
    assert explain(csharp, "stdio", _finding("invalid-params", "code:-32603", "resource/read", answer)) is None
    own = '{"jsonrpc":"2.0","id":7,"error":{"code":-32603,"message":"subscription failed"}}'
    assert explain(csharp, "stdio", _finding("invalid-params", "code:-32603", "params/string", own)) is None


def test_a_go_sdk_http_refusal_is_its_own_only_with_its_own_words() -> None:
    go = SdkInfo(Sdk.GO, "v1.4.1", "mcp-cron")
    sdks = ("<HTTP 400, text/plain, 59-byte body>", '<body: JSON RPC not handled: "x/y" unsupported>', "<no reply>")
    own = ("<HTTP 400, text/plain, 11-byte body>", "<body: bad request>", "<no reply>")
    known = explain(go, "http", _finding("method-not-found", "silent-low", "method/unknown", *sdks))
    assert known is not None and known.id == "go-http-unknown-method-plain-400"
    assert explain(go, "http", _finding("method-not-found", "silent-low", "method/unknown", *own)) is None
    assert explain(go, "stdio", _finding("method-not-found", "silent-low", "method/unknown", *sdks)) is None
    # The empty method decodes as a request from v1.7.0 on: only the versions before it accept it with 202.
    accepted = ("<HTTP 202, empty body>", "<no reply>")
    assert explain(go, "http", _finding("invalid-request", "silent-medium", "envelope/method-empty", *accepted))
    newer = SdkInfo(Sdk.GO, "v1.7.0", "x")
    assert explain(newer, "http", _finding("invalid-request", "silent-medium", "envelope/method-empty",
                                           *accepted)) is None
    assert explain(newer, "http", _finding("invalid-request", "silent-medium", "envelope/method-missing", *accepted))


def test_a_bundled_sdk_known_by_its_major_only_gets_the_rows_that_hold_for_the_whole_major() -> None:
    unknown_tool = _finding("invalid-params", "result", "tool/mcpfuzz-missing",
                            '{"result":{"content":[{"type":"text","text":"MCP error -32602: Tool x not found"}]}}')
    assert explain(SdkInfo(Sdk.TYPESCRIPT, "1.x", "bundled in main.js"), "stdio", unknown_tool) is not None
    assert explain(SdkInfo(Sdk.TYPESCRIPT, "2.x", "bundled in main.js"), "stdio", unknown_tool) is None  # < 2.0.0
    dropped = _finding("parse-error", "silent-low", "parse/truncated", "<no reply>")
    assert explain(SdkInfo(Sdk.TYPESCRIPT, "2.x", "bundled in main.js"), "stdio", dropped) is not None
