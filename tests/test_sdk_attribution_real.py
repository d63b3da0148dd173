"""Real servers on the Go SDK, mcp-go, rmcp and the C# SDK (npm ships them as binaries): the SDK is detected from the
binary, and the findings that are the SDK's own answers are marked with its upstream thread.

The small servers are pinned in tests/sdk_servers/binaries/package.json (`npm ci` there installs them); the C# one,
Azure MCP (a 140 MB single-file bundle), is looked for in MCPFUZZ_AZMCP or tests/sdk_servers/binaries-large. A test
is skipped when its server is not installed. Each runs under `unshare -n` (no network), its files in a temporary
folder, protocol phases only (no tool is called).
"""

from __future__ import annotations

import contextlib
import json
import os
import shlex
import shutil
import subprocess
import sys
import threading
from fnmatch import fnmatchcase
from pathlib import Path
from types import SimpleNamespace

import pytest

from mcpfuzz.engine.attribution.detect import Sdk, detect_sdk
from mcpfuzz.engine.attribution.known import explain, known_behaviours
from mcpfuzz.engine.attribution.sdks import SdkInfo
from mcpfuzz.engine.events import RunFinished
from tests.engine_runs import run_engine

SDK_SERVERS = Path(__file__).resolve().parent / "sdk_servers"
BINARIES = Path(os.environ.get("MCPFUZZ_SDK_BINARIES") or SDK_SERVERS / "binaries" / "node_modules")
GO_SDK_SERVER = BINARIES / "mcp-cron-linux-amd64" / "bin" / "mcp-cron"  # modelcontextprotocol/go-sdk v1.4.1
# modelcontextprotocol/go-sdk v1.2.0, a server that exits when Server.Run returns (mcp-cron keeps running)
GO_SDK_EXITING_SERVER = BINARIES / "mcp-prometheus-linux-amd64" / "bin" / "mcp-prometheus-linux-amd64"
MCP_GO_SERVER = BINARIES / "mcp-time-linux-x64" / "bin" / "mcp-time"  # mark3labs/mcp-go v0.33.0
RMCP_SERVER = BINARIES / "@temporal-cortex" / "cortex-mcp-linux-x64" / "bin" / "cortex-mcp"  # rmcp 1.1.1
CSHARP_SERVER = Path(os.environ.get("MCPFUZZ_AZMCP") or SDK_SERVERS / "binaries-large" / "node_modules" / "@azure" /
                     "mcp-linux-x64" / "dist" / "azmcp")  # ModelContextProtocol 1.0.0, single-file bundle

pytestmark = [pytest.mark.slow, pytest.mark.sdk]


def _offline(binary: Path, *args: str) -> list[str]:
    """The server's command under `unshare -n` (no network at all), or a skip when it cannot run here."""
    if not binary.is_file():
        pytest.skip(f"{binary.name} is not installed (see this module's docstring)")
    unshare = shutil.which("unshare")
    if unshare is None or subprocess.run([unshare, "-n", "true"], capture_output=True).returncode != 0:
        pytest.skip("`unshare -n` is not available: a third-party server runs here only without network")
    return [unshare, "-n", str(binary), *args]


def _run(command: list[str], timeout: float = 2) -> RunFinished:
    finished = run_engine(command, timeout=timeout, budget=120)
    assert not finished.error, finished.error
    return finished


@pytest.fixture(scope="module")
def go_sdk_server(tmp_path_factory: pytest.TempPathFactory) -> list[str]:
    folder = tmp_path_factory.mktemp("mcp-cron")  # its database, config and log
    return _offline(GO_SDK_SERVER, "-transport", "stdio", "-db-path", str(folder / "results.db"),
                    "-mcp-config-path", str(folder / "mcp.json"), "-log-file", str(folder / "cron.log"))


@pytest.fixture(scope="module")
def go_sdk_run(go_sdk_server: list[str]) -> RunFinished:
    # Each undecodable line ends its session for good (no answer ever comes): the wait for each is kept short.
    return _run(go_sdk_server, timeout=1)


