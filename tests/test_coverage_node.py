"""--coverage on Node servers: V8 precise coverage, taken by a preload in NODE_OPTIONS, reports the lines calls reach.

The preload is real (node processes started with the environment mcpfuzz gives them, over real pipes); the runs are
real `mcpfuzz run` processes. Nothing here depends on how fast the machine is: each assertion is about what the
server ran, never about when.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from mcpfuzz.engine.coverage.book import CoverageBook
from mcpfuzz.engine.coverage.launch import CoverageSetup
from mcpfuzz.engine.coverage.node_launch import NodeServer, node_server, node_setup, package_root
from tests.conftest import SERVERS_DIR, run_cli

NODE = shutil.which("node")
NESTED = SERVERS_DIR / "nested_conditions_server.cjs"
ESM = SERVERS_DIR / "esm_branches_server.mjs"
TS_SERVER = SERVERS_DIR.parent / "sdk_servers" / "ts" / "server.mjs"
ANSWER_TIMEOUT = 60.0  # generous: a loaded machine starting node

pytestmark = [pytest.mark.slow, pytest.mark.skipif(NODE is None, reason="no node on this machine")]

HANDSHAKE = [{"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
    "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "test", "version": "0"}}},
    {"jsonrpc": "2.0", "method": "notifications/initialized"}]


def _call(number: int, tool: str, arguments: dict) -> dict:
    return {"jsonrpc": "2.0", "id": number, "method": "tools/call", "params": {"name": tool, "arguments": arguments}}


def _exchange(script: Path, setup: CoverageSetup, frames: list[dict]) -> list[str]:
    """Send `frames` to a fresh node process of `script` with the preload's environment; every line of its stdout."""
    text = "".join(json.dumps(frame) + "\n" for frame in frames)
    base = {name: value for name, value in os.environ.items() if name != "NODE_OPTIONS"}
    process = subprocess.run([str(NODE), str(script)], input=text, capture_output=True, text=True,
                             env={**base, **setup.env}, timeout=ANSWER_TIMEOUT)
    return process.stdout.splitlines()


def _source_lines(lines: set[tuple[str, int]], script: Path) -> set[str]:
    """The text of the lines of `script` among `lines`, stripped."""
    source = script.read_text().splitlines()
    return {source[number - 1].strip() for path, number in lines if path == str(script.resolve())}


def test_preload_reports_the_lines_a_call_reaches_before_its_answer() -> None:
    server = node_server(["node", str(NESTED)])
    assert isinstance(server, NodeServer)
    assert server.roots == (str(SERVERS_DIR.resolve()),)
    setup = node_setup(server, include_sdk=False, env={})
    try:
        book = CoverageBook(setup.log)
        shallow = _exchange(NESTED, setup, [*HANDSHAKE, _call(1, "route", {"a": 1, "b": "", "c": 0, "d": []})])
        book.settle()
        assert book.tracer == "v8"
        reached = set(book.lines)
        assert reached and all(path.startswith(str(SERVERS_DIR.resolve())) for path, _ in reached)
        deeper = _exchange(NESTED, setup, [*HANDSHAKE, _call(1, "route", {"a": 7, "b": "12", "c": 5, "d": []})])
        new = book.after_call("tool/route")
        assert {"depth = 1;", "depth = 2;"} <= _source_lines(book.lines - reached, NESTED)
        assert "depth = 3;" not in _source_lines(book.lines, NESTED)  # c > 1000 was never true
        assert book.as_dict()["targets"] == {"tool/route": new}
        # stdout is the protocol: nothing but the answers, whatever the preload did.
        for lines in (shallow, deeper):
            assert [json.loads(line)["id"] for line in lines] == [0, 1]
    finally:
        setup.remove()
    assert not setup.folder.exists()


