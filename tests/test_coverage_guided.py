"""--coverage: a tracer loaded into a Python server reports the lines its calls reach, and reports count them.

The tracer is real (a server process started with the environment mcpfuzz gives it, talked to over real pipes);
the runs are real `mcpfuzz run` processes. Nothing here depends on how fast the machine is: each assertion is about
what the server ran, never about when.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from mcpfuzz.strategies.arguments.call import POSITIVE, ArgumentCall
from mcpfuzz.strategies.arguments.covering import CoveringPool, covering_calls
from mcpfuzz.strategies.arguments.schema_values import ArgumentSchema

from mcpfuzz.engine.coverage.book import CoverageBook
from mcpfuzz.engine.coverage.launch import CoverageSetup, PythonServer, python_server
from tests.conftest import SERVERS_DIR, run_cli
from tests.http_servers import start_http_server

pytestmark = pytest.mark.slow

NESTED = SERVERS_DIR / "nested_conditions_server.py"
ANSWER_TIMEOUT = 60.0  # generous: a loaded machine starting Python


def _exchange(server: PythonServer, setup: CoverageSetup, frames: list[dict]) -> list[str]:
    """Send `frames` to a fresh server process with the tracer's environment; every line it wrote to stdout."""
    text = "".join(json.dumps(frame) + "\n" for frame in frames)
    process = subprocess.run([sys.executable, str(NESTED)], input=text, capture_output=True, text=True,
                             env={**_base_env(), **setup.env}, timeout=ANSWER_TIMEOUT)
    return process.stdout.splitlines()


def _base_env() -> dict[str, str]:
    return {name: value for name, value in os.environ.items() if name != "PYTHONPATH"}


def _call(number: int, arguments: dict) -> dict:
    return {"jsonrpc": "2.0", "id": number, "method": "tools/call", "params": {"name": "route", "arguments": arguments}}


