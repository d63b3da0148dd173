"""`mcpfuzz soak`: memory-growth in a short soak, SIGTERM leaves a checkpoint and a report, --resume, workers."""

from __future__ import annotations

import contextlib
import html
import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest

from mcpfuzz.corpus.redact import Redactor
from mcpfuzz.engine.events import Finding
from mcpfuzz.engine.soak.checkpoint import Checkpoint, CheckpointError, read_checkpoint, write_checkpoint
from mcpfuzz.engine.soak.scheduler import Scheduler
from mcpfuzz.oracles.base import Severity
from mcpfuzz.oracles.memory import GrowthLimits
from mcpfuzz.transport.stdio_target import StdioTarget
from tests.conftest import CLI, SERVERS_DIR, cli_env, kill_leftovers, leftover_processes, private_copy, run_cli

pytestmark = pytest.mark.slow

LEAKY = SERVERS_DIR / "leaky_server.py"
TOOLS = SERVERS_DIR / "tool_server.py"
TWO_BUGS = ["--bug", "crash-at-maximum", "--bug", "crash-enum-pair"]
# Tool calls only (no catalogue), samples five times a second: a short soak has enough samples to judge.
QUICK = ["--phases", "coverage,fuzz", "--sample-every", "0.2", "--seed", "11"]


def soak(folder: Path, args: list[str], server: list[str], timeout: float = 120) -> tuple[subprocess.CompletedProcess,
                                                                                       dict]:
    """Run `mcpfuzz soak` in `folder` with a JSON report; the result and the report."""
    result = run_cli(["soak", *args, "--json", "report.json", "--", *server], timeout=timeout, cwd=folder)
    report = folder / "report.json"
    assert report.exists(), result.stdout + result.stderr
    return result, json.loads(report.read_text())


def oracles_of(report: dict) -> set[tuple[str, str]]:
    return {(finding["oracle"], finding["target"]) for finding in report["findings"]}


# -- memory-growth in a soak ----------------------------------------------------------------------


def test_a_leaking_server_is_caught_by_memory_growth_in_a_short_soak(tmp_path: Path) -> None:
    # Slices of 8 s: a frame slice may start a fresh process (a new series), a tool slice holds 40 samples.
    # --max-findings 1: the soak ends at the first slice boundary after the leak is judged (30 s at most).
    result, report = soak(tmp_path, ["--duration", "30", "--slice", "8", "--max-findings", "1", *QUICK,
                                     "--oracles", "memory-growth", "--html", "report.html"],
                          [sys.executable, str(LEAKY), "--leak-kb", "100"])
    assert result.returncode == 1, result.stdout + result.stderr
    [finding] = report["findings"]
    assert finding["oracle"] == "memory-growth" and finding["observed"] is True
    assert "KB per request" in finding["message"]
    # The HTML report shows the evidence: the RSS, the leak's fitted slope, the slices' new behaviours.
    page = (tmp_path / "report.html").read_text(encoding="utf-8")
    assert html.escape(finding["message"]) in page and "fitted slope: " in page
    assert 'aria-label="Server memory (RSS of its process tree)"' in page
    assert 'aria-label="Server memory against requests sent (pid ' in page
    assert 'aria-label="New behaviours (soak)"' in page and "new behaviours so far" in page
    resources = report["stats"]["resources"]
    # The peak: the last sample may be of a fresh process (a frame slice may start one).
    assert resources["server_rss_mb"]["peak"] > resources["server_rss_mb"]["first"] + 8
    assert resources["pings"] >= 1 and resources["pings_failed"] == 0
    # Seen over many requests: nothing a transcript could replay is saved.
    assert not list((tmp_path / "corpus").glob("*memory-growth*"))


def test_the_same_server_without_its_leak_gives_no_finding(tmp_path: Path) -> None:
    # Two slices of 4 s, however long the start takes (the duration only bounds it): more than one slice, and
    # more samples than the oracle needs (five a second).
    result, report = soak(tmp_path, ["--duration", "120", "--max-slices", "2", "--slice", "4", *QUICK],
                          [sys.executable, str(LEAKY), "--leak-kb", "0"], timeout=240)
    assert result.returncode == 0, result.stdout + result.stderr
    assert report["findings"] == [] and report["stopped"] is None
    # Judged, not left unjudged: the soak went past one slice and the oracle had the samples it needs to speak.
    assert report["stats"]["soak"]["slices"] == 2
    assert report["stats"]["resources"]["samples"] >= GrowthLimits().min_samples


# -- stopping and resuming ------------------------------------------------------------------------


