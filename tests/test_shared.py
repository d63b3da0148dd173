"""`--shared`: soak and run processes share one search through a real redis-server on 127.0.0.1.

Every test starts its own redis-server (free port, temp folder, no persistence) and stops it by pid.
Waits are on conditions with generous deadlines; nothing counts work done in a fixed time.
"""

from __future__ import annotations

import contextlib
import json
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import psutil
import pytest

from mcpfuzz.corpus.redact import Redactor
from mcpfuzz.engine.events import Finding
from mcpfuzz.engine.shared.findings import read_findings
from mcpfuzz.engine.shared.hub import LOCAL_EPOCHS, SharedHub
from mcpfuzz.engine.shared.options import SharedOptions
from mcpfuzz.oracles.base import Severity
from mcpfuzz.transport.stdio_target import StdioTarget
from tests.conftest import CLI, SERVERS_DIR, cli_env, run_cli
from tests.redis_server import REDIS, RedisServer

pytest.importorskip("redis", reason="the --shared tests need the redis package (pip install -e '.[test]')")
pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(REDIS is None, reason="redis-server is not installed (.ci/run installs it)")]

PASSWORD = "pw-Shared-4711x"
TOOLS = SERVERS_DIR / "tool_server.py"
BUGGY = [sys.executable, str(TOOLS), "--bug", "crash-at-maximum", "--bug", "crash-enum-pair"]
BUGS = {("no-crash", "tool/search"), ("no-crash", "tool/create_item")}
# Only the search tool, only fuzzing: a finding there comes from Hypothesis (and its example database).
SEARCH_ONLY = [*(arg for tool in ("create_item", "get_item", "delete_item", "schedule", "tree_sum", "measure")
                 for arg in ("--exclude-tool", tool)), "--phases", "fuzz"]


@pytest.fixture
def redis_server(tmp_path: Path) -> Iterator[RedisServer]:
    server = RedisServer(tmp_path / "redis", PASSWORD).start()
    try:
        yield server
    finally:
        server.stop()


