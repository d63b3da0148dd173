"""The coverage search's calls of read-only targets in pipelined windows (one write on stdio, POSTs in flight over
streamable HTTP): each bug found on exactly its call, as when every call runs alone, and the same seed sends the same
frames."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from mcpfuzz.engine.searches.caller import CALL_FIRST_ID
from mcpfuzz.engine.searches.frame_fuzz import FRAME_FIRST_ID
from mcpfuzz.engine.session.session import HARNESS_FIRST_ID
from mcpfuzz.transport.http_target import HttpTarget
from tests.conftest import SERVERS_DIR, run_cli
from tests.diffs import assert_same_lines
from tests.engine_runs import fixture_command, run_engine
from tests.http_servers import start_http_server

pytestmark = pytest.mark.process

READ_ONLY_TOOLS = SERVERS_DIR / "read_only_tools.py"  # tool_server.py with `search` annotated read-only
# bug of `search` -> (the only oracles that may fire, a text of the reproducing call), as tests/test_tool_bugs.py
EXPECTED: dict[str, tuple[set[str], str]] = {
    "crash-at-maximum": ({"no-crash"}, '"limit":10'),
    "hang-on-enum": ({"no-hang"}, '"sort":"date"'),
    "bad-structured": ({"output-schema"}, '"query":'),
}


@pytest.mark.parametrize("bug", sorted(EXPECTED))
def test_a_bug_in_a_window_is_found_on_its_own_call_as_when_run_alone(bug: str) -> None:
    oracles, text = EXPECTED[bug]
    finished = run_engine(fixture_command(bug, server=READ_ONLY_TOOLS), phases=("probe", "coverage"), budget=40,
                          timeout=1.0, call_timeout=4.0, seed=1)
    assert not finished.error, finished.error
    fired = {f.oracle for f in finished.findings}
    assert fired == oracles, [(f.oracle, f.message) for f in finished.findings]
    finding = next(f for f in finished.findings if f.oracle in oracles)
    assert finding.target == "tool/search"
    # The reproduction is the one call alone, never the window it was first sent in.
    calls = [frame for frame in finding.frames if b'"tools/call"' in frame]
    assert len(calls) == 1 and text in calls[0].decode("ascii"), finding.frames


def test_a_wrong_answer_seen_only_in_a_window_is_judged_from_its_call_alone(tmp_path: Path) -> None:
    """racy-count answers wrongly only while another call waits behind: its calls alone are right, so no finding."""
    fired = tmp_path / "fired"
    command = [*fixture_command("racy-count", server=READ_ONLY_TOOLS), "--fired", str(fired)]
    finished = run_engine(command, phases=("probe", "coverage"), budget=40, timeout=1.0, call_timeout=4.0, seed=1)
    assert not finished.error, finished.error
    assert fired.exists() and fired.read_text().count("racy") >= 1  # a window did get a wrong answer
    assert [(f.oracle, f.message) for f in finished.findings] == []


def _frames(log: bytes) -> list[dict[str, Any]]:
    """The JSON objects of a frame log."""
    frames = []
    for line in log.splitlines():
        try:
            value = json.loads(line)
        except ValueError:
            continue
        if isinstance(value, dict):
            frames.append(value)
    return frames


def _windows(frames: list[dict[str, Any]]) -> list[int]:
    """Where a harness barrier follows two tool calls: alone, a valid call waits for its answer with no barrier."""
    def numbered(frame: dict[str, Any], low: int, high: int) -> bool:
        rid = frame.get("id")
        return isinstance(rid, int) and low <= rid < high

    def tool_call(frame: dict[str, Any]) -> bool:
        return frame.get("method") == "tools/call" and numbered(frame, CALL_FIRST_ID, FRAME_FIRST_ID)

    return [index for index in range(2, len(frames))
            if frames[index].get("method") in ("ping", "server/discover")
            and numbered(frames[index], HARNESS_FIRST_ID, CALL_FIRST_ID)
            and tool_call(frames[index - 1]) and tool_call(frames[index - 2])]


def test_coverage_calls_share_windows_and_the_same_seed_sends_the_same_frames(tmp_path: Path) -> None:
    logs = []
    for run_number in range(2):
        log = tmp_path / f"frames-{run_number}.log"
        report = tmp_path / f"report-{run_number}.json"
        result = run_cli(["run", "--seed", "3", "--budget", "120", "--timeout", "2", "--max-examples", "5",
                          "--phases", "coverage", "--read-only", "--corpus", str(tmp_path / f"c{run_number}"),
                          "--json", str(report), "--log-frames", str(log), "--",
                          sys.executable, str(READ_ONLY_TOOLS)], timeout=240)
        assert result.returncode == 0, result.stdout + result.stderr
        assert json.loads(report.read_text())["findings"] == []
        logs.append(log.read_bytes())
    assert_same_lines(logs[0], logs[1], what="frames")
    frames = _frames(logs[0])
    assert _windows(frames), "no coverage calls went out as one window"
    searches = [f for f in frames if f.get("method") == "tools/call" and f["params"]["name"] == "search"]
    assert len(searches) > 20  # every coverage call of search was made


def test_over_http_a_wrong_answer_among_posts_in_flight_is_found_on_its_own_call() -> None:
    with start_http_server("--serve", "read-only-tools", "--server-bug", "bad-structured") as url:
        finished = run_engine([], http=HttpTarget(url), phases=("probe", "coverage"), budget=40, timeout=2.0,
                              call_timeout=4.0, seed=1)
    assert not finished.error, finished.error
    fired = {f.oracle for f in finished.findings}
    assert fired == {"output-schema"}, [(f.oracle, f.message) for f in finished.findings]
    finding = next(f for f in finished.findings if f.oracle == "output-schema")
    assert finding.target == "tool/search"
    calls = [frame for frame in finding.frames if b'"tools/call"' in frame]
    assert len(calls) == 1 and b'"query":' in calls[0], finding.frames


def test_over_http_the_same_seed_sends_the_same_coverage_frames(tmp_path: Path) -> None:
    logs = []
    with start_http_server("--serve", "read-only-tools") as url:
        for run_number in range(2):
            log = tmp_path / f"frames-{run_number}.log"
            report = tmp_path / f"report-{run_number}.json"
            result = run_cli(["run", url, "--seed", "3", "--budget", "120", "--timeout", "5", "--max-examples", "5",
                              "--phases", "coverage", "--read-only", "--corpus", str(tmp_path / f"c{run_number}"),
                              "--json", str(report), "--log-frames", str(log)], timeout=240)
            assert result.returncode == 0, result.stdout + result.stderr
            assert json.loads(report.read_text())["findings"] == []
            logs.append(log.read_bytes())
    assert_same_lines(logs[0], logs[1], what="frames")
    assert logs[0].count(b'"name":"search"') > 20