def test_the_lines_of_a_call_that_crashes_the_server_are_reported_at_exit() -> None:
    server = node_server(["node", str(NESTED)])
    assert isinstance(server, NodeServer)
    setup = node_setup(server, include_sdk=False, env={})
    try:
        book = CoverageBook(setup.log)
        deepest = {"a": 7, "b": "12", "c": 5000, "d": [1, 2, 3]}
        answers = _exchange(NESTED, setup, [*HANDSHAKE, _call(1, "route", deepest)])
        assert [json.loads(line)["id"] for line in answers] == [0]  # no answer: the uncaught exception ended it
        book.settle()
        assert 'throw new Error("routing table corrupted at depth 4");' in _source_lines(book.lines, NESTED)
    finally:
        setup.remove()


def test_an_es_module_server_is_covered() -> None:
    server = node_server(["node", str(ESM)])
    assert isinstance(server, NodeServer)
    setup = node_setup(server, include_sdk=False, env={})
    try:
        book = CoverageBook(setup.log)
        answers = _exchange(ESM, setup, [*HANDSHAKE, _call(1, "classify", {"n": 500})])
        book.settle()
        assert json.loads(answers[-1])["result"]["content"][0]["text"] == "large"
        reached = _source_lines(book.lines, ESM)
        assert 'kind = "large";' in reached and 'kind = "negative";' not in reached
    finally:
        setup.remove()


def test_node_options_of_the_server_are_kept_after_the_preload(tmp_path: Path) -> None:
    server = NodeServer(str(tmp_path / "server.js"), (str(tmp_path),))
    setup = node_setup(server, include_sdk=False, env={"NODE_OPTIONS": "--max-old-space-size=512"})
    try:
        preload = setup.folder / "mcpfuzz-v8cov.cjs"
        assert preload.is_file()
        assert setup.env["NODE_OPTIONS"] == f'--require "{preload}" --max-old-space-size=512'
    finally:
        setup.remove()


def test_node_commands_are_told_apart(tmp_path: Path) -> None:
    package = tmp_path / "pkg"
    (package / "dist").mkdir(parents=True)
    (package / "package.json").write_text('{"name": "pkg", "bin": {"pkg": "dist/index.js"}}')
    entry = package / "dist" / "index.js"
    entry.write_text("#!/usr/bin/env node\nconsole.log('hi');\n")
    entry.chmod(0o755)
    bin_folder = tmp_path / "node_modules" / ".bin"
    bin_folder.mkdir(parents=True)
    (bin_folder / "pkg").symlink_to(entry)
    python_script = tmp_path / "server"
    python_script.write_text("#!/usr/bin/env python3\nprint('hi')\n")
    python_script.chmod(0o755)

    assert package_root(entry) == package
    found = node_server(["env", "A=1", "node", "--require", "other.cjs", "dist/index.js"], str(package))
    assert found == NodeServer(str(entry), (str(package),))
    assert node_server([str(bin_folder / "pkg")]) == NodeServer(str(entry), (str(package),))
    assert node_server(["npx", "-y", "pkg"], str(tmp_path)) == NodeServer(str(entry), (str(package),))
    scoped = tmp_path / "node_modules" / "@scope" / "server"
    scoped.mkdir(parents=True)
    (scoped / "package.json").write_text('{"name": "@scope/server", "bin": {"scope-server": "index.js"}}')
    assert node_server(["npx", "-y", "@scope/server@1.2"], str(tmp_path)) == NodeServer(str(scoped), (str(scoped),))
    assert node_server([str(python_script)]) is None  # not Node's: the Python tracer decides
    runner = tmp_path / "node_modules" / "tsx" / "dist" / "cli.mjs"
    runner.parent.mkdir(parents=True)
    runner.write_text("#!/usr/bin/env node\n")
    (bin_folder / "tsx").symlink_to(runner)
    (package / "src").mkdir()
    (package / "src" / "server.ts").write_text("export {};\n")
    assert node_server([str(bin_folder / "tsx"), "src/server.ts"], str(package)) == \
        NodeServer(str(package / "src" / "server.ts"), (str(package),))  # the runner's script, not the runner
    assert node_server(["npx", "tsx", "src/server.ts"], str(package)) == \
        NodeServer(str(package / "src" / "server.ts"), (str(package),))
    assert node_server(["sh", "-c", "node x.js"]) is None
    assert "runs no script file" in str(node_server(["node", "-e", "1"]))
    assert "was not found" in str(node_server(["node", "missing.js"], str(tmp_path)))
    assert "npx has not fetched" in str(node_server(["npx", "-y", "mcpfuzz-no-such-package-here@1.0"], str(tmp_path)))


