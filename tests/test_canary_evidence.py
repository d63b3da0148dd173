"""--security evidence that survives a re-check: a canary counts only when read from where it was planted, and a
finding is reproducible only when its case alone fails again on a fresh server in a newly planted workspace.

The filesystem test server (tests/servers/files_server.py) is confined correctly unless `--bug startswith` weakens
its read_file; its listing of the workspace quotes any name created there, canary tokens included.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcpfuzz.strategies.payloads.canaries import Place, canary_token

from mcpfuzz.engine.coverage.launch import PythonServer
from mcpfuzz.engine.observe.records import RecordFile
from mcpfuzz.engine.observe.setup import ObserveSetup
from mcpfuzz.engine.security.canary_watch import CanaryWatch
from mcpfuzz.engine.security.planted_run import run_planted
from mcpfuzz.engine.security.workspace import SecurityWorkspace
from mcpfuzz.engine.session.session import Session, SessionOptions
from mcpfuzz.jsonrpc.exchange import Exchange
from mcpfuzz.jsonrpc.expectation import Expectation
from mcpfuzz.jsonrpc.frame import Case
from mcpfuzz.jsonrpc.oracle_ids import OracleId
from mcpfuzz.oracles.canaries import sandbox_escape
from mcpfuzz.transport.stdio_target import StdioTarget
from tests.conftest import SERVERS_DIR
from tests.test_sandbox_escape import report_of

pytestmark = pytest.mark.slow

FILES = (sys.executable, str(SERVERS_DIR / "files_server.py"), "--root", "{workspace}")
OPTIONS = SessionOptions(timeout=10.0, startup_timeout=30.0)
DEADLINE = 120.0  # seconds a re-check may take at most (a generous bound, never asserted on)


def call(rid: int, tool: str, arguments: dict[str, Any]) -> Case:
    """A tools/call of the files server, judged by sandbox-escape."""
    data = json.dumps({"jsonrpc": "2.0", "id": rid, "method": "tools/call",
                       "params": {"name": tool, "arguments": arguments}}).encode()
    return Case(f"{tool}-{rid}", "test", tool, data, Expectation(
        judge=OracleId.SANDBOX_ESCAPE, id=rid, result_ok=True, error_ok=True, well_formed=True, method="tools/call"))


def report_text(finding: dict) -> str:
    """A finding of the JSON report as text (what it received included)."""
    return json.dumps(finding)


def answer_text(exchange: Exchange) -> str:
    """Every answer of the exchange, as text."""
    return b"".join(arrival.incoming.raw for arrival in exchange.arrivals).decode()


def test_a_listing_of_a_name_the_run_created_is_no_escape() -> None:
    """The fuzzer's own folder named by the sibling canary's token, listed: the answer holds the token, but it was
    read from a name inside the workspace, not from the file outside it."""
    workspace = SecurityWorkspace.create()
    try:
        token = canary_token(Place.SIBLING, workspace.layout.nonce)
        watch = CanaryWatch(workspace.layout.hits, workspace.folder)

        async def scenario() -> tuple[Exchange, Exchange]:
            async with Session(workspace.place(StdioTarget(FILES)), OPTIONS) as session:
                created = await session.run_case(call(1, "create_directory", {"path": token}))
                watch.look(created)
                return created, await session.run_case(call(2, "list_directory", {"path": "."}))

        created, listed = anyio.run(scenario)
        assert "created" in answer_text(created) and token in answer_text(listed)
        assert (Path(workspace.folder) / token).is_dir()
        watch.look(listed)
        assert token in listed.canaries_echoed and list(sandbox_escape(listed)) == []
        # A watch that never saw the frame that made the folder (a later run, a replay in this workspace) still
        # finds the token in a name inside the workspace.
        unaware = CanaryWatch(workspace.layout.hits, workspace.folder)
        unaware.look(listed)
        assert listed.canaries_echoed == (token,) and list(sandbox_escape(listed)) == []
        listed.canaries_echoed = ()  # judged as if the token had come from outside, it would be an escape
        assert [failure.key for failure in sandbox_escape(listed)] == [Place.SIBLING.value]
    finally:
        workspace.remove()


def test_a_re_check_plants_a_fresh_workspace_and_sends_the_case_alone(tmp_path: Path) -> None:
    """The case that listed the polluted workspace, re-run by run_planted: a new workspace, a new process, nothing
    of the run's files, so it does not fail again; a real escape (read_file through the startswith bug) does."""
    roots = tmp_path / "roots.log"
    target = StdioTarget((*FILES, "--roots-log", str(roots), "--bug", "startswith"))
    run = SecurityWorkspace.create()
    try:
        token = canary_token(Place.SIBLING, run.layout.nonce)
        (Path(run.folder) / token).mkdir()  # what the fuzzer left in the run's workspace
        escape = call(3, "read_file", {"path": "../workspace-private/secret.txt"})

        async def rechecks() -> tuple[Exchange | None, Exchange | None]:
            until = time.monotonic() + DEADLINE
            listed = await run_planted(target, OPTIONS, call(2, "list_directory", {"path": "."}), run.layout,
                                       era=None, version=None, until=until)
            read = await run_planted(target, OPTIONS, escape, run.layout, era=None, version=None, until=until)
            return listed, read

        listed, read = anyio.run(rechecks)
    finally:
        run.remove()
    assert listed is not None and read is not None
    assert "mcpfuzz-canary" not in answer_text(listed)  # a fresh workspace holds only what was planted
    assert list(sandbox_escape(listed)) == []
    assert [failure.key for failure in sandbox_escape(read)] == [Place.SIBLING.value]
    started = roots.read_text().split()
    assert len(started) == 2 and len(set(started)) == 2 and run.folder not in started
    assert not any(Path(root).exists() for root in started)  # each re-check's workspace is removed


