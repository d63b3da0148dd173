"""`session-leak`, the memory side: a burst of refused requests through a real session to a launched server.

The fixture with `--bug session-pileup` keeps a 64 KiB session for every refusal and must be caught with
its figures; the clean fixture and the mcp SDK servers must not be; nothing is sent unless mcpfuzz
launched the server (only then can its memory be watched).
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path

import anyio
import pytest

from mcpfuzz.engine.monitor.pileup import PileupVerdict, check_session_pileup
from mcpfuzz.engine.session.session import Session
from mcpfuzz.engine.surface.probe import probe
from mcpfuzz.oracles.base import Severity
from mcpfuzz.oracles.memory import KIB, MIB
from mcpfuzz.transport.http_target import HttpTarget
from tests.http_servers import HTTP_SERVER, SDK_SCRIPTS, SDK_SERVERS, free_port, sdk_python, start_http_server

pytestmark = pytest.mark.slow

LEGACY = "2025-11-25"
BURST = 300
Hook = Callable[[Session], Callable[[], Awaitable[None]]]


@dataclass
class Outcome:
    """What one check did: its verdict, the frames it sent, the restarts during it, and how long it took."""

    verdict: PileupVerdict | None
    frames: int
    restarts: int
    seconds: float


def fixture_target(*bugs: str) -> HttpTarget:
    """tests/servers/http_server.py with BUGS, launched by the session on a free port."""
    port = free_port()
    command = [sys.executable, str(HTTP_SERVER), "--port", str(port)]
    for bug in bugs:
        command += ["--bug", bug]
    return HttpTarget(f"http://127.0.0.1:{port}/mcp", launch=tuple(command))


def sdk_target(name: str) -> HttpTarget:
    """An SDK server (skips when that SDK is not installed), launched by the session on a free port."""
    script, path = SDK_SCRIPTS[name]
    port = free_port()
    return HttpTarget(f"http://127.0.0.1:{port}{path}", launch=(sdk_python(name), str(SDK_SERVERS / script),
                                                               str(port)))


def check(target: HttpTarget, *, version: str | None = None, seconds: float = 60.0,
          hook: Hook | None = None) -> Outcome:
    """Handshake (probe), then the pile-up check on the same session."""

    async def run() -> Outcome:
        async with Session(target) as session:
            await probe(session, version)
            if hook is not None:
                session.before_case = hook(session)
            frames, restarts, started = session.wire.frames_sent, session.restarts, time.monotonic()
            verdict = await check_session_pileup(session, burst=BURST, deadline=started + seconds)
            return Outcome(verdict, session.wire.frames_sent - frames, session.restarts - restarts,
                           time.monotonic() - started)

    return anyio.run(run)


@pytest.mark.parametrize("version", [None, LEGACY], ids=["modern", "legacy"])
def test_refusals_that_pile_up_sessions_are_found_with_figures(version: str | None) -> None:
    """session-pileup: every refused kind of the era is refused and leaks ~64 KiB; a medium, server-wide verdict."""
    outcome = check(fixture_target("session-pileup"), version=version)
    verdict = outcome.verdict
    assert verdict is not None
    failure = verdict.failure
    assert (failure.oracle, failure.key, failure.severity, failure.server_wide) == (
        "session-leak", "pileup", Severity.MEDIUM, True)
    assert outcome.frames == BURST and verdict.refused == BURST and outcome.restarts == 0
    assert 48 * KIB <= verdict.growth.slope <= 96 * KIB  # 64 KiB of ballast plus the session's objects
    assert verdict.growth.growth >= 10 * MIB
    assert f"{BURST} refused requests" in failure.message and "KB each" in failure.message
    exchange = verdict.exchange
    assert exchange.http is not None and 400 <= (exchange.http.status or 0) < 500
    assert exchange.case.target.startswith("http/pileup-") and exchange.frames[-1] == exchange.case.data


def test_clean_server_is_not_reported_and_a_past_deadline_sends_nothing() -> None:
    """The clean fixture refuses the same burst and stays flat."""
    target = fixture_target()
    assert check(target).verdict is None
    late = check(fixture_target(), seconds=0.0)
    assert (late.verdict, late.frames) == (None, 0)


@pytest.mark.sdk
@pytest.mark.parametrize(("name", "version"), [("sdk2", None), ("sdk2", LEGACY), ("sdk1", None)],
                         ids=["sdk2-modern", "sdk2-legacy", "sdk1-legacy"])
def test_sdk_servers_are_not_reported(name: str, version: str | None) -> None:
    """The mcp SDK servers refuse the burst and grow by well under a KB per refusal (after warm-up)."""
    outcome = check(sdk_target(name), version=version)
    assert outcome.verdict is None and outcome.frames == BURST


def test_without_launch_nothing_is_sent() -> None:
    """A server mcpfuzz did not start has no pid to watch: no verdict, no traffic (even on the buggy one)."""
    with start_http_server("--bug", "session-pileup") as url:
        outcome = check(HttpTarget(url))
    assert (outcome.verdict, outcome.frames) == (None, 0)


def test_accepted_kinds_leave_the_rotation() -> None:
    """ignore-headers serves a header mismatch: that kind is dropped after one try, the other refusals go on."""
    outcome = check(fixture_target("session-pileup", "ignore-headers"))
    assert outcome.verdict is not None and outcome.frames == BURST
    assert outcome.verdict.refused == BURST - 1


def kill_once_at(case: int) -> Hook:
    """A before_case hook that kills the server once, before the case-th case of the burst."""

    def hook(session: Session) -> Callable[[], Awaitable[None]]:
        calls = 0

        async def before() -> None:
            nonlocal calls
            calls += 1
            if calls == case:
                await session.server.kill()

        return before

    return hook


def test_a_restart_mid_burst_starts_a_new_series() -> None:
    """The server dies at request 101: only the new process' requests are judged (a fresh process starts small)."""
    outcome = check(fixture_target("session-pileup"), hook=kill_once_at(101))
    assert outcome.restarts == 1 and outcome.verdict is not None
    assert outcome.verdict.refused == BURST - 100