@pytest.fixture(scope="module")
def go_sdk_exiting_run() -> RunFinished:
    return _run(_offline(GO_SDK_EXITING_SERVER, "--url", "http://127.0.0.1:9"))  # a closed port: no Prometheus


@pytest.fixture(scope="module")
def mcp_go_run() -> RunFinished:
    return _run(_offline(MCP_GO_SERVER))


@pytest.fixture(scope="module")
def rmcp_run() -> RunFinished:
    return _run(_offline(RMCP_SERVER))


@pytest.fixture(scope="module")
def csharp_run() -> RunFinished:
    return _run(_offline(CSHARP_SERVER, "server", "start"), timeout=5)  # a .NET host of 140 MB starts slowly


def _shown(finished: RunFinished) -> dict[str, list[str]]:
    """Row id -> the targets of the findings it marks (the grouped ones too). A row of an oracle whose failure was
    folded into another oracle's finding on the same frame (`also_judged`: one frame, one finding) counts as shown
    on that frame."""
    by_upstream = {(row.link, row.behaviour): row.id for row in known_behaviours()}
    shown: dict[str, list[str]] = {}
    for finding in finished.findings:
        if finding.upstream is not None:
            row = by_upstream[(finding.upstream.link, finding.upstream.behaviour)]
            shown.setdefault(row, []).extend((finding.target, *finding.also_on))
        for row in known_behaviours():
            if row.oracle in finding.also_judged and any(fnmatchcase(finding.target, p) for p in row.targets):
                shown.setdefault(row.id, []).append(finding.target)
    return shown


def _rows(sdk: Sdk, version: str, transport: str = "stdio") -> set[str]:
    """The rows of an SDK that hold for `version` over `transport` (a run over stdio shows no HTTP row, and the other
    way round; a row of later versions shows on none of these servers)."""
    return {row.id for row in known_behaviours() if row.covers(SdkInfo(sdk, version, "test"), transport)}


def test_the_go_sdk_is_read_from_the_binary_behind_unshare(go_sdk_server: list[str]) -> None:
    found = detect_sdk(go_sdk_server)
    assert found is not None and (found.sdk, found.version) == (Sdk.GO, "v1.4.1")


def _stack(finished: RunFinished) -> tuple[str, str]:
    assert finished.stack is not None
    assert "process " in finished.stack["evidence"]  # read from the running process, not only the command
    return finished.stack["name"], finished.stack["version"]


def test_every_go_sdk_row_shows_on_a_real_go_sdk_server(go_sdk_run: RunFinished) -> None:
    assert _stack(go_sdk_run) == ("Go SDK", "v1.4.1")
    shown = _shown(go_sdk_run)
    assert set(shown) - MUTATION_ONLY == _rows(Sdk.GO, "v1.4.1") - MUTATION_ONLY - GO_EXIT_ONLY
    assert {"parse/truncated", "envelope/number"} <= set(shown["go-stdio-ends-session-on-undecodable"])


def _answer_to_last(command: list[str], frames: list[dict]) -> str:
    """The line the server answers the last frame with (its id), read as it comes: stdin stays open till then,
    as a server may end on end of input before it answers."""
    return _lines_until_last_answered(command, frames)[-1]


def _lines_until_last_answered(command: list[str], frames: list[dict]) -> list[str]:
    """Every line the server wrote up to its answer to the last frame (the answer last)."""
    wanted, lines = frames[-1]["id"], []
    with subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                          text=True) as process:
        assert process.stdin is not None and process.stdout is not None
        watchdog = threading.Timer(60, process.kill)  # a server that never answers ends the read loop
        watchdog.start()
        try:
            process.stdin.write("".join(json.dumps(frame) + "\n" for frame in frames))
            process.stdin.flush()
            for line in process.stdout:  # ends at the server's exit
                lines.append(line)
                with contextlib.suppress(ValueError):
                    if json.loads(line).get("id") == wanted:
                        return lines
        finally:
            watchdog.cancel()
            process.kill()
    raise AssertionError(f"no answer to id {wanted}")


