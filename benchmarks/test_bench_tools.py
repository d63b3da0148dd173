"""The benchmark's own instruments against real processes: counting wrapper, raw clients, nested server.

Run: python -m pytest benchmarks/test_bench_tools.py (not in the default testpaths: it is the benchmark's).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import bench  # noqa: E402
import cli_figures  # noqa: E402
import engine_figures  # noqa: E402
import http_client  # noqa: E402
import peers  # noqa: E402
import raw_client  # noqa: E402
from figures import Figure  # noqa: E402
from nested_server import TOOL_NAME, nested_example  # noqa: E402
from tee_server import read_counts  # noqa: E402
from tool_runs import ToolRun, run_tool, served  # noqa: E402

SERVER = [sys.executable, str(HERE.parent / "tests" / "servers" / "mcp_server.py")]
NESTED = [sys.executable, str(HERE / "nested_server.py")]
INIT = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
    "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}


def lines(*messages: object) -> bytes:
    """Messages as newline-terminated JSON lines."""
    return b"".join(json.dumps(message).encode() + b"\n" for message in messages)


def test_wrapper_counts_every_line_and_byte_and_passes_answers_through(tmp_path: Path) -> None:
    data = lines(INIT, *({"jsonrpc": "2.0", "id": i, "method": "ping"} for i in range(2, 52))) + b"not json\n"
    done = subprocess.run(served(tmp_path, SERVER), input=data, capture_output=True, timeout=30)
    answers = [json.loads(line) for line in done.stdout.splitlines()]
    assert done.returncode == 0
    assert [a.get("id") for a in answers] == [1, *range(2, 52), None]  # the parse error has id null
    assert read_counts(tmp_path) == (52, len(data), 1)


def test_wrapper_count_survives_a_kill_of_its_group(tmp_path: Path) -> None:
    # A reader that never closes: the wrapper is killed mid-run, as tools kill their servers.
    process = subprocess.Popen(served(tmp_path, SERVER), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                               start_new_session=True)
    assert process.stdin is not None and process.stdout is not None
    process.stdin.write(lines(INIT, {"jsonrpc": "2.0", "id": 2, "method": "ping"}))
    process.stdin.flush()
    assert json.loads(process.stdout.readline())["id"] == 1
    assert json.loads(process.stdout.readline())["id"] == 2
    expected = (2, len(lines(INIT, {"jsonrpc": "2.0", "id": 2, "method": "ping"})))
    deadline = time.monotonic() + 10  # the count is written just after the write to the server
    while read_counts(tmp_path)[:2] != expected and time.monotonic() < deadline:
        time.sleep(0.01)
    os.killpg(process.pid, signal.SIGKILL)
    process.wait(10)
    assert read_counts(tmp_path)[:2] == expected


def test_run_tool_counts_frames_of_a_tool_that_restarts_its_server(tmp_path: Path) -> None:
    # A stand-in "fuzzer": starts the wrapped server three times, sends 4 lines to each.
    data = lines(INIT, *({"jsonrpc": "2.0", "id": i, "method": "ping"} for i in (2, 3, 4)))
    script = ("import subprocess, sys\n"
              "for n in range(3):\n"
              "    p = subprocess.Popen(sys.argv[1:], stdin=subprocess.PIPE, stdout=subprocess.DEVNULL)\n"
              f"    p.communicate({data!r})\n")
    counts = tmp_path / "counts"
    result = run_tool([sys.executable, "-c", script, *served(counts, SERVER)], counts, 60, tmp_path)
    assert (result.frames, result.servers, result.exit_code, result.stopped) == (12, 3, 0, False)
    assert result.peak_rss > 0


def test_run_tool_stops_a_tool_at_the_cap(tmp_path: Path) -> None:
    counts = tmp_path / "counts"
    result = run_tool([sys.executable, "-c", "import time; time.sleep(60)"], counts, 1.0, tmp_path)
    assert result.stopped and result.elapsed < 30 and result.frames == 0


@pytest.mark.parametrize("measure", [raw_client.sequential, raw_client.pipelined])
def test_raw_client_makes_round_trips(measure) -> None:
    assert measure(SERVER, "echo", {"text": "x"}, 0.3) > 0


def test_frame_cases_counts_the_frame_searches_of_the_fuzz_phase() -> None:
    rate, restarts = engine_figures.frame_cases(SERVER, 1.0)
    assert rate > 0 and restarts <= 1  # at most the fresh process a frame's written-in id asks for; no crash
    assert not engine_figures.NOTES  # no finding on the clean server


def test_nested_server_accepts_its_example_and_refuses_a_broken_one() -> None:
    broken = {**nested_example(), "p1": -1}  # p1 is an integer with minimum 0
    calls = [{"jsonrpc": "2.0", "id": i, "method": "tools/call", "params": {"name": TOOL_NAME, "arguments": a}}
             for i, a in ((2, nested_example()), (3, broken))]
    done = subprocess.run(NESTED, input=lines(INIT, *calls), capture_output=True, timeout=30)
    results = [json.loads(line)["result"] for line in done.stdout.splitlines()[1:]]
    assert [r["isError"] for r in results] == [False, True]
    assert "-1" not in results[1]["content"][0]["text"]  # never echoes input


def test_raw_http_client_makes_round_trips_and_the_server_goes_away() -> None:
    with http_client.http_server() as url:
        assert http_client.sequential(url, "echo", {"text": "x"}, 0.3) > 0
        assert http_client.parallel(url, "echo", {"text": "x"}, 0.3, connections=2) > 0
    with pytest.raises(OSError):
        http_client.sequential(url, "echo", {"text": "x"}, 0.1)


def test_tool_environment_changes_add_and_remove_variables(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BENCH_REMOVED", "1")
    script = "import os; print(os.environ.get('BENCH_ADDED'), os.environ.get('BENCH_REMOVED'))"
    run_tool([sys.executable, "-c", script], tmp_path / "counts", 30, tmp_path,
             env={"BENCH_ADDED": "yes", "BENCH_REMOVED": None})
    assert (tmp_path / "output.log").read_text().split() == ["yes", "None"]


def test_timed_startups_read_byte_code_from_the_benchmarks_folder_even_where_writing_it_is_off(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PYTHONDONTWRITEBYTECODE", "1")
    (tmp_path / "bench_probe_module.py").write_text("VALUE = 1\n")
    subprocess.run([sys.executable, "-c", "import bench_probe_module"], cwd=tmp_path, check=True, timeout=60,
                   env=cli_figures.startup_env())
    written = list(Path(cli_figures.byte_code_folder()).rglob("bench_probe_module*.pyc"))
    assert len(written) == 1
    assert not (tmp_path / "__pycache__").exists()


def test_a_timed_startup_that_fails_raises_with_its_exit_status() -> None:
    with pytest.raises(subprocess.CalledProcessError) as raised:
        cli_figures.startup_seconds([sys.executable, "-c", "raise SystemExit(3)"])
    assert raised.value.returncode == 3
    assert cli_figures.startup_seconds([sys.executable, "-c", "pass"]) > 0


def test_two_runs_with_the_same_seed_and_max_examples_send_the_same_frames(tmp_path: Path) -> None:
    repeat = cli_figures.repeatability(SERVER, tmp_path, 5, tmp_path)
    assert not repeat.error, repeat.error
    assert repeat.same and repeat.first_difference is None and repeat.frames[0] == repeat.frames[1] > 50


def _run(peak_rss: int, frames: int = 1000) -> ToolRun:
    return ToolRun(frames=frames, bytes=frames * 100, servers=1, elapsed=10.0, exit_code=0, stopped=False,
                   peak_rss=peak_rss, log=Path("log"))


def test_every_target_of_the_issue_is_printed_met_missed_or_not_measured() -> None:
    def percent(value: float) -> Figure:
        return Figure("ratio", "%", 1, [value])

    measured = bench.Measured(
        catalogue=percent(60.0), fuzz_small=percent(10.0), fuzz_nested=percent(31.0), http_catalogue=None,
        http_fuzz=percent(29.9), help=Figure("help", "s", 3, [0.12]),
        first_line=Figure("`mcpfuzz run`, start to its first line", "s", 3, [0.2]), cold=(_run(100_000_000), 0, ""),
        warm=(_run(130_000_000), 0, ""), parallel=(_run(300_000_000, frames=600), 0, ""),
        peers=[peers.PeerResult("mcp-fuzzer", timed=_run(150_000_000, frames=500)),
               peers.PeerResult("mcp-toolproof", error="could not install")],
        repeat=cli_figures.Repeatability(False, (400, 401), 12))
    verdicts = {row.goal: row.met for row in bench.targets(measured)}
    assert list(verdicts.values()) == [True, False, True, None, False, True, None, False, None, True, False, True,
                                       False, False]
    goals = list(verdicts)
    assert "raw pipelined" in goals[0] and "30 properties" in goals[2] and "mcp-fuzzer" in goals[5]
    assert "mcp-toolproof" in goals[6] and "--workers 2" in goals[7] and "mcp-fuzzer" in goals[7]
    assert "--help" in goals[9] and "first line" in goals[10] and "same frames" in goals[13]
    lines = [row.line() for row in bench.targets(measured)]
    assert "1.20x" in lines[7] and lines[7].endswith("MISSED")
    assert "differ at 12" in lines[13] and lines[13].endswith("MISSED") and lines[3].endswith("not measured")


def test_sections_not_run_are_not_measured() -> None:
    """`--only` leaves out the whole runs and the start-up: their targets say so, the others are judged."""
    measured = bench.Measured(
        catalogue=Figure("ratio", "%", 1, [60.0]), fuzz_small=Figure("ratio", "%", 1), fuzz_nested=Figure("r", "%", 1),
        http_catalogue=None, http_fuzz=None, help=Figure("help", "s", 3), first_line=Figure("first", "s", 3),
        cold=None, warm=None, parallel=None, peers=[], repeat=None)
    verdicts = [row.met for row in bench.targets(measured)]
    assert verdicts[0] is True and verdicts[1:] == [None] * (len(verdicts) - 1)
