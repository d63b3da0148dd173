"""Windows over streamable HTTP: a window's cases are POSTs in flight at once, each judged as if it ran alone."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path

import anyio
import pytest
from mcpfuzz.strategies.catalogue import CatalogueContext, envelope_family, id_family, parse_family
from mcpfuzz.strategies.messages import FrameBuilder

from mcpfuzz.engine.session.session import Session, SessionOptions
from mcpfuzz.engine.session.windows import run_in_order
from mcpfuzz.jsonrpc import expectation as ex
from mcpfuzz.jsonrpc.encode import dumps, request
from mcpfuzz.jsonrpc.exchange import Exchange
from mcpfuzz.jsonrpc.frame import Case
from mcpfuzz.jsonrpc.versions import LATEST_LEGACY, Era
from mcpfuzz.transport.base import TransportKind
from mcpfuzz.transport.http_target import HttpTarget
from tests.conftest import run_cli
from tests.diffs import assert_same_lines
from tests.http_servers import HTTP_SERVER, run_http_server, start_http_server
from tests.test_pipelined_windows import CASES, FIRST_ID, cases, findings, own_answers

pytestmark = pytest.mark.process

OPTIONS = SessionOptions(timeout=10.0, grace=0.05)  # generous: a test waits this long only when something is broken
RIDS = list(range(FIRST_ID, FIRST_ID + CASES))


class Ran:
    """What one session did: each case's exchange, whether each window settled, and the notices it gave."""

    def __init__(self) -> None:
        self.exchanges: list[Exchange] = []
        self.windows: list[bool] = []
        self.notices: list[str] = []
        self.pipelines_after = True
        self.restarts = 0


def run(target: HttpTarget, *, pipelined: bool, made: Sequence[Case] | None = None) -> Ran:
    """Every case on one session over HTTP, in windows (`run_in_order`) or each alone."""
    ran = Ran()
    made = list(made if made is not None else cases())

    async def main() -> None:
        with anyio.fail_after(90):  # a hang is a failure, not a stuck test run
            async with Session(target, OPTIONS) as session:
                assert session.transport is TransportKind.STREAMABLE_HTTP
                session.on_notice = ran.notices.append
                original = session.run_window

                async def counted(window: Sequence[Case]) -> list[Exchange] | None:
                    exchanges = await original(window)
                    ran.windows.append(exchanges is not None)
                    return exchanges

                session.run_window = counted  # type: ignore[method-assign]
                if pipelined:
                    ran.exchanges = [exchange async for exchange in run_in_order(session, made)]
                else:
                    ran.exchanges = [await session.run_case(case) for case in made]
                ran.pipelines_after = session.pipelines
                ran.restarts = session.restarts

    anyio.run(main)
    return ran


def streamable(url: str) -> HttpTarget:
    return HttpTarget(url, transport=TransportKind.STREAMABLE_HTTP)


def test_a_window_is_posts_in_flight_judged_as_alone_on_a_buggy_server() -> None:
    # Unknown methods answered with -32600 instead of -32601: a wrong answer on every case.
    with start_http_server("--server-bug", "method-not-found-code") as url:
        pipelined = run(streamable(url), pipelined=True)
        alone = run(streamable(url), pipelined=False)
    assert pipelined.windows == [True]  # one window, settled: its six cases were judged from their own POSTs
    assert [own_answers(e) for e in pipelined.exchanges] == [[rid] for rid in RIDS]
    assert all(e.http is not None and e.http.status == 200 and e.barrier_answered for e in pipelined.exchanges)
    assert findings(pipelined.exchanges) == findings(alone.exchanges)
    assert [f[0] for f in findings(pipelined.exchanges)] == ["method-not-found"]
    assert pipelined.notices == [] and pipelined.pipelines_after


def test_a_clean_server_gives_no_findings_in_windows() -> None:
    with start_http_server("--sse-responses") as url:  # answers on SSE streams, one per POST
        ran = run(streamable(url), pipelined=True)
    assert ran.windows == [True]
    assert [own_answers(e) for e in ran.exchanges] == [[rid] for rid in RIDS]
    assert findings(ran.exchanges) == []