HANDSHAKE = [{"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
    "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "test", "version": "0"}}},
    {"jsonrpc": "2.0", "method": "notifications/initialized"}]


def test_tracer_reports_the_lines_a_call_reaches_over_its_file() -> None:
    server = python_server([sys.executable, str(NESTED)])
    assert isinstance(server, PythonServer)
    assert server.roots == (str(SERVERS_DIR.resolve()),)
    setup = CoverageSetup.create(server, include_sdk=False, env={})
    try:
        book = CoverageBook(setup.log)
        shallow = _exchange(server, setup, [*HANDSHAKE, _call(1, {"a": 1, "b": "", "c": 0, "d": []})])
        book.settle()
        assert book.tracer in ("sys.monitoring", "settrace")
        reached = set(book.lines)
        assert reached and all(path.startswith(str(SERVERS_DIR.resolve())) for path, _ in reached)
        deeper = _exchange(server, setup, [*HANDSHAKE, _call(1, {"a": 7, "b": "12", "c": 5, "d": []})])
        new = book.after_call("tool/route")
        assert new >= 2  # `depth = 1`, `depth = 2` and the condition after them: no call had run them
        source = NESTED.read_text().splitlines()
        added = {source[number - 1].strip() for path, number in book.lines - reached if path == str(NESTED.resolve())}
        assert {"depth = 1", "depth = 2"} <= added
        stats = book.as_dict()
        assert stats["targets"]["tool/route"] + stats["target_branches"]["tool/route"] == new  # lines and branches
        # stdout is the protocol: nothing but the answers, whatever the tracer did.
        for lines in (shallow, deeper):
            assert [json.loads(line)["id"] for line in lines] == [0, 1]
    finally:
        setup.remove()
    assert not setup.folder.exists()


def test_pythonpath_of_the_server_is_kept_after_the_tracer(tmp_path: Path) -> None:
    server = PythonServer(sys.executable, (str(tmp_path),))
    setup = CoverageSetup.create(server, include_sdk=False, env={"PYTHONPATH": "/somewhere/else"})
    try:
        assert setup.env["PYTHONPATH"].split(":") == [str(setup.folder), "/somewhere/else"]
        assert (setup.folder / "sitecustomize.py").is_file()
    finally:
        setup.remove()


def test_commands_that_do_not_run_python_are_told_apart(tmp_path: Path) -> None:
    script = tmp_path / "server"
    script.write_text("#!/usr/bin/env python3\nfrom server_pkg.main import run\nrun()\n")
    script.chmod(0o755)
    shell = tmp_path / "start.sh"
    shell.write_text("#!/bin/sh\nexec python3 server.py\n")
    shell.chmod(0o755)
    assert isinstance(python_server([str(script)], str(tmp_path)), PythonServer)
    assert isinstance(python_server(["env", "A=1", sys.executable, "-m", "json.tool"]), PythonServer)
    assert "does not run on Python" in str(python_server([str(shell)]))
    assert "does not run on Python" in str(python_server(["sh", "-c", "true"]))


def test_run_reports_lines_reached_per_target(tmp_path: Path) -> None:
    report, page = tmp_path / "report.json", tmp_path / "report.html"
    result = run_cli(["run", "--coverage", "--json", str(report), "--html", str(page), "--seed", "3", "--phases",
                      "coverage", "--budget", "120", "--", sys.executable, str(NESTED)], timeout=240)
    data = json.loads(report.read_text())
    coverage = data["stats"]["coverage"]
    assert '<table class="coverage">' in page.read_text() and "<code>tool/route</code>" in page.read_text()
    assert coverage["tracer"] in ("sys.monitoring", "settrace")
    assert coverage["lines"] > 0 and coverage["files"] == 2  # the server and the module it builds on
    assert coverage["targets"]["tool/route"] > 0
    assert "coverage:" in result.stdout and "tool/route" in result.stdout
    # The tracer writes nothing to stdout: no finding about the server's output.
    assert data["findings"] == [], result.stdout
    assert result.returncode == 0, result.stdout


def test_a_server_that_does_not_run_python_gets_one_notice(tmp_path: Path) -> None:
    report = tmp_path / "report.json"
    result = run_cli(["run", "--coverage", "--json", str(report), "--seed", "3", "--phases", "coverage",
                      "--budget", "120", "--", "sh", "-c", f'exec "{sys.executable}" "{NESTED}"'], timeout=240)
    data = json.loads(report.read_text())
    assert result.stdout.count("--coverage is off: sh does not run on Python") == 1, result.stdout
    assert "coverage" not in data["stats"]
    assert data["stats"]["targets"]["tool/route"] > 0  # the run went on
    assert result.returncode == 0, result.stdout


SCHEMA = ArgumentSchema({"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "string"}},
                         "required": ["a", "b"], "additionalProperties": False})


def test_covering_draws_start_from_the_calls_that_reached_new_code() -> None:
    pool = CoveringPool()
    fuzz = SCHEMA.positive.map(lambda arguments: ArgumentCall(POSITIVE, arguments, "drawn"))
    pool.add(ArgumentCall(POSITIVE, {"a": 123456789, "b": "kept"}, "reached new code"))
    pool.add(ArgumentCall(POSITIVE, {"a": 123456789, "b": "kept"}, "the same arguments again"))
    assert len(pool.calls) == 1
    seen: list[ArgumentCall] = []

    @settings(max_examples=300, database=None)
    @given(covering_calls(SCHEMA, fuzz, pool))
    def draw(call: ArgumentCall) -> None:
        assert SCHEMA.is_valid(call.arguments)
        seen.append(call)

    draw()
    started = [call for call in seen if call.description.startswith("a call that reached new code")]
    assert started and any(call.arguments["a"] == 123456789 and call.arguments["b"] != "kept" for call in started)
    assert any(call.description == "drawn" for call in seen)


@given(st.lists(st.tuples(st.sampled_from(["a.py", "b.py"]), st.integers(1, 50))))
def test_the_book_counts_each_line_once(records: list[tuple[str, int]]) -> None:
    with tempfile.TemporaryDirectory() as folder:
        log = Path(folder) / "lines.tsv"
        log.write_text("#tracer\tsettrace\t1\n" + "".join(f"{number}\t{path}\n" for path, number in records))
        book = CoverageBook(log)
        assert book.after_call("tool/x") == len(set(records))  # no branch records: lines only
        assert book.after_call("tool/x") == 0
        assert book.tracer == "settrace"


def test_an_http_server_mcpfuzz_launches_is_traced(tmp_path: Path) -> None:
    launch = f"{sys.executable} {SERVERS_DIR / 'http_server.py'} --port {{port}}"
    report = tmp_path / "report.json"
    result = run_cli(["run", "--coverage", "--json", str(report), "--seed", "3", "--phases", "coverage",
                      "--budget", "120", "http://127.0.0.1:{port}/mcp", "--launch", launch], timeout=240, cwd=tmp_path)
    coverage = json.loads(report.read_text())["stats"].get("coverage")
    assert coverage is not None and coverage["lines"] > 0, result.stdout + result.stderr
    assert "--coverage is off" not in result.stdout


def test_a_url_mcpfuzz_does_not_start_gets_the_notice() -> None:
    with start_http_server() as url:
        result = run_cli(["run", "--coverage", "--phases", "coverage", "--budget", "60", url], timeout=180)
    assert result.stdout.count("--coverage is off: mcpfuzz does not start the server") == 1, result.stdout


def test_installed_packages_count_only_with_coverage_sdk(tmp_path: Path) -> None:
    script = tmp_path / "uses_a_package.py"
    script.write_text("import idna\n\nprint(idna.encode('example').decode())\n")
    counted: dict[bool, set[str]] = {}
    for include_sdk in (False, True):
        server = python_server([sys.executable, str(script)])
        assert isinstance(server, PythonServer)
        setup = CoverageSetup.create(server, include_sdk=include_sdk, env={})
        try:
            done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                                  env={**_base_env(), **setup.env}, timeout=ANSWER_TIMEOUT)
            assert done.stdout == "example\n"
            book = CoverageBook(setup.log)
            book.settle()
            counted[include_sdk] = {path for path, _ in book.lines}
        finally:
            setup.remove()
    assert counted[False] == {str(script.resolve())}
    assert str(script.resolve()) in counted[True]
    assert any("idna" in path for path in counted[True])
    assert not any(path.startswith(os.path.dirname(os.__file__) + os.sep) and "site-packages" not in path
                   for path in counted[True])  # never the standard library


def test_a_python_that_ignores_pythonpath_gets_the_notice(tmp_path: Path) -> None:
    report = tmp_path / "report.json"
    result = run_cli(["run", "--coverage", "--json", str(report), "--seed", "3", "--phases", "coverage",
                      "--budget", "120", "--", sys.executable, "-I", str(NESTED)], timeout=240)
    assert result.stdout.count("--coverage is off: the server did not load mcpfuzz's tracer") == 1, result.stdout
    data = json.loads(report.read_text())
    assert "coverage" not in data["stats"] and data["stats"]["targets"]["tool/route"] > 0