def wait_for(condition: Callable[[], Any], seconds: float, what: str) -> Any:
    """Poll until `condition()` is truthy; fail saying `what` did not happen."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(0.1)
    raise AssertionError(f"within {seconds:g}s: {what}")


def machines(redis: RedisServer, prefix: str) -> dict[str, dict]:
    """The live heartbeats under `prefix`, by machine id."""
    with contextlib.suppress(Exception):
        client = redis.client()
        keys = client.keys(f"{prefix}:machine:*")
        return {record["machine"]: record for record in (json.loads(v) for v in client.mget(keys) if v)} if keys \
            else {}
    return {}


def shared_bugs(redis: RedisServer, prefix: str) -> set[tuple[str, str]]:
    """(oracle, target) of every finding in the store."""
    with contextlib.suppress(Exception):
        client = redis.client()
        found = set()
        for fingerprint in client.smembers(f"{prefix}:findings"):
            data = client.hget(f"{prefix}:finding:{fingerprint.decode()}", "found")
            if data:
                record = json.loads(data)
                found.add((record["oracle"], record["target"]))
        return found
    return set()


def start_soak(folder: Path, redis: RedisServer, prefix: str, *extra: str) -> subprocess.Popen:
    """A soak sharing `redis` (the URL from $MCPFUZZ_SHARED, as a CI job would pass it), output in out.txt."""
    folder.mkdir(parents=True)
    args = [*CLI, "soak", "--duration", "600", "--slice", "2", "--checkpoint-every", "2", "--seed", "11",
            "--shared-prefix", prefix, "--shared-heartbeat", "0.5", "--json", "report.json", *extra, "--", *BUGGY]
    with (folder / "out.txt").open("w") as out:
        return subprocess.Popen(args, cwd=folder, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                env=cli_env({"MCPFUZZ_SHARED": redis.url}))


def stop(processes: list[subprocess.Popen]) -> None:
    """SIGTERM (a soak then saves, shares and reports), then wait; SIGKILL what is left after a minute."""
    for process in processes:
        if process.poll() is None:
            process.send_signal(signal.SIGTERM)
    for process in processes:
        try:
            process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            kill_tree(process)


def kill_tree(process: subprocess.Popen) -> None:
    """SIGKILL a soak and the server it started (as a machine that dies takes its processes along)."""
    with contextlib.suppress(psutil.Error):
        children = psutil.Process(process.pid).children(recursive=True)
        process.kill()
        process.wait(timeout=30)
        for child in children:
            with contextlib.suppress(psutil.Error):
                child.kill()


def all_text(folder: Path) -> str:
    """Every file under `folder` (reports, corpora, checkpoints, outputs) as one text, for a secret search."""
    return "\n".join(path.read_bytes().decode("utf-8", "replace") for path in folder.rglob("*")
                     if path.is_file() and "redis" not in path.parts)


def merged_report(redis: RedisServer, prefix: str, folder: Path) -> tuple[subprocess.CompletedProcess, dict]:
    result = run_cli(["report", "--shared", redis.url, "--shared-prefix", prefix, "--json", "merged.json",
                      "--sarif", "merged.sarif", "--export", "exported"], cwd=folder, timeout=60)
    assert (folder / "merged.json").exists(), result.stdout + result.stderr
    return result, json.loads((folder / "merged.json").read_text())


# -- the fleet ------------------------------------------------------------------------------------


def test_three_soaks_share_one_search_and_a_killed_one_only_drops_out(tmp_path: Path,
                                                                      redis_server: RedisServer) -> None:
    soaks = [start_soak(tmp_path / f"m{index}", redis_server, "fleet") for index in range(3)]
    try:
        def fleet() -> dict[str, dict] | None:
            live = machines(redis_server, "fleet")
            return live if len(live) == 3 and any(record["lead"] for record in live.values()) else None

        live = wait_for(fleet, 120, "three soaks sent heartbeats, one of them the lead")
        by_pid = {record["pid"]: record for record in live.values()}
        assert sorted(record["number"] for record in live.values()) == [0, 1, 2]  # unique worker numbers
        assert sum(bool(record["lead"]) for record in live.values()) == 1
        victim = next(p for p in soaks if not by_pid[p.pid]["lead"])
        survivors = [p for p in soaks if p is not victim]
        gone = by_pid[victim.pid]["machine"]
        kill_tree(victim)
        wait_for(lambda: gone not in machines(redis_server, "fleet"), 60, "the killed soak's heartbeat expired")
        before = {m: r["cases"] for m, r in machines(redis_server, "fleet").items()}
        wait_for(lambda: all(r["cases"] > before.get(m, 0) for m, r in machines(redis_server, "fleet").items()),
                 60, "the two other soaks kept working")
        wait_for(lambda: shared_bugs(redis_server, "fleet") >= BUGS, 180, "both bugs were shared")
    finally:
        stop(soaks)
    assert all(p.returncode in (0, 1) for p in survivors), [all_text(tmp_path / "m0")[-3000:]]

    result, merged = merged_report(redis_server, "fleet", tmp_path)
    assert result.returncode == 1, result.stdout + result.stderr
    pairs = [(f["oracle"], f["target"]) for f in merged["findings"]]
    fingerprints = [f["fingerprint"] for f in merged["findings"]]
    assert len(fingerprints) == len(set(fingerprints))
    assert all(pairs.count(bug) == 1 for bug in BUGS), pairs
    assert merged["stats"]["soak"]["machines"] >= 2 and merged["stats"]["duration_s"] > 0
    replayed = run_cli(["replay", "exported"], cwd=tmp_path, timeout=120)
    assert replayed.returncode == 1, replayed.stdout + replayed.stderr
    assert "2 failed" in replayed.stdout or f"{len(pairs)} failed" in replayed.stdout
    status = run_cli(["status", "--shared", redis_server.url, "--shared-prefix", "fleet"], cwd=tmp_path)
    assert status.returncode == 0 and "findings" in status.stdout
    for output in (result.stdout + result.stderr, replayed.stdout + replayed.stderr, status.stdout + status.stderr,
                   all_text(tmp_path)):
        assert PASSWORD not in output


def test_redis_stopped_and_restarted_mid_soak_loses_and_duplicates_nothing(tmp_path: Path,
                                                                           redis_server: RedisServer) -> None:
    soak = start_soak(tmp_path / "m", redis_server, "outage")
    out = tmp_path / "m" / "out.txt"
    try:
        wait_for(lambda: shared_bugs(redis_server, "outage"), 120, "a finding was shared")
        redis_server.stop()
        wait_for(lambda: "lost the shared store" in out.read_text(), 60, "the soak noticed Redis was gone")
        assert soak.poll() is None, out.read_text()[-3000:]
        redis_server.start()  # empty: it kept nothing
        wait_for(lambda: "the shared store is back" in out.read_text(), 60, "the soak noticed Redis was back")
        wait_for(lambda: shared_bugs(redis_server, "outage"), 60, "the findings were shared again")
    finally:
        stop([soak])
    text = out.read_text()
    assert soak.returncode == 1 and "Traceback" not in text, text[-3000:]
    own = json.loads((tmp_path / "m" / "report.json").read_text())
    result, merged = merged_report(redis_server, "outage", tmp_path)
    fingerprints = [f["fingerprint"] for f in merged["findings"]]
    assert len(fingerprints) == len(set(fingerprints))
    assert set(fingerprints) == {f["fingerprint"] for f in own["findings"]}
    saved = {json.loads(p.read_text())["fingerprint"] for p in (tmp_path / "m" / "corpus").glob("*_*_*.json")}
    assert {f["fingerprint"] for f in own["findings"] if not f["observed"]} <= saved
    assert PASSWORD not in all_text(tmp_path)


def test_an_example_one_machine_saved_is_replayed_first_by_another(tmp_path: Path,
                                                                   redis_server: RedisServer) -> None:
    def run(folder: str, *args: str) -> tuple[dict, str]:
        """The run's JSON report and its console (said when an assertion on the report fails)."""
        (tmp_path / folder).mkdir()
        # Every search ends at its --max-examples: the budget only bounds the run (a loaded machine spends minutes).
        result = run_cli(["run", *SEARCH_ONLY, *args, "--budget", "300", "--json", "r.json", "--",
                          sys.executable, str(TOOLS), "--bug", "crash-at-maximum"], cwd=tmp_path / folder, timeout=400)
        assert (tmp_path / folder / "r.json").exists(), result.stdout + result.stderr
        return json.loads((tmp_path / folder / "r.json").read_text()), result.stdout + result.stderr

    shared = ["--shared", redis_server.url, "--shared-prefix", "examples"]
    first, said = run("first", "--max-examples", "30", "--seed", "5", *shared)  # 30 examples hit limit == 10
    assert [(f["oracle"], f["target"]) for f in first["findings"]] == [("no-crash", "tool/search")], said
    # One example per search, another seed, a fresh corpus: alone it does not hit limit == 10 ...
    alone, said = run("alone", "--seed", "9", "--max-examples", "1")
    assert alone["findings"] == [], said
    # ... but sharing the store, it replays the first machine's failing example before its own.
    joined, said = run("joined", "--seed", "9", "--max-examples", "1", *shared)
    assert [(f["oracle"], f["target"], f["new"]) for f in joined["findings"]] == [("no-crash", "tool/search", False)], \
        said


