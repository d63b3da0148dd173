"""--coverage through Python launchers: `uv run`, `uvx` / `uv tool run`, `pipx run` start a traced server.

The launchers are real (uv and pipx from the test environment, skipped when missing) and never reach the network:
`--offline`, a project without dependencies, and a wheel built by hand.
"""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest

from mcpfuzz.engine.coverage.launch import PythonServer, python_server
from tests.conftest import SERVERS_DIR, run_cli
from tests.wheel_tool import SCRIPT, build_wheel

pytestmark = pytest.mark.slow

RUN_TIMEOUT = 300.0  # generous: a loaded machine making a virtual environment


def _tool(name: str) -> str | None:
    """A launcher of the test environment (its bin folder may not be on PATH) or of the machine."""
    beside = Path(sys.executable).parent / name
    return str(beside) if beside.is_file() else shutil.which(name)


UV, UVX, PIPX = _tool("uv"), _tool("uvx"), _tool("pipx")


def test_what_each_launcher_starts_is_read_from_its_command(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "demo"\nversion = "0.1"\n')
    (tmp_path / "server.py").write_text("")
    run_python = python_server(["uv", "run", "--offline", "--with", "x", "python", "server.py"], str(tmp_path))
    assert run_python == PythonServer(str(tmp_path / ".venv" / "bin" / "python"), (str(tmp_path.resolve()),))
    run_script = python_server(["uv", "run", "--directory", str(tmp_path), "server.py"], "/")
    assert isinstance(run_script, PythonServer) and run_script.roots == (str(tmp_path.resolve()),)
    run_command = python_server(["uv", "run", "my-server", "--port", "1"], str(tmp_path))
    assert isinstance(run_command, PythonServer)
    assert run_command.roots == (str(tmp_path),) and run_command.entry == "my-server"
    for words in (["uvx", "--python", "3.11", "mcp-server-time@1.0"], ["uv", "tool", "run", "mcp-server-time"],
                  ["uvx", "--from", "./dist/x.whl", "mcp-server-time", "--flag"]):
        tool = python_server(words, str(tmp_path))
        assert isinstance(tool, PythonServer) and tool.entry == "mcp-server-time" and not tool.relay, words
    pipx = python_server(["env", "A=1", "pipx", "run", "--spec", "pkg==1", "mcp-server-time"], str(tmp_path))
    assert isinstance(pipx, PythonServer) and pipx.entry == "mcp-server-time" and pipx.relay
    assert "names no tool" in str(python_server(["uvx", "--offline"]))


def test_a_console_script_uv_wrote_runs_on_its_folders_python(tmp_path: Path) -> None:
    script = tmp_path / "bin" / "my-server"
    script.parent.mkdir()
    relaunch = "'''exec' \"$(dirname -- \"$(realpath -- \"$0\")\")\"/'python' \"$0\" \"$@\"\n' '''\n"
    script.write_text("#!/bin/sh\n" + relaunch + "import sys\nfrom my_server.main import run\nsys.exit(run())\n")
    script.chmod(0o755)
    server = python_server([str(script)], str(tmp_path))
    assert isinstance(server, PythonServer) and server.interpreter == str(script.parent.resolve() / "python")


def _coverage_run(command: list[str], tmp_path: Path, cwd: Path) -> tuple[dict, str]:
    report = tmp_path / "report.json"
    env = {"UV_CACHE_DIR": str(tmp_path / "uv-cache"), "PIPX_HOME": str(tmp_path / "pipx"), "UV_OFFLINE": "1"}
    result = run_cli(["run", "--coverage", "--json", str(report), "--seed", "3", "--phases", "coverage",
                      "--budget", "120", "--", *command], timeout=RUN_TIMEOUT, env=env, cwd=cwd)
    assert report.is_file(), result.stdout + result.stderr
    return json.loads(report.read_text())["stats"], result.stdout


@pytest.mark.skipif(UV is None, reason="uv is not installed")
def test_uv_run_in_a_project_is_traced(tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    (project / "pyproject.toml").write_text('[project]\nname = "demo"\nversion = "0.1"\nrequires-python = ">=3.8"\n'
                                            "dependencies = []\n")
    for name in ("nested_conditions_server.py", "mcp_server.py"):
        shutil.copy(SERVERS_DIR / name, project / name)
    stats, output = _coverage_run([str(UV), "run", "--offline", "python", "nested_conditions_server.py"], tmp_path,
                                  project)
    assert "--coverage is off" not in output, output
    assert stats["coverage"]["files"] == 2 and stats["coverage"]["targets"]["tool/route"] > 0, output


@pytest.mark.skipif(UVX is None, reason="uv is not installed")
def test_a_tool_uvx_installs_is_traced_in_its_own_environment(tmp_path: Path) -> None:
    wheel = build_wheel(tmp_path)
    stats, output = _coverage_run([str(UVX), "--offline", "--from", str(wheel), SCRIPT], tmp_path, tmp_path)
    assert "--coverage is off" not in output, output
    coverage = stats["coverage"]
    assert coverage["files"] == 3 and coverage["targets"]["tool/route"] > 0, output  # the package's 3 files


@pytest.mark.skipif(PIPX is None, reason="pipx is not installed")
def test_pipx_run_is_traced_though_it_clears_pythonpath(tmp_path: Path) -> None:
    wheel = build_wheel(tmp_path)
    stats, output = _coverage_run([str(PIPX), "run", "--pip-args=--no-index", "--spec", str(wheel), SCRIPT],
                                  tmp_path, tmp_path)
    assert "--coverage is off" not in output, output
    assert stats["coverage"]["files"] == 3 and stats["coverage"]["targets"]["tool/route"] > 0, output
