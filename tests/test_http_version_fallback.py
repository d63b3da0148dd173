"""Over streamable HTTP, a server that refuses mcpfuzz's preferred protocol version (as a stateful server on the Go
SDK does) is tested in the newest version it lists, as on stdio, and the refusal is said once, never a finding."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from mcpfuzz.engine.events import Event, Notice, ProbeDone
from mcpfuzz.engine.surface.version_fallback import VersionRefusal
from mcpfuzz.transport.http_headers import VERSION_HEADER, mcp_headers
from mcpfuzz.transport.http_target import HttpTarget
from tests.conftest import run_cli
from tests.engine_runs import run_engine
from tests.http_servers import HTTP_SERVER, start_http_server

pytestmark = pytest.mark.process

REFUSED_JSON = ("the server refused protocol version 2026-07-28 over HTTP (400, -32022); retrying with 2025-06-18, "
                "the newest it lists")
REFUSED_PLAIN = ("the server refused protocol version 2026-07-28 over HTTP (400); retrying with 2025-11-25, "
                 "the next older version mcpfuzz knows")
QUICK = ["--phases", "catalogue,lifecycle", "--budget", "60", "--json", "report.json"]


def _report(folder: Path) -> dict:
    return json.loads((folder / "report.json").read_text())


@pytest.mark.parametrize(("args", "notice"), [
    ((), REFUSED_JSON),  # 400 with -32022 and data.supported, as the Go SDK answers
    (("--plain-version-refusal",), REFUSED_PLAIN),  # a plain-text 400 that lists nothing mcpfuzz can read
])
def test_a_refused_version_is_retried_with_one_the_server_speaks(tmp_path: Path, args: tuple[str, ...],
                                                                  notice: str) -> None:
    with start_http_server("--max-version", "2025-06-18", *args) as url:
        result = run_cli(["run", url, *QUICK], cwd=tmp_path, timeout=120)
    output = result.stdout + result.stderr
    assert result.returncode == 0, output
    assert output.count(notice) == 1, output
    assert "protocol 2025-06-18 (legacy era)" in result.stdout
    report = _report(tmp_path)
    assert report["protocolVersion"] == "2025-06-18" and report["findings"] == []


def test_the_fallback_works_through_launch(tmp_path: Path) -> None:
    launch = f"{sys.executable} {HTTP_SERVER} --port {{port}} --max-version 2025-06-18"
    result = run_cli(["run", "http://127.0.0.1:{port}/mcp", "--launch", launch, *QUICK], cwd=tmp_path, timeout=120)
    output = result.stdout + result.stderr
    assert result.returncode == 0, output
    assert output.count(REFUSED_JSON) == 1, output
    assert _report(tmp_path)["protocolVersion"] == "2025-06-18"


def test_an_initialize_refused_for_its_version_steps_down_to_the_oldest_streamable_version() -> None:
    events: list[Event] = []
    with start_http_server("--max-version", "2025-03-26", "--plain-version-refusal",
                           "--bug", "refuse-initialize-version") as url:
        finished = run_engine([], http=HttpTarget(url), phases=("probe",), events=events)
    assert not finished.error, finished.error
    probed = next(event for event in events if isinstance(event, ProbeDone))
    assert (probed.era, probed.protocol_version) == ("legacy", "2025-03-26")
    steps = [event.message for event in events if isinstance(event, Notice) and "retrying with" in event.message]
    assert [step.split("retrying with ")[1].split(",")[0] for step in steps] == ["2025-11-25", "2025-06-18",
                                                                                "2025-03-26"]
    assert finished.findings == ()


def test_a_forced_version_is_not_retried(tmp_path: Path) -> None:
    with start_http_server("--max-version", "2025-06-18", "--bug", "refuse-initialize-version") as url:
        result = run_cli(["run", url, "--protocol-version", "2025-11-25", *QUICK], cwd=tmp_path, timeout=120)
    assert result.returncode == 2, result.stdout + result.stderr
    assert "initialize was refused" in result.stdout + result.stderr
    assert "retrying with" not in result.stdout + result.stderr


def test_the_next_version_is_the_newest_listed_below_the_refused_one_else_the_next_known() -> None:
    go_sdk = VersionRefusal("2026-07-28", 400, -32022, ("2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"))
    assert go_sdk.next_version() == "2025-11-25"
    assert VersionRefusal("2025-11-25", 400, -32022, ("2026-07-28", "2024-11-05")).next_version() == "2024-11-05"
    assert VersionRefusal("2026-07-28", 400, None, ()).next_version() == "2025-11-25"
    assert VersionRefusal("2025-06-18", 400, None, ()).next_version() == "2025-03-26"
    assert VersionRefusal("2025-03-26", 400, None, ()).next_version() is None  # streamable HTTP starts there


def test_initialize_never_carries_a_version_header() -> None:
    initialize = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-11-25"}}
    assert VERSION_HEADER not in mcp_headers(initialize, "2026-07-28")
    assert mcp_headers({"jsonrpc": "2.0", "id": 2, "method": "ping"}, "2025-11-25") == {VERSION_HEADER: "2025-11-25"}
