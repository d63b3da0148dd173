"""`{port}` in the URL and --launch: mcpfuzz picks a free port for every server it starts."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from mcpfuzz.transport.http_target import HttpTarget
from tests.conftest import kill_leftovers, leftover_processes, private_copy, run_cli
from tests.http_servers import HTTP_SERVER, HTTP_SERVER_IMPORTS

pytestmark = pytest.mark.slow

URL = "http://127.0.0.1:{port}/mcp"


def launched_copy(folder: Path) -> Path:
    """A private copy of the HTTP test server (its path marks this test's processes only)."""
    return private_copy(HTTP_SERVER, folder, imports=HTTP_SERVER_IMPORTS)


def test_the_placeholder_becomes_one_free_port_in_both_places() -> None:
    target = HttpTarget(URL, launch=("python", "server.py", "--port={port}"))
    bound = target.on_free_port()
    port = bound.url.removeprefix("http://127.0.0.1:").removesuffix("/mcp")
    assert port.isdigit() and 1024 <= int(port) <= 65535
    assert bound.launch == ("python", "server.py", f"--port={port}")
    assert target.on_free_port().url != URL
    plain = HttpTarget("http://127.0.0.1:8000/mcp", launch=("python", "server.py"))
    assert plain.on_free_port() is plain


def test_run_and_replay_each_start_the_server_on_a_port_of_their_own(tmp_path: Path) -> None:
    server = launched_copy(tmp_path)
    launch = f"{sys.executable} {server} --port {{port}} --bug no-origin-check"
    try:
        result = run_cli(["run", URL, "--launch", launch, "--phases", "catalogue,lifecycle", "--budget", "40",
                          "--json", "report.json"], cwd=tmp_path, timeout=90)
        assert result.returncode == 1, result.stdout + result.stderr
        report = json.loads((tmp_path / "report.json").read_text())
        assert [f["oracle"] for f in report["findings"]] == ["origin-check"]
        # The reproduction keeps the placeholder and says how to fill it in.
        assert "with a free port in place of {port}" in result.stdout
        [saved] = (tmp_path / "corpus").glob("*origin-check*.json")
        recorded = json.loads(saved.read_text())["server"]
        assert recorded["url"] == URL and "{port}" in recorded["launch"]
        # The transcript says {port}: replay picks a fresh port and starts the buggy server there.
        replayed = run_cli(["replay", str(saved)], cwd=tmp_path, timeout=60)
        assert replayed.returncode == 1 and "FAILED" in replayed.stdout, replayed.stdout + replayed.stderr
    finally:
        kill_leftovers(str(server))
    assert leftover_processes(str(server)) == []


def test_the_placeholder_in_an_env_value_reaches_the_launched_server(tmp_path: Path) -> None:
    """A server that reads its port from the environment: `{port}` in the URL and in --env only."""
    server = launched_copy(tmp_path)
    launch = f"sh -c 'exec {sys.executable} {server} --port \"$SERVER_PORT\"'"
    try:
        result = run_cli(["run", URL, "--launch", launch, "--env", "SERVER_PORT={port}", "--phases",
                          "catalogue,coverage", "--budget", "30", "--json", "report.json"], cwd=tmp_path, timeout=90)
        assert result.returncode == 0, result.stdout + result.stderr
        report = json.loads((tmp_path / "report.json").read_text())
        assert report["findings"] == [] and not report.get("untested"), report.get("untested")
        assert report["stats"]["cases"] > 0
    finally:
        kill_leftovers(str(server))
    assert leftover_processes(str(server)) == []


def test_launch_env_fills_in_the_chosen_port() -> None:
    target = HttpTarget(URL, launch=("server",))
    assert target.launch_env({"PORT": "{port}"}) == {"PORT": "{port}"}  # no port chosen yet
    bound = target.on_free_port()
    assert bound.launch_env({"PORT": "{port}", "URL": "http://h:{port}/x", "K": "v"}) == {
        "PORT": bound.port, "URL": f"http://h:{bound.port}/x", "K": "v"}
    assert bound.url == f"http://127.0.0.1:{bound.port}/mcp"
    assert bound.launch_env(None) is None


def test_soak_workers_with_launch_each_start_their_own_server(tmp_path: Path) -> None:
    server = launched_copy(tmp_path)
    launch = f"{sys.executable} {server} --port {{port}}"
    try:
        # A slice each, however long the servers take to start (the duration only bounds the soak).
        result = run_cli(["soak", URL, "--launch", launch, "--workers", "2", "--duration", "120", "--max-slices", "1",
                          "--slice", "2", "--phases", "coverage,fuzz", "--seed", "3", "--json", "report.json"],
                         cwd=tmp_path, timeout=240)
        assert result.returncode == 0, result.stdout + result.stderr
        report = json.loads((tmp_path / "report.json").read_text())
        assert report["findings"] == []
        workers = report["stats"]["soak"]["per_worker"]
        # Had they shared a port, the second server could not bind it and its worker would call nothing.
        assert [w["worker"] for w in workers] == [0, 1] and all(w["cases"] > 0 for w in workers), workers
    finally:
        kill_leftovers(str(server))
    assert leftover_processes(str(server)) == []


@pytest.mark.parametrize(("args", "expected"), [
    ([URL], "only a server mcpfuzz starts can be given a port"),
    ([URL, "--launch", "python server.py --port 8000"], "{port} is in the URL but not in --launch"),
    (["http://127.0.0.1:8000/mcp", "--launch", "python server.py --port {port}"],
     "{port} is in --launch but not in the URL"),
    (["http://127.0.0.1:8000/mcp", "--launch", "python server.py", "--env", "PORT={port}"],
     "{port} is in --env but not in the URL"),
])
def test_a_placeholder_on_one_side_only_is_refused_with_a_tip(tmp_path: Path, args: list[str], expected: str) -> None:
    result = run_cli(["run", *args, "--budget", "5"], cwd=tmp_path)
    assert result.returncode == 2, result.stdout + result.stderr
    assert expected in result.stderr and "tip:" in result.stderr
    assert "Traceback" not in result.stderr


def test_soak_workers_with_a_fixed_launch_port_are_still_refused(tmp_path: Path) -> None:
    result = run_cli(["soak", "http://127.0.0.1:9/mcp", "--launch", "python s.py", "--workers", "2"], cwd=tmp_path)
    assert result.returncode == 2 and "same port" in result.stderr and "{port}" in result.stderr
