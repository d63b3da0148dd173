"""The hooks in real processes: what a Python or Node program does is reported, paths resolved, children included."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from mcpfuzz.engine.coverage.launch import PythonServer
from mcpfuzz.engine.coverage.node_launch import NodeServer
from mcpfuzz.engine.observe.listener import LoopbackListener
from mcpfuzz.engine.observe.records import Record, RecordFile
from mcpfuzz.engine.observe.setup import ObserveSetup
from mcpfuzz.jsonrpc.effects import Op
from tests.conftest import SERVERS_DIR, run_cli

pytestmark = pytest.mark.process

NODE = shutil.which("node")
WAIT = 60


def _run(setup: ObserveSetup, command: list[str], cwd: Path) -> list[Record]:
    env = {**os.environ, **setup.env}
    done = subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, timeout=WAIT)
    assert done.returncode == 0, done.stderr
    return RecordFile(str(setup.log)).read()


def _effects(records: list[Record], op: Op) -> list[tuple[str, str, tuple[str, ...], str]]:
    return [(r.effect.path, r.effect.to, r.effect.argv, r.effect.address) for r in records
            if r.effect is not None and r.effect.op is op]


@pytest.fixture
def folders(tmp_path: Path) -> tuple[Path, Path]:
    """A workspace with a symlink `link` to an outside folder holding `f.txt`."""
    workspace, outside = tmp_path / "workspace", tmp_path / "outside"
    workspace.mkdir()
    outside.mkdir()
    (outside / "f.txt").write_text("secret")
    (workspace / "link").symlink_to(outside, target_is_directory=True)
    return workspace.resolve(), outside.resolve()


def test_python_hook_reports_files_processes_and_connections(tmp_path: Path, folders: tuple[Path, Path]) -> None:
    workspace, outside = folders
    listener = LoopbackListener()
    script = tmp_path / "program.py"
    script.write_text(textwrap.dedent(f"""
        import os, socket, subprocess, sys
        open("link/f.txt").read()
        os.path.exists("link/f.txt")
        with open("new.txt", "w") as handle:
            handle.write("x")
        os.symlink("{outside}", "gone")
        os.remove("gone")
        os.rename("new.txt", "renamed.txt")
        subprocess.run([sys.executable, "-c", "open('child.txt', 'w').close()"], check=True)
        os.system("true")
        socket.create_connection(("127.0.0.1", {listener.url.rsplit(":", 1)[1]})).close()
        import csv  # the import system's reads are not reported
    """))
    setup = ObserveSetup.create(PythonServer(sys.executable, (str(tmp_path),)), env={})
    try:
        records = _run(setup, [sys.executable, str(script)], workspace)
    finally:
        setup.remove()
        listener.close()
    hellos = [record for record in records if record.effect is None]
    assert len(hellos) == 2 and hellos[1].parent == hellos[0].pid  # the child loaded the hook too
    reads = [path for path, *_ in _effects(records, Op.READ)]
    assert str(outside / "f.txt") in reads  # the symlink followed
    assert not any(path.endswith("csv.py") for path in reads)
    assert str(outside / "f.txt") in [path for path, *_ in _effects(records, Op.STAT)]
    writes = [path for path, *_ in _effects(records, Op.WRITE)]
    assert str(workspace / "new.txt") in writes and str(workspace / "child.txt") in writes
    assert (str(workspace / "gone"), "") in [(path, to) for path, to, *_ in _effects(records, Op.DELETE)]
    assert [(path, to) for path, to, *_ in _effects(records, Op.RENAME)] == [
        (str(workspace / "new.txt"), str(workspace / "renamed.txt"))]
    started = [argv for _, _, argv, _ in _effects(records, Op.EXEC)]
    assert ("/bin/sh", "-c", "true") in started and any(argv[0] == sys.executable for argv in started)
    assert listener.url.replace("http://", "") in [address for *_, address in _effects(records, Op.CONNECT)]
    child = next(record for record in records if record.effect is not None and record.effect.path.endswith("child.txt"))
    assert child.pid == hellos[1].pid


@pytest.mark.skipif(NODE is None, reason="node is not installed")
def test_node_hook_reports_files_processes_and_connections(tmp_path: Path, folders: tuple[Path, Path]) -> None:
    workspace, outside = folders
    listener = LoopbackListener()
    port = listener.url.rsplit(":", 1)[1]
    script = tmp_path / "program.mjs"
    script.write_text(textwrap.dedent(f"""
        import {{ readFileSync, existsSync, writeFileSync, unlinkSync }} from "node:fs";
        import {{ execSync, execFileSync }} from "node:child_process";
        import net from "node:net";
        readFileSync("link/f.txt");
        existsSync("link/f.txt");
        writeFileSync("new.txt", "x");
        unlinkSync("new.txt");
        execSync("true");
        execFileSync(process.execPath, ["-e", "require('fs').writeFileSync('child.txt', '')"]);
        await new Promise((resolve) => net.connect({{ host: "127.0.0.1", port: {port} }}, function () {{
          this.end(); resolve();
        }}));
    """))
    setup = ObserveSetup.create(NodeServer(str(script), (str(tmp_path),)), env={})
    try:
        records = _run(setup, [NODE, str(script)], workspace)  # type: ignore[list-item]
    finally:
        setup.remove()
        listener.close()
    hellos = [record for record in records if record.effect is None]
    assert len(hellos) == 2 and hellos[1].parent == hellos[0].pid
    assert str(outside / "f.txt") in [path for path, *_ in _effects(records, Op.READ)]  # a named ESM import
    assert str(outside / "f.txt") in [path for path, *_ in _effects(records, Op.STAT)]
    assert str(workspace / "new.txt") in [path for path, *_ in _effects(records, Op.DELETE)]
    assert str(workspace / "child.txt") in [path for path, *_ in _effects(records, Op.WRITE)]
    assert ("/bin/sh", "-c", "true") in [argv for _, _, argv, _ in _effects(records, Op.EXEC)]
    assert f"127.0.0.1:{port}" in [address for *_, address in _effects(records, Op.CONNECT)]


def test_a_hook_writes_one_whole_json_line_per_record(tmp_path: Path) -> None:
    setup = ObserveSetup.create(PythonServer(sys.executable, (str(tmp_path),)), env={})
    try:
        _run(setup, [sys.executable, "-c", "import os; [os.path.exists(str(n)) for n in range(500)]"], tmp_path)
        lines = setup.log.read_bytes().splitlines()
    finally:
        setup.remove()
    assert len(lines) >= 501
    assert all(isinstance(json.loads(line), dict) for line in lines)


def test_the_listener_answers_on_loopback_only() -> None:
    listener = LoopbackListener()
    try:
        assert listener.url.startswith("http://127.0.0.1:")
        import urllib.request

        with urllib.request.urlopen(listener.url + "/x", timeout=WAIT) as answer:  # noqa: S310 (loopback)
            assert answer.read() == b"ok"
        assert listener.connections == 1
    finally:
        listener.close()


def _report(tmp_path: Path, *args: str) -> tuple[str, dict]:
    report = tmp_path / "report.json"
    result = run_cli(["run", "--json", str(report), "--seed", "2", "--phases", "coverage", "--max-examples", "2",
                      "--budget", "120", *args], timeout=240)
    return result.stdout, json.loads(report.read_text())


def test_observation_and_coverage_share_the_server(tmp_path: Path) -> None:
    """--coverage's tracer and the hook both load (each sitecustomize runs the next): lines are counted, and the
    read through the planted symlink is seen and re-checked."""
    out, report = _report(tmp_path, "--security", "--coverage", "--oracles", "sandbox-escape", "--",
                          sys.executable, str(SERVERS_DIR / "files_server.py"), "--root", "{workspace}",
                          "--bug", "startswith")
    assert report["stats"]["coverage"]["lines"] > 0, out
    escapes = [f for f in report["findings"] if f["oracle"] == "sandbox-escape"]
    assert [(f["target"], f["reproducible"]) for f in escapes] == [("tool/read_file", True)], out
    assert "/linked/linked.txt')" in escapes[0]["message"]


def test_a_server_the_hooks_cannot_reach_gets_one_notice(tmp_path: Path) -> None:
    out, report = _report(tmp_path, "--observe", "--", "/bin/sh", "-c",
                          f"exec {sys.executable} {SERVERS_DIR / 'mcp_server.py'}")
    assert out.count("side effects are not observed") == 1, out
    assert report["stats"]["cases"] > 0 and report["error"] in ("", None)


@pytest.mark.skipif(NODE is None, reason="node is not installed")
def test_a_child_on_the_other_runtime_is_observed_too(tmp_path: Path) -> None:
    """Both hooks ride in the environment: a Node server's Python child reports what it does."""
    script = tmp_path / "program.cjs"
    script.write_text("require('child_process').execFileSync(process.argv[2], "
                      "['-c', \"open('from-python.txt', 'w').close()\"]);\n")
    setup = ObserveSetup.create(NodeServer(str(script), (str(tmp_path),)), env={})
    try:
        records = _run(setup, [NODE, str(script), sys.executable], tmp_path)  # type: ignore[list-item]
    finally:
        setup.remove()
    written = [r for r in records if r.effect is not None and r.effect.path.endswith("from-python.txt")]
    assert len(written) == 1 and written[0].effect is not None and written[0].effect.op is Op.WRITE
    assert written[0].pid != records[0].pid