# -- faults and usage -----------------------------------------------------------------------------


def test_an_unreachable_store_is_exit_2_unless_optional(tmp_path: Path, redis_server: RedisServer) -> None:
    from tests.http_servers import free_port

    url = f"redis://:{PASSWORD}@127.0.0.1:{free_port()}/0"
    clean = [sys.executable, str(TOOLS)]
    refused = run_cli(["run", "--budget", "5", "--phases", "catalogue", "--shared", url, "--", *clean], cwd=tmp_path)
    assert refused.returncode == 2, refused.stdout + refused.stderr
    assert "cannot be reached" in refused.stderr and "tip:" in refused.stderr
    optional = run_cli(["run", "--budget", "5", "--phases", "catalogue", "--shared", url, "--shared-optional",
                        "--", *clean], cwd=tmp_path)
    assert optional.returncode == 0, optional.stdout + optional.stderr
    assert "fuzzing locally" in optional.stderr
    wrong = run_cli(["soak", "--duration", "5", "--shared", "http://127.0.0.1:1/0", "--", *clean], cwd=tmp_path)
    assert wrong.returncode == 2 and "not a Redis URL" in wrong.stderr
    status = run_cli(["status", "--shared", url], cwd=tmp_path)
    assert status.returncode == 2 and "cannot be reached" in status.stderr
    wrong_password = redis_server.url.replace(PASSWORD, PASSWORD + "-not")
    denied = run_cli(["report", "--shared", wrong_password], cwd=tmp_path)
    assert denied.returncode == 2 and "cannot be reached" in denied.stderr, denied.stderr
    for result in (refused, optional, wrong, status, denied):
        assert PASSWORD not in result.stdout + result.stderr and "Traceback" not in result.stderr


def finding(target: str, **changes: Any) -> Finding:
    base = Finding(oracle="no-crash", severity=Severity.CRITICAL, title="Server process died", message="died",
                   target=target, case_title="search", expected="a reply",
                   frames=(b'{"jsonrpc":"2.0","id":1,"method":"ping"}',), received=("<no reply>",), key="crash")
    return replace(base, **changes)