# Rows whose frames only the fuzz phase's mutations send: checked by writing the frame to the real server.
MUTATION_ONLY = {"mcp-go-unparsable-params-invalid-request", "go-null-id-notification"}
# Rows a server shows only when it exits as Server.Run returns (mcp-cron logs the error and keeps running).
GO_EXIT_ONLY = {"go-stdio-exits-on-undecodable"}
HANDSHAKE = [{"jsonrpc": "2.0", "id": 1, "method": "initialize",
              "params": {"protocolVersion": "2025-03-26", "capabilities": {},
                         "clientInfo": {"name": "t", "version": "1"}}},
             {"jsonrpc": "2.0", "method": "notifications/initialized"}]


def test_every_mcp_go_row_shows_on_a_real_mcp_go_server(mcp_go_run: RunFinished) -> None:
    assert detect_sdk(_offline(MCP_GO_SERVER)) is not None
    assert _stack(mcp_go_run) == ("mcp-go", "v0.33.0")
    assert set(_shown(mcp_go_run)) == _rows(Sdk.MCP_GO, "v0.33.0") - MUTATION_ONLY


def test_the_go_sdk_serving_id_null_as_a_notification_is_its_own_row(go_sdk_server: list[str]) -> None:
    """A ping with id null goes unanswered, and the session goes on (the next ping is answered)."""
    frames = [*HANDSHAKE, {"jsonrpc": "2.0", "id": None, "method": "ping"},
              {"jsonrpc": "2.0", "id": 3, "method": "ping"}]
    lines = _lines_until_last_answered(go_sdk_server, frames)
    replies = [json.loads(line) for line in lines if line.startswith("{")]
    assert [reply.get("id") for reply in replies if "result" in reply or "error" in reply] == [1, 3]
    found = detect_sdk(go_sdk_server)
    assert found is not None
    observed = SimpleNamespace(oracle="invalid-request", key="silent-low", target="id/null", received=("<no reply>",),
                               message="", stderr_tail="")
    known = explain(found, "stdio", observed)
    assert known is not None and known.id == "go-null-id-notification"