def test_a_security_run_reports_the_real_escape_only_and_re_checks_it_afresh(tmp_path: Path) -> None:
    """The buggy files server under --security: the one escape is read_file's, reproducible; listings of whatever
    the run created are never findings; each re-check started a server in a workspace of its own.

    Before values holding a canary were kept out of the dictionary and the stateful pool, this run (seed 3) sent the
    sibling's token back as a folder name, a path and a file's content, and reported a reproducible escape on
    list_directory too."""
    roots, frames = tmp_path / "roots.log", tmp_path / "frames.log"
    # Counted examples end the run (over a thousand tool calls), the budget only bounds it.
    status, out, report = report_of(tmp_path, "--security", "--phases", "coverage,fuzz,stateful", "--budget", "120",
                                    "--max-examples", "40", "--log-frames", str(frames),
                                    "--", *FILES, "--roots-log", str(roots), "--bug", "startswith")
    escapes = [f for f in report["findings"] if f["oracle"] == "sandbox-escape"]
    assert status == 1, out
    assert [(f["target"], f["reproducible"]) for f in escapes] == [("tool/read_file", True)], out
    # The escape's answer held the sibling's token; no frame of the run ever sent a token back.
    assert "mcpfuzz-canary-" in report_text(escapes[0])
    assert re.search(rb"mcpfuzz-canary-(sibling|parent|workspace)-", frames.read_bytes()) is None
    started = roots.read_text().split()
    assert len(set(started)) >= 2  # the run's workspace, then the re-check's
    assert not any(Path(root).exists() for root in started)


def test_a_workspace_nested_deeper_than_the_recursion_limit_is_removed(tmp_path: Path) -> None:
    """A server may nest folders a thousand deep in its workspace (create_directory of `a`, then `a/a`, ...): the
    workspace is still removed whole, and a link out of it is removed without touching what it points to."""
    outside = tmp_path / "kept.txt"
    outside.write_text("kept")
    workspace = SecurityWorkspace.create()
    folder = Path(workspace.folder)
    for _ in range(sys.getrecursionlimit() + 200):
        folder = folder / "a"
        folder.mkdir()
    (folder / "deep.txt").write_text("x")
    (Path(workspace.folder) / "link").symlink_to(tmp_path)
    workspace.remove()
    assert not Path(workspace.layout.root).exists() and not Path(workspace.layout.hits).exists()
    assert outside.read_text() == "kept"


def test_the_byte_code_python_writes_for_a_servers_imports_is_not_the_servers_doing(tmp_path: Path) -> None:
    """A server whose modules were never compiled: Python makes `__pycache__` beside them as it imports them (a
    folder outside the workspace) and writes the byte code there; neither is a side effect of any call."""
    code = tmp_path / "code"
    code.mkdir()
    (code / "helper.py").write_text("VALUE = 1\n")
    (code / "program.py").write_text("import helper\nprint(helper.VALUE)\n")
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    setup = ObserveSetup.create(PythonServer(sys.executable, (str(code / "program.py"),)), env={})
    try:
        env = {**os.environ, **setup.env}
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        done = subprocess.run([sys.executable, str(code / "program.py")], cwd=workspace, env=env,
                              capture_output=True, text=True, timeout=60)
        records = RecordFile(str(setup.log)).read()
    finally:
        setup.remove()
    assert done.returncode == 0, done.stderr
    assert (code / "__pycache__").is_dir()  # the byte code was written: the hook saw Python make it
    touched = [record.effect.path for record in records if record.effect is not None]
    assert not [path for path in touched if "__pycache__" in path], touched
