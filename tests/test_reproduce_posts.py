"""curl reproductions of cases POSTed line by line: in order (a cancel behind its request) or all at once."""

from __future__ import annotations

import json
import shutil
import subprocess

import pytest

from mcpfuzz.engine.events import Finding
from mcpfuzz.jsonrpc.expectation import Expectation
from mcpfuzz.jsonrpc.frame import Case, Posting
from mcpfuzz.oracles.base import Severity
from mcpfuzz.report.json_report import finding_json
from mcpfuzz.report.reproduce import ALIVE_ID, finding_reproduction
from mcpfuzz.transport.http_target import HttpTarget
from tests.engine_runs import run_engine
from tests.http_servers import start_http_server

pytestmark = pytest.mark.slow

URL = HttpTarget("http://127.0.0.1:8000/mcp")
INITIALIZE = b'{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25"}}'
REQUEST = b'{"jsonrpc":"2.0","id":7,"method":"tools/list","params":{"_meta":{"progressToken":"p"}}}'
CANCEL = b'{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":7}}'
PROBE = b'{"jsonrpc":"2.0","id":8,"method":"ping"}'
LINES = (REQUEST, CANCEL, PROBE)


def finding_of(posts: Posting) -> Finding:
    """A finding by hand on a legacy session: the handshake, then the case's three lines POSTed as `posts` says."""
    case = Case(id="c", family="cancel", title="t", data=b"\n".join(LINES), expect=Expectation("cancel-respected"),
                posts=posts)
    return Finding(oracle="cancel-respected", severity=Severity.LOW, title="t", message="m", target=case.target,
                   case_title="t", expected="e", frames=(INITIALIZE, case.data), received=(), key="k", case=case)


def curl_lines(command: str) -> list[str]:
    """The lines of a reproduction that run curl."""
    return [line for line in command.splitlines() if "curl " in line]


def assert_valid_shell(command: str) -> None:
    """bash parses the reproduction."""
    checked = subprocess.run(["bash", "-n", "-c", command], capture_output=True, text=True, check=False)
    assert checked.returncode == 0, checked.stderr


def test_a_case_posted_in_order_is_one_curl_per_line_the_earlier_ones_left_open() -> None:
    command, notes = finding_reproduction(URL, finding_of(Posting.IN_ORDER))
    assert_valid_shell(command)
    curls = curl_lines(command)
    # initialize, the three lines in their order, the liveness request
    assert len(curls) == 5 and [line in curls[index + 1] for index, line in enumerate(
        frame.decode() for frame in LINES)] == [True, True, True]
    assert curls[1].endswith("&") and curls[2].endswith("&") and not curls[3].endswith("&")
    assert all('"Mcp-Session-Id: $SID"' in line and "MCP-Protocol-Version: 2025-11-25" in line for line in curls[1:])
    assert command.index(curls[3]) < command.index("\nwait\n") < command.index(curls[4])
    assert any("one by one" in note for note in notes)


def test_a_case_posted_at_once_is_one_background_curl_per_line_then_wait() -> None:
    command, notes = finding_reproduction(URL, finding_of(Posting.AT_ONCE))
    assert_valid_shell(command)
    curls = curl_lines(command)
    assert len(curls) == 5 and all(line.endswith("&") for line in curls[1:4]) and not curls[4].endswith("&")
    assert command.index(curls[3]) < command.index("\nwait\n") < command.index(curls[4])
    assert any("all at once" in note for note in notes)


def test_a_case_of_one_post_keeps_its_lines_in_one_body() -> None:
    command, _ = finding_reproduction(URL, finding_of(Posting.ONE))
    assert len(curl_lines(command)) == 3 and "wait" not in command


@pytest.mark.parametrize("posts", list(Posting))
def test_every_curl_gives_up_in_time(posts: Posting) -> None:
    """A hang's answer (or a response stream the server keeps open) must not hold the pasted line forever."""
    curls = curl_lines(finding_reproduction(URL, finding_of(posts))[0])
    assert curls and all(" --max-time 10 " in line for line in curls)


# -- printed for a real run, and run against a fresh server ------------------------------------------------

needs_curl = pytest.mark.skipif(shutil.which("curl") is None, reason="curl is not installed")
RUNS = 3


def reproduction_of(mode: str, version: str | None) -> tuple[str, str]:
    """The JSON report's reproduction of the one finding a run against the surface server in `mode` gives, and
    the URL it names. The run is made again (up to RUNS times) when it found nothing: a bug seen only while a
    request is still running (a cancel that lands in flight) may be missed by one run on a starved machine, and
    these tests are about the reproduction printed, not about how sure one run is to find it."""
    for _ in range(RUNS):
        with start_http_server("--surface", "--bug", mode) as url:
            finished = run_engine([], http=HttpTarget(url), protocol_version=version, phases=("probe", "catalogue"),
                                  timeout=10, budget=90)
        if finished.findings:
            break
    assert len(finished.findings) == 1
    return finding_json(finished.findings[0], HttpTarget(url))["reproducer"]["shell"], url


def run_against(command: str, old_url: str, *server_args: str) -> str:
    """What the reproduction prints against a fresh server started with `server_args`."""
    with start_http_server("--surface", *server_args) as url:
        done = subprocess.run(["bash", "-c", command.replace(old_url, url)], capture_output=True, text=True,
                              timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    return done.stdout


def answered(output: str, request_id: object) -> int:
    """How many answers to `request_id` the output holds (plain JSON or SSE `data:` lines; the background curls
    print as their answers come, so two may share a line)."""
    decoder, count, start = json.JSONDecoder(), 0, output.find('{"jsonrpc"')
    while start >= 0:
        message, end = decoder.raw_decode(output, start)
        count += message.get("id") == request_id and ("result" in message or "error" in message)
        start = output.find('{"jsonrpc"', end)
    return count


@needs_curl
@pytest.mark.parametrize("version", [None, "2025-11-25"], ids=["2026-07-28", "2025-11-25"])
def test_the_printed_cancel_reproduction_shows_the_cancelled_request_answered(version: str | None) -> None:
    """cancel-ignored answers the cancelled request once the probe is answered: the reproduction shows that
    answer; the same commands against a server that drops it (late-cancel) get none."""
    command, url = reproduction_of("cancel-ignored", version)
    assert_valid_shell(command)
    assert len(curl_lines(command)) == (4 if version is None else 6) + 1  # (the handshake,) 4 POSTs, liveness
    cancelled = json.loads(next(line for line in command.splitlines() if "progressToken" in line)
                           .split("--data-binary '")[1].split("'")[0])["id"]
    output = run_against(command, url, "--bug", "cancel-ignored")
    assert answered(output, cancelled) == 1 and answered(output, ALIVE_ID) == 1
    assert json.loads(output.strip().splitlines()[-1])["id"] == ALIVE_ID
    assert answered(run_against(command, url, "--bug", "late-cancel"), cancelled) == 0


@needs_curl
def test_the_printed_concurrency_reproduction_posts_every_request_at_once() -> None:
    """One background curl per request of the case, each answered once, and the server alive after them."""
    command, url = reproduction_of("swap-in-flight", None)
    assert_valid_shell(command)
    posted = [line for line in curl_lines(command) if line.endswith("&")]
    assert len(posted) == 8 and len(curl_lines(command)) == 9
    ids = [json.loads(line.split("--data-binary '")[1].split("'")[0])["id"] for line in posted]
    output = run_against(command, url, "--bug", "swap-in-flight")
    assert [answered(output, request_id) for request_id in ids] == [1] * 8
    assert json.loads(output.strip().splitlines()[-1])["id"] == ALIVE_ID