def test_load_refusals_under_concurrency_are_run_alone_never_findings() -> None:
    # --busy: a POST arriving while another is handled gets 429 or 503 (load shedding, not a bug).
    with run_http_server("--busy") as server:
        ran = run(streamable(server.url), pipelined=True, made=cases() + cases_from(FIRST_ID + CASES))
        log = server.stderr_tail(200)
    assert "busy: refused a POST" in log  # the window did meet the refusals this test is about
    assert ran.windows == [False]  # sent back, and no window after it while the session backs off
    assert not ran.pipelines_after
    assert [own_answers(e) for e in ran.exchanges] == [[rid] for rid in range(FIRST_ID, FIRST_ID + 2 * CASES)]
    assert all(e.http is not None and e.http.status == 200 for e in ran.exchanges)
    assert findings(ran.exchanges) == []
    assert len(ran.notices) == 1 and "one at a time" in ran.notices[0]


def cases_from(first: int) -> list[Case]:
    """More unknown-method cases, as `cases()` makes them, with ids from `first` on."""
    return [Case(f"unknown-{rid}", "window", f"unknown method {rid}",
                 dumps(request(f"mcpfuzz/unknown-{rid}", {}, rid)), ex.method_not_found(rid))
            for rid in range(first, first + CASES)]


def test_a_crash_in_a_window_is_attributed_to_exactly_the_case_that_caused_it() -> None:
    crasher = FIRST_ID + 3
    launch = (sys.executable, str(HTTP_SERVER), "--port", "{port}", "--exit-on", f"mcpfuzz/unknown-{crasher}")
    target = HttpTarget("http://127.0.0.1:{port}/mcp", launch=launch, transport=TransportKind.STREAMABLE_HTTP)
    pipelined = run(target, pipelined=True)
    alone = run(target, pipelined=False)
    assert pipelined.windows == [False]  # the exit sent the window back: its cases ran alone on a fresh server
    assert [e.case.expect.id for e in pipelined.exchanges if e.crash is not None] == [crasher]
    assert [e.case.expect.id for e in alone.exchanges if e.crash is not None] == [crasher]
    # The same finding on the same case (the message names the port, which each launch picks anew).
    assert [f[:2] for f in findings(pipelined.exchanges)] == [f[:2] for f in findings(alone.exchanges)]
    assert [f[:2] for f in findings(pipelined.exchanges)] == [("no-crash", f"window/unknown-{crasher}")]
    assert pipelined.restarts == alone.restarts == 1  # the crash's restart; not the one before the re-run
    # A dying server did not refuse for load (a slow start on a loaded machine may bring a notice of its own).
    assert not [notice for notice in pipelined.notices if "one at a time" in notice]


def test_the_same_seed_sends_the_same_frames_over_http(tmp_path: Path) -> None:
    """Catalogue windows and a read-only tool's calls in flight at once: the frame log keeps the cases' order."""
    logs = []
    with start_http_server("--surface") as url:
        for run_number in range(2):
            log = tmp_path / f"frames-{run_number}.log"
            result = run_cli(["run", url, "--seed", "7", "--budget", "90", "--timeout", "5", "--max-examples", "4",
                              "--phases", "catalogue,fuzz", "--read-only", "--corpus", str(tmp_path / f"c{run_number}"),
                              "--log-frames", str(log)], timeout=150)
            assert result.returncode == 0, result.stdout + result.stderr
            logs.append(log.read_bytes())
    assert_same_lines(logs[0], logs[1], what="frames")
    assert logs[0].count(b'"tools/call"') > 20


def catalogue_cases() -> list[Case]:
    """The catalogue's parse, envelope and id families (legacy era): bytes that are not JSON, answers due with id
    null, ids of every type; over HTTP most share windows (told by POST), where stdio runs them alone."""
    builder, context = FrameBuilder(Era.LEGACY, LATEST_LEGACY), CatalogueContext(Era.LEGACY, LATEST_LEGACY)
    return [case for family in (parse_family, envelope_family, id_family) for case in family(builder, context)]


def test_frames_answered_with_id_null_are_told_by_their_post_and_judged_as_alone() -> None:
    made = catalogue_cases()
    by_post_only = [case for case in made if case.shares_posts and not case.pipelinable]
    assert len(by_post_only) >= 5  # the cases this test is about: alone on stdio, in windows over HTTP
    # Parse errors answered -32603, invalid requests whose id is readable answered with id null: findings.
    with start_http_server("--server-bug", "parse-code", "--server-bug", "id-null-invalid") as url:
        pipelined = run(streamable(url), pipelined=True, made=made)
        alone = run(streamable(url), pipelined=False, made=made)
    assert pipelined.windows and all(pipelined.windows)
    assert findings(pipelined.exchanges) == findings(alone.exchanges)
    assert {"parse-error", "id-preserved"} <= {f[0] for f in findings(pipelined.exchanges)}