def start_soak(folder: Path, args: list[str], server: list[str]) -> subprocess.Popen:
    return subprocess.Popen([*CLI, "soak", *args, "--json", "report.json", "--", *server], cwd=folder,
                            env=cli_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            stdin=subprocess.DEVNULL)


def wait_for_slices(path: Path, slices: int, timeout: float) -> None:
    """Wait until the checkpoint at `path` records at least `slices` finished slices (a loaded machine is slow)."""
    deadline = time.monotonic() + timeout
    while not path.exists() or read_checkpoint(path).slices < slices:
        assert time.monotonic() < deadline, f"{path} never recorded {slices} slices"
        time.sleep(0.2)


def frames_of(log: Path) -> set[bytes]:
    """The tool calls a session sent (the handshake, pings and barriers are the same in every session)."""
    return {line for line in log.read_bytes().splitlines() if b'"tools/call"' in line}


def leaky_copy(folder: Path) -> Path:
    """A private copy of the leaky server (its path marks this test's processes only)."""
    return private_copy(LEAKY, folder, imports=("mcp_server.py", "tool_server.py"))


def test_sigterm_leaves_a_checkpoint_and_a_report_and_resume_goes_on_with_new_inputs(tmp_path: Path) -> None:
    server = leaky_copy(tmp_path)
    command = [sys.executable, str(server), "--leak-kb", "0"]
    checkpoint = tmp_path / "corpus" / "soak-checkpoint.json"
    process = start_soak(tmp_path, ["--duration", "300", "--checkpoint-every", "2", "--log-frames", "first.log",
                                    "--slice", "2", *QUICK], command)
    try:
        wait_for_slices(checkpoint, 2, 120)
        process.send_signal(signal.SIGTERM)
        out, err = process.communicate(timeout=60)
    finally:
        process.kill()
        kill_leftovers(str(server))
    assert process.returncode == 0, out + err
    assert "Traceback" not in out + err
    assert leftover_processes(str(server)) == []
    first = read_checkpoint(checkpoint)
    assert first.stopped == "interrupted" and not first.complete
    assert first.slices >= 2 and first.stats["cases"] > 0 and 3 < first.elapsed < 300
    report = json.loads((tmp_path / "report.json").read_text())
    assert report["stopped"] == "interrupted" and report["seed"] == 11

    result = run_cli(["soak", "--resume", "--duration", f"{first.elapsed + 8:.0f}", "--slice", "2", "--log-frames",
                      "second.log", "--phases", "coverage,fuzz", "--json", "report.json", "--", *command],
                     cwd=tmp_path, timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr
    second = read_checkpoint(checkpoint)
    assert second.complete and second.resumes == 1 and second.seed == 11
    assert second.slices > first.slices
    assert second.stats["cases"] > first.stats["cases"]  # counters carried over and added to
    assert second.elapsed > first.elapsed
    before, after = frames_of(tmp_path / "first.log"), frames_of(tmp_path / "second.log")
    assert before and after
    # New slices have new seeds: the resumed session does not send the first one's calls again.
    assert len(before & after) <= 0.2 * len(after), (len(before & after), len(after))


def test_workers_whose_parent_is_killed_stop_and_take_their_servers_along(tmp_path: Path) -> None:
    server = leaky_copy(tmp_path)
    process = start_soak(tmp_path, ["--duration", "600", "--workers", "2", "--checkpoint-every", "1", "--slice", "2",
                                    *QUICK], [sys.executable, str(server), "--leak-kb", "0"])
    corpus = tmp_path / "corpus"
    workers: list[psutil.Process] = []
    try:
        for name in ("soak-checkpoint.json", "soak-checkpoint.worker1.json"):
            wait_for_slices(corpus / name, 1, 120)
        workers = [child for child in psutil.Process(process.pid).children()
                   if "spawn_main" in " ".join(child.cmdline())]
        assert len(workers) == 2
        process.kill()  # SIGKILL: the parent can forward nothing
        _, alive = psutil.wait_procs(workers, timeout=300)  # generous: each worker shrinks, saves and reports
        assert alive == [], f"orphaned workers soaked on: {[w.cmdline()[-3:] for w in alive]}"
        process.communicate(timeout=60)  # the workers held its stdout until they ended
    finally:
        process.kill()
        for worker in workers:
            with contextlib.suppress(psutil.Error):
                worker.kill()
        kill_leftovers(str(server))
    assert leftover_processes(str(server)) == []
    # Each stopped as on SIGTERM: a last checkpoint that says so.
    for name in ("soak-checkpoint.json", "soak-checkpoint.worker1.json"):
        assert read_checkpoint(corpus / name).stopped == "interrupted"


def test_resume_and_workers_refuse_what_does_not_fit(tmp_path: Path) -> None:
    command = [sys.executable, str(LEAKY), "--leak-kb", "0"]
    missing = run_cli(["soak", "--resume", "--", *command], cwd=tmp_path)
    assert missing.returncode == 2 and "there is no checkpoint there" in missing.stderr
    assert "tip:" in missing.stderr and "Traceback" not in missing.stderr
    path = tmp_path / "corpus" / "soak-checkpoint.json"
    write_checkpoint(path, Checkpoint(seed=5, server="python other.py", elapsed=10.0),
                     StdioTarget(("python", "other.py")), Redactor([]))
    other = run_cli(["soak", "--resume", "--", *command], cwd=tmp_path)
    assert other.returncode == 2 and "is of another server" in other.stderr
    label = " ".join(command)
    write_checkpoint(path, Checkpoint(seed=5, server=label, elapsed=100.0), StdioTarget(tuple(command)), Redactor([]))
    spent = run_cli(["soak", "--resume", "--duration", "90s", "--", *command], cwd=tmp_path)
    assert spent.returncode == 2 and "already ran 100s" in spent.stderr
    seed = run_cli(["soak", "--resume", "--duration", "1h", "--seed", "6", "--", *command], cwd=tmp_path)
    assert seed.returncode == 2 and "--seed 5" in seed.stderr
    path.write_text("{not json")
    broken = run_cli(["soak", "--resume", "--", *command], cwd=tmp_path)
    assert broken.returncode == 2 and "cannot be read as JSON" in broken.stderr
    ports = run_cli(["soak", "http://127.0.0.1:9/mcp", "--launch", "python s.py", "--workers", "2"], cwd=tmp_path)
    assert ports.returncode == 2 and "same port" in ports.stderr


# -- findings: max-findings, workers, reports -----------------------------------------------------


def test_max_findings_stops_the_soak_early(tmp_path: Path) -> None:
    result, report = soak(tmp_path, ["--duration", "120", "--max-findings", "1", "--slice", "3", *QUICK],
                          [sys.executable, str(TOOLS), *TWO_BUGS])
    assert result.returncode == 1
    assert report["stopped"] == "max-findings"
    assert len([f for f in report["findings"] if f["new"]]) >= 1
    assert report["stats"]["duration_s"] < 120  # stopped before its --duration, by its own account


def test_two_workers_find_the_same_bugs_as_one_and_save_each_once(tmp_path: Path) -> None:
    found = {}
    for workers in (1, 2):
        folder = tmp_path / f"w{workers}"
        folder.mkdir()
        # --max-findings counts across the workers: the soak ends once both bugs are in, whoever found them.
        result, report = soak(folder, ["--duration", "60", "--max-findings", "2", "--slice", "2", "--workers",
                                       str(workers), *QUICK, "--sarif", "report.sarif", "--junit-xml", "report.xml"],
                              [sys.executable, str(TOOLS), *TWO_BUGS], timeout=180)
        assert result.returncode == 1, result.stdout + result.stderr
        assert "Traceback" not in result.stdout + result.stderr
        assert report["stopped"] == "max-findings", result.stdout + result.stderr
        found[workers] = oracles_of(report)
        transcripts = sorted(p.name for p in (folder / "corpus").glob("*no-crash*.json"))
        assert len(transcripts) == len(report["findings"]), transcripts
        assert (folder / "report.sarif").exists() and (folder / "report.xml").exists()
        if workers == 2:
            assert report["stats"]["soak"]["workers"] == 2
            assert [w["worker"] for w in report["stats"]["soak"]["per_worker"]] == [0, 1]
            assert (folder / "corpus" / "soak-checkpoint.worker1.json").exists()
    expected = {("no-crash", "tool/search"), ("no-crash", "tool/create_item")}
    assert found[1] == found[2] == expected


def test_findings_already_in_the_corpus_are_not_new(tmp_path: Path) -> None:
    server = [sys.executable, str(TOOLS), "--bug", "crash-at-maximum"]
    # The coverage calls find the crash (a boundary); the durations only bound the soaks, which end by their work.
    first, report = soak(tmp_path, ["--duration", "120", "--max-slices", "4", "--slice", "3", "--max-findings", "1",
                                    *QUICK], server, timeout=240)
    assert [f["new"] for f in report["findings"]] == [True]
    assert report["stopped"] == "max-findings"
    # The second soak replays the corpus first (it needs the catalogue phases on for that).
    second, report = soak(tmp_path, ["--duration", "120", "--max-slices", "1", "--slice", "3", "--max-findings", "1",
                                     "--phases", "catalogue,coverage,fuzz", "--sample-every", "0.2", "--seed", "12"],
                          server, timeout=240)
    crash = [f for f in report["findings"] if f["target"] == "tool/search"]
    assert [f["new"] for f in crash] == [False]
    assert report["stopped"] != "max-findings"  # a known finding does not count toward --max-findings


def test_scheduler_favours_targets_that_still_show_new_behaviour() -> None:
    scheduler = Scheduler(["a", "b", "c"], seed=1)
    assert [scheduler.pick() for _ in range(1)] == ["a"]
    for name, novel in (("a", 50), ("b", 0), ("c", 0)):
        assert scheduler.pick() == name  # every target is tried once first
        scheduler.update(name, cases=100, new_behaviours=novel, new_findings=0)
    picks = [scheduler.pick() for _ in range(1000)]
    assert picks.count("a") > 600
    assert picks.count("b") > 20 and picks.count("c") > 20  # a quiet target keeps a chance


def test_checkpoint_round_trip_keeps_findings_and_never_holds_secrets(tmp_path: Path) -> None:
    secret = "s3cr3t-token-value"
    finding = Finding(oracle="no-crash", severity=Severity.CRITICAL, title="Server process died",
                      message=f"died on {secret}", target="tool/search", case_title="search", expected="a reply",
                      frames=(b'{"jsonrpc":"2.0","id":1,"method":"ping"}',), received=("<no reply>",), key="crash:x",
                      stderr_tail=f"token={secret}", known=True)
    path = tmp_path / "cp.json"
    checkpoint = Checkpoint(seed=3, server="python s.py", slices=7, elapsed=12.5, stats={"cases": 40},
                            scores={"tool/search": 0.5}, findings=[(("no-crash", "tool/search", "crash:x"), finding)])
    write_checkpoint(path, checkpoint, StdioTarget(("python", "s.py")), Redactor([secret]))
    assert secret not in path.read_text()
    back = read_checkpoint(path)
    assert (back.seed, back.slices, back.elapsed, back.stats, back.scores) == (3, 7, 12.5, {"cases": 40},
                                                                             {"tool/search": 0.5})
    [(key, restored)] = back.findings
    assert key == ("no-crash", "tool/search", "crash:x")
    assert restored.known and restored.frames == finding.frames and restored.severity is Severity.CRITICAL
    data = json.loads(path.read_text())
    data["findings"][0]["finding_key"] = "broken"
    path.write_text(json.dumps(data))
    with pytest.raises(CheckpointError, match="damaged"):
        read_checkpoint(path)


def test_a_worker_ended_by_force_leaves_a_checkpoint_that_says_it_was_interrupted(tmp_path: Path) -> None:
    """The orphan backstop's last words: the worker's own checkpoint gets the stop reason, and nothing else changes;
    a checkpoint that already says why is kept, and a missing one stays missing."""
    from mcpfuzz.engine.config import Shard
    from mcpfuzz.engine.soak.soak import SoakOptions
    from mcpfuzz.engine.soak.workers import SoakJob

    lead = tmp_path / "cp.json"
    job = SoakJob(SoakOptions(duration=60.0, checkpoint=lead))
    worker = Shard(1, 2)
    path = worker.worker_path(lead)
    write_checkpoint(path, Checkpoint(seed=3, server="python s.py", slices=7, elapsed=12.5, stats={"cases": 40}),
                     StdioTarget(("python", "s.py")), Redactor([]))
    job.ended_by_force(worker)
    back = read_checkpoint(path)
    assert (back.stopped, back.slices, back.stats, back.complete) == ("interrupted", 7, {"cases": 40}, False)
    data = json.loads(path.read_text())
    path.write_text(json.dumps({**data, "stopped": "budget"}))
    job.ended_by_force(worker)
    assert read_checkpoint(path).stopped == "budget"
    job.ended_by_force(Shard(0, 2))  # the lead's checkpoint was never written: nothing to mark
    assert not lead.exists()


def test_a_workers_samples_before_the_leads_run_started_are_relayed_after_it() -> None:
    """Worker 1 samples its server before the lead's RunStarted reaches the parent: the stream still opens with it."""
    from mcpfuzz.engine.events import Event, ResourcesSampled, RunStarted
    from mcpfuzz.engine.workers import _Merger, _Message

    relayed: list[Event] = []
    merger = _Merger(2, relayed.append, [])
    sample = ResourcesSampled(pid=42, requests=0, rss=10_000_000)
    merger.take(_Message(1, sample))
    assert relayed == []
    started = RunStarted("server", 1, ("no-crash",), 60.0, 5.0)
    merger.take(_Message(0, started))
    merger.take(_Message(1, sample))
    # Each relayed sample names its worker's server (one memory line per server in the HTML report).
    from dataclasses import replace

    tagged = replace(sample, server=1)
    assert relayed == [started, tagged, tagged]