def test_claims_are_unique_and_a_lost_store_is_caught_up(tmp_path: Path, redis_server: RedisServer) -> None:
    options = SharedOptions(url=redis_server.url, prefix="unit", heartbeat_ttl=5)

    def hub() -> SharedHub:
        return SharedHub(options, server=StdioTarget(("python", "s.py")), seed=1, redactor=Redactor(options.secrets))

    first, second = hub(), hub()
    assert (first.number, second.number, first.claim_lead(), second.claim_lead()) == (0, 1, True, False)
    epochs = [first.next_epoch(), second.next_epoch(), first.next_epoch()]
    assert len(set(epochs)) == 3
    # The same bug from two machines: one record, the first finder owns it, the second verifies it.
    first.publish([finding("tool/a")])
    second.publish([finding("tool/a", reproducible=True)])
    [record] = read_findings(first.link)
    assert (record.owner, record.verified_by, record.finding.reproducible) == (first.machine, second.machine, True)
    assert second.elsewhere == {record.finding.fingerprint} and first.elsewhere == set()
    # Examples: saved by one, fetched by the other; a delete stays local.
    mine, theirs = first.example_database(tmp_path / "a" / "k"), second.example_database(tmp_path / "b" / "k")
    mine.save(b"key", b"one")
    assert list(theirs.fetch(b"key")) == [b"one"]
    theirs.delete(b"key", b"one")
    assert list(mine.fetch(b"key")) == [b"one"]

    redis_server.stop()
    mine.save(b"key", b"two")  # kept locally and queued, nothing raised
    first.publish([finding("tool/b")])
    assert first.next_epoch() >= LOCAL_EPOCHS
    assert any("lost the shared store" in n.message for n in first.beat({"cases": 1}))
    assert first.pending == 2
    redis_server.start()  # back, and empty
    assert any("is back" in n.message for n in first.beat({"cases": 2}))
    assert first.pending == 0
    assert set(second.example_database(tmp_path / "c" / "k").fetch(b"key")) == {b"two"}
    assert {r.finding.target for r in read_findings(first.link)} == {"tool/a", "tool/b"}
    assert first.next_epoch() > max(e for e in epochs if e < LOCAL_EPOCHS)
    for text in (repr(first.examples.database(tmp_path / "d")), options.label, first.link.last_error):
        assert PASSWORD not in text
    first.link.close()
    second.link.close()


def test_the_merged_report_writes_an_html_page_of_every_shared_finding(tmp_path: Path,
                                                                        redis_server: RedisServer) -> None:
    """Two machines' findings, one hostile message among them: one escaped page, each finding once, no charts
    (the store keeps no events), no password."""
    options = SharedOptions(url=redis_server.url, prefix="page")
    hubs = [SharedHub(options, server=StdioTarget(("python", "s.py")), seed=1, redactor=Redactor(options.secrets))
            for _ in range(2)]
    hubs[0].publish([finding("tool/a", message="died <script>alert(1)</script>")])
    hubs[1].publish([finding("tool/a"), finding("tool/b")])
    for hub in hubs:
        hub.beat({"cases": 3})
        hub.link.close()
    result = run_cli(["report", "--shared", redis_server.url, "--shared-prefix", "page", "--json", "merged.json",
                      "--html", "merged.html"], cwd=tmp_path, timeout=60)
    assert result.returncode == 1, result.stdout + result.stderr
    page = (tmp_path / "merged.html").read_text()
    merged = json.loads((tmp_path / "merged.json").read_text())
    assert sorted(f["target"] for f in merged["findings"]) == ["tool/a", "tool/b"]
    assert all(page.count(f["fingerprint"]) >= 1 for f in merged["findings"])
    assert "<script>" not in page and "&lt;script&gt;" in page
    assert "A merged report of a shared store" in page and "<svg" not in page
    assert PASSWORD not in page + result.stdout + result.stderr
    unwritable = run_cli(["report", "--shared", redis_server.url, "--shared-prefix", "page", "--html",
                          str(tmp_path / "merged.json" / "merged.html")], cwd=tmp_path, timeout=60)
    assert unwritable.returncode == 2 and "cannot write the HTML report" in unwritable.stderr


def test_urls_are_checked_before_anything_starts() -> None:
    from mcpfuzz.engine.shared.options import SharedUrlError, check_prefix, check_url, redacted_url

    for url in ("redis://127.0.0.1:6379/0", f"rediss://:{PASSWORD}@cache.example:6380/2", "unix:///run/redis.sock"):
        check_url(url)
    for url, why in (("http://127.0.0.1:6379/0", "not a Redis URL"), ("redis:///0", "names no host"),
                     (f"redis://:{PASSWORD}@host/cache", "database number")):
        with pytest.raises(SharedUrlError, match=why) as refused:
            check_url(url)
        assert PASSWORD not in str(refused.value)
    with pytest.raises(SharedUrlError):
        check_prefix("my project*")
    assert redacted_url(f"rediss://admin:{PASSWORD}@host:6380/0") == "rediss://<redacted>@host:6380/0"
    assert SharedOptions(url=f"redis://admin:{PASSWORD}@host/0").secrets == [PASSWORD]