# -- wired into `mcpfuzz run` ---------------------------------------------------------------------


def counted_run(tmp_path: Path, *server_args: str) -> tuple[subprocess.CompletedProcess[str], dict]:
    """`mcpfuzz run --launch` of the fixture, the catalogue only, ended by its work (the budget only a bound)."""
    from tests.conftest import run_cli

    port = free_port()
    url = f"http://127.0.0.1:{port}/mcp"
    launch = " ".join([sys.executable, str(HTTP_SERVER), "--port", str(port), *server_args])
    result = run_cli(["run", url, "--launch", launch, "--phases", "catalogue", "--max-examples", "1", "--budget",
                      "120", "--json", "report.json"], cwd=tmp_path, timeout=240)
    return result, json.loads((tmp_path / "report.json").read_text())


@pytest.mark.parametrize("bug", ["session-pileup", None])
def test_run_with_launch_reports_the_pileup_once_and_saves_no_transcript_for_it(tmp_path, bug: str | None) -> None:
    """After the catalogue, the burst runs; the finding is observed (no single frame replays it)."""
    result, report = counted_run(tmp_path, *(["--bug", bug] if bug else []))
    if bug is None:
        assert result.returncode == 0 and report["findings"] == [], result.stdout + result.stderr
        return
    assert result.returncode == 1, result.stdout + result.stderr
    [finding] = report["findings"]
    assert finding["oracle"] == "session-leak" and finding["observed"] and finding["severity"] == "medium"
    assert "300 refused requests" in finding["message"] and finding["corpus_path"] is None
    assert not list((tmp_path / "corpus").glob("*session-leak*"))


def test_a_run_that_counts_its_examples_sends_the_whole_burst_to_a_slow_server(tmp_path: Path) -> None:
    """20 ms per POST (a loaded machine's pace) fits under 200 refusals in the burst's few seconds of a timed run; a
    run that counts its examples sends all 300, so the finding does not depend on the machine's speed."""
    result, report = counted_run(tmp_path, "--bug", "session-pileup", "--delay-ms", "20")
    assert result.returncode == 1, result.stdout + result.stderr
    [finding] = report["findings"]
    assert finding["oracle"] == "session-leak" and "300 refused requests" in finding["message"], finding