def test_run_reports_lines_reached_per_target_with_the_v8_tracer(tmp_path: Path) -> None:
    report, page = tmp_path / "report.json", tmp_path / "report.html"
    result = run_cli(["run", "--coverage", "--json", str(report), "--html", str(page), "--seed", "3", "--phases",
                      "coverage", "--budget", "120", "--", str(NODE), str(NESTED)], timeout=240)
    data = json.loads(report.read_text())
    coverage = data["stats"]["coverage"]
    assert coverage["tracer"] == "v8", result.stdout
    assert coverage["lines"] > 0 and coverage["files"] == 2  # the server and the protocol module it requires
    assert coverage["targets"]["tool/route"] > 0
    assert "coverage:" in result.stdout and "(v8)" in result.stdout
    assert data["findings"] == [], result.stdout  # the preload writes nothing to stdout
    assert result.returncode == 0, result.stdout


def test_an_http_node_server_mcpfuzz_launches_is_covered(tmp_path: Path) -> None:
    launch = f"{NODE} {NESTED} --port {{port}}"
    report = tmp_path / "report.json"
    result = run_cli(["run", "--coverage", "--json", str(report), "--seed", "3", "--phases", "coverage",
                      "--budget", "120", "http://127.0.0.1:{port}/mcp", "--launch", launch], timeout=240, cwd=tmp_path)
    coverage = json.loads(report.read_text())["stats"].get("coverage")
    assert coverage is not None and coverage["tracer"] == "v8", result.stdout + result.stderr
    assert coverage["targets"].get("tool/route", 0) > 0
    assert "--coverage is off" not in result.stdout


def test_the_typescript_sdk_server_counts_its_own_file_and_the_sdk_only_when_asked() -> None:
    if not (TS_SERVER.parent / "node_modules" / "@modelcontextprotocol").is_dir():
        pytest.skip("no TypeScript SDK server: .ci/run installs it (npm install in tests/sdk_servers/ts)")
    server = node_server(["node", str(TS_SERVER)])
    assert isinstance(server, NodeServer) and server.roots == (str(TS_SERVER.parent.resolve()),)
    counted: dict[bool, set[str]] = {}
    for include_sdk in (False, True):
        setup = node_setup(server, include_sdk=include_sdk, env={})
        try:
            book = CoverageBook(setup.log)
            answers = _exchange(TS_SERVER, setup, [*HANDSHAKE, _call(1, "add", {"a": 2, "b": 3})])
            assert json.loads(answers[-1])["result"]["content"][0]["text"] == "5"
            book.settle()
            assert book.tracer == "v8"
            counted[include_sdk] = {path for path, _ in book.lines}
        finally:
            setup.remove()
    assert counted[False] == {str(TS_SERVER.resolve())}
    assert str(TS_SERVER.resolve()) in counted[True]
    assert any("@modelcontextprotocol" in path for path in counted[True])
    assert not any(path.startswith("node:") for path in counted[True])  # never node's own modules


def test_a_python_server_still_gets_the_python_tracer(tmp_path: Path) -> None:
    report = tmp_path / "report.json"
    run_cli(["run", "--coverage", "--json", str(report), "--seed", "3", "--phases", "coverage", "--budget", "120",
             "--", sys.executable, str(SERVERS_DIR / "nested_conditions_server.py")], timeout=240)
    assert json.loads(report.read_text())["stats"]["coverage"]["tracer"] in ("sys.monitoring", "settrace")