def test_mcp_gos_answer_to_params_of_the_wrong_type_is_its_own_row() -> None:
    """A tools/call whose name is an array (a mutation the fuzz phase sends): mcp-go answers -32600 "unparsable"."""
    command = _offline(MCP_GO_SERVER)
    frames = [{"jsonrpc": "2.0", "id": 1, "method": "initialize",
               "params": {"protocolVersion": "2025-03-26", "capabilities": {},
                          "clientInfo": {"name": "t", "version": "1"}}},
              {"jsonrpc": "2.0", "method": "notifications/initialized"},
              {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": [], "arguments": {}}}]
    answer = _answer_to_last(command, frames)
    found = detect_sdk(command)
    assert found is not None
    observed = SimpleNamespace(oracle="invalid-params", key="code:-32600", target="frames/envelope",
                               received=(answer,), message="", stderr_tail="")
    known = explain(found, "stdio", observed)
    assert known is not None and known.id == "mcp-go-unparsable-params-invalid-request", answer


def test_a_go_sdk_server_exiting_on_an_undecodable_line_is_the_sdks_and_no_other_crash(
        go_sdk_exiting_run: RunFinished) -> None:
    """mcp-prometheus returns Server.Run's error from main: each undecodable line ends the process, the decoder's
    words on stderr (`invalid character ...`, `invalid message version tag ...`); every such crash is the SDK's."""
    assert _stack(go_sdk_exiting_run) == ("Go SDK", "v1.2.0")
    crashes = [finding for finding in go_sdk_exiting_run.findings if finding.oracle == "no-crash"]
    assert crashes
    for finding in crashes:
        assert finding.upstream is not None, (finding.target, finding.message[-300:])
        assert "go-sdk/issues/1209" in finding.upstream.link
    assert "parse/truncated" in set(_shown(go_sdk_exiting_run)["go-stdio-exits-on-undecodable"])
    found = detect_sdk(_offline(GO_SDK_EXITING_SERVER))
    assert found is not None
    # The same exit after a tool call, or a panic on a parse frame, is the server's own.
    for target, stderr in (("tool/x", "Error: invalid character 'x' looking for beginning of value"),
                           ("parse/truncated", "panic: runtime error: index out of range [3] with length 3")):
        crash = SimpleNamespace(oracle="no-crash", key="crash:x", target=target, received=("<exited>",),
                                message=f"the server exited with status 1 after this frame\nstderr tail:\n{stderr}",
                                stderr_tail=stderr)
        assert explain(found, "stdio", crash) is None, target


def test_every_rmcp_row_shows_on_a_real_rmcp_server(rmcp_run: RunFinished) -> None:
    found = detect_sdk(_offline(RMCP_SERVER))
    assert found is not None and (found.sdk, found.version) == (Sdk.RUST, "1.1.1")
    assert _stack(rmcp_run) == ("Rust SDK (rmcp)", "1.1.1")
    assert set(_shown(rmcp_run)) == _rows(Sdk.RUST, "1.1.1")


def test_every_csharp_row_shows_on_a_real_csharp_server(csharp_run: RunFinished) -> None:
    found = detect_sdk(_offline(CSHARP_SERVER, "server", "start"))
    assert found is not None and (found.sdk, found.version) == (Sdk.CSHARP, "1.0.0")
    assert _stack(csharp_run) == ("C# SDK", "1.0.0")
    assert set(_shown(csharp_run)) == _rows(Sdk.CSHARP, "1.0.0")


SANDBOX = ("unshare", "--net", "--pid", "--fork", "--kill-child", "--mount-proc")


def test_every_go_sdk_http_row_shows_on_a_real_go_sdk_server_over_http(tmp_path: Path) -> None:
    """mcp-cron over streamable HTTP: mcpfuzz and the server run together in a namespace whose only network is
    loopback, mcpfuzz launching it on a port of its own; the JSON report names the stack and marks its rows."""
    if not GO_SDK_SERVER.is_file():
        pytest.skip(f"{GO_SDK_SERVER.name} is not installed (see this module's docstring)")
    if shutil.which("unshare") is None or subprocess.run([*SANDBOX, "sh", "-c", "ip link set lo up"],
                                                         capture_output=True).returncode != 0:
        pytest.skip("no network namespace with a loopback here (unshare and ip, as root)")
    launch = shlex.join([str(GO_SDK_SERVER), "-transport", "http", "-address", "127.0.0.1", "-port", "{port}",
                         "-db-path", str(tmp_path / "results.db"), "-mcp-config-path", str(tmp_path / "mcp.json"),
                         "-log-file", str(tmp_path / "cron.log")])
    report = tmp_path / "report.json"
    run = [*SANDBOX, "sh", "-c", 'ip link set lo up && exec "$@"', "sh", sys.executable, "-m", "mcpfuzz", "run",
           "http://127.0.0.1:{port}/mcp", "--launch", launch, "--phases", "catalogue,lifecycle", "--budget", "180",
           "--timeout", "2", "--seed", "1", "--json", str(report), "--corpus", str(tmp_path / "corpus")]
    done = subprocess.run(run, cwd=tmp_path, capture_output=True, text=True, timeout=600)
    assert report.is_file(), done.stdout[-2000:] + done.stderr[-2000:]
    data = json.loads(report.read_text())
    assert (data["stack"]["name"], data["stack"]["version"]) == ("Go SDK", "v1.4.1")
    by_upstream = {(row.link, row.behaviour): row.id for row in known_behaviours()}
    shown = {by_upstream[(f["upstream"]["link"], f["upstream"]["behaviour"])] for f in data["findings"]
             if f["upstream"]}
    # A request with an empty method is answered like one without any (202): one finding, led by the first.
    http_rows = {row.id for row in known_behaviours() if row.sdk is Sdk.GO and row.transport == "http"}
    assert http_rows - {"go-http-empty-method-accepted"} <= shown, data["findings"]
    assert "go-unknown-log-level-accepted" in shown
