"""`session-leak`, the memory side: a burst of refused requests must not make a launched server grow.

Streamable HTTP (2025-03-26 on): a request the server refuses (a 4xx: bad Accept, bad Content-Type,
unknown or missing session id, headers that disagree with the body) must not create a session. The
per-exchange oracle sees a refusal that hands out an Mcp-Session-Id; a server that keeps a session
for each refusal without saying so is seen only in its memory. So, when mcpfuzz launched the server
(`--launch`, so that its process tree can be watched), send a bounded burst of refusals through the
session, sample the tree's RSS every few requests, and judge the series as `memory-growth` does.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from mcpfuzz.engine.monitor.resources import ResourceSampler, Sample
from mcpfuzz.engine.session.session import Session
from mcpfuzz.jsonrpc.exchange import Exchange
from mcpfuzz.jsonrpc.expectation import Expectation
from mcpfuzz.jsonrpc.frame import Case
from mcpfuzz.jsonrpc.ids import ABSENT
from mcpfuzz.jsonrpc.json_value import Json
from mcpfuzz.jsonrpc.oracle_ids import OracleId
from mcpfuzz.jsonrpc.parts.http_rule import HttpRule
from mcpfuzz.jsonrpc.versions import Era
from mcpfuzz.oracles.http import SessionPileupFailure
from mcpfuzz.oracles.memory import KIB, MIB, Growth, GrowthLimits, judge_growth
from mcpfuzz.strategies.http_cases import FAMILY, UNKNOWN_SESSION
from mcpfuzz.strategies.messages import FrameBuilder
from mcpfuzz.transport.base import TransportKind

# Far above the catalogue's ids (from 100) and the harness's (from 10000): a late answer to a refusal
# is never taken for an answer to anything else.
FIRST_ID = 900_000
SAMPLE_EVERY = 5  # requests between two samples: ~60 samples for a 300-request burst, ~2 ms each
# A 300-request burst leaves ~240 requests after warm-up. Measured slope per refused request: ~70 KB on
# the fixture that keeps a 64 KiB session per refusal, 0 on the clean fixture, 0 to 0.9 KB on the mcp
# SDK servers (mcp 2.x in the legacy era is the highest, and levels off over a few thousand). The floors
# sit between: 16 KB per request (under a quarter of the bug, ~18 times the SDKs) and 3 MB in all, which
# keeps a burst cut short by the deadline quiet unless its slope is steep.
PILEUP_LIMITS = GrowthLimits(min_growth=3 * MIB, min_slope=16 * KIB)
UNPARSEABLE = b'{"jsonrpc": "2.0", "id": '


@dataclass(frozen=True)
class Refusal:
    """One kind of request a conforming server refuses: what changes, and the statuses it should get."""

    id: str
    title: str
    headers: tuple[tuple[str, str | None], ...]
    statuses: tuple[int, ...]
    era: Era | None = None  # None: both eras
    body: bytes | None = None  # instead of the era's cheapest request


# Generic refusals of the transport, in rotation, so that no single code path of the server is measured.
REFUSALS = (
    Refusal("accept", "Accept without application/json and text/event-stream", (("Accept", "text/plain"),),
            (406, 400)),
    Refusal("content-type", "Content-Type: text/plain", (("Content-Type", "text/plain"),), (415, 400)),
    Refusal("unparseable", "a body that is not JSON", (), (400,), body=UNPARSEABLE),
    Refusal("session-unknown", "an Mcp-Session-Id the server never issued", (("Mcp-Session-Id", UNKNOWN_SESSION),),
            (404,), Era.LEGACY),
    Refusal("session-missing", "no Mcp-Session-Id", (("Mcp-Session-Id", None),), (400,), Era.LEGACY),
    Refusal("header-mismatch", "Mcp-Method naming another method", (("Mcp-Method", "tools/list"),), (400,),
            Era.MODERN),
)


@dataclass(frozen=True)
class PileupVerdict:
    """A pile-up: the failure, the last refused exchange (its frames are the reproducer), and the figures."""

    failure: SessionPileupFailure
    exchange: Exchange
    growth: Growth
    refused: int
    seconds: float


@dataclass
class _Series:
    """The samples of one server process; a restart starts a new one (a fresh process starts small)."""

    sampler: ResourceSampler
    process: int  # the session's process it samples (every start is a new one)
    sent: int = 0
    refused: int = 0
    samples: list[Sample] = field(default_factory=list)
    last: Exchange | None = None

    def record(self, exchange: Exchange) -> bool:
        """Count one request sent to this process (sampling every few); True when it was refused."""
        self.sent += 1
        refused = _refused(exchange)
        if refused:
            self.refused += 1
            self.last = exchange
        if self.sent % SAMPLE_EVERY == 0:
            self.sample()
        return refused

    def sample(self) -> None:
        """One sample at the current request count (none once the process is gone)."""
        sample = self.sampler.sample(self.sent)
        if sample is not None:
            self.samples.append(sample)


async def check_session_pileup(session: Session, *, burst: int = 300, deadline: float
                               ) -> PileupVerdict | None:
    """Send up to `burst` refused requests until `deadline` (time.monotonic()); a verdict if memory piled up.

    None at once (nothing sent) unless the session speaks streamable HTTP to a server mcpfuzz launched.
    Kinds of refusal the server accepts are dropped from the rotation; with none left, it stops.
    Raises what `Session.run_case` raises when the server cannot be brought back.
    """
    if session.transport is not TransportKind.STREAMABLE_HTTP or session.server.pid is None:
        return None
    started = time.monotonic()
    builder = FrameBuilder(session.era or Era.LEGACY, session.version, next_id=FIRST_ID)
    kinds = [refusal for refusal in REFUSALS if refusal.era in (None, builder.era)]
    series: _Series | None = None
    for sent in range(burst):
        if not kinds or time.monotonic() >= deadline:
            break
        await session.ensure_ready()
        series = _current(series, session)
        refusal = kinds[sent % len(kinds)]
        exchange = await session.run_case(_case(builder, refusal))
        series = _current(series, session)  # run_case restarts a server that died (or a hook found dead)
        if not series.record(exchange):
            kinds.remove(refusal)  # accepted (or unanswered): not a refusal on this server
    return _verdict(series, time.monotonic() - started) if series is not None else None


def _current(series: _Series | None, session: Session) -> _Series:
    """The series of the running process: the same one, or a new one after a restart."""
    if series is not None and series.process == session.process:
        return series
    pid = session.server.pid
    assert pid is not None  # launched: there is always a process behind the URL
    series = _Series(ResourceSampler(pid), session.process)
    series.sample()
    return series


def _case(builder: FrameBuilder, refusal: Refusal) -> Case:
    """The era's cheapest request (a fresh id), or the refusal's own body, sent with the refusal's headers."""
    method = builder.barrier_method
    if refusal.body is None:
        rid: Json = builder.fresh_id()
        data = builder.frame(method, {} if builder.era is Era.MODERN else ABSENT, rid)
        title = f"{method} refused for {refusal.title}"
    else:
        rid, data, title = None, refusal.body, f"refused for {refusal.title}"  # JSON-RPC 2.0 5.1: id null
    expect = Expectation(judge=OracleId.SESSION_LEAK, reply=False, id=rid,
                         note=f"{refusal.title} is refused; a refused request must not create a session",
                         parts=(HttpRule(refusal.statuses, "medium"),))
    return Case(f"pileup-{refusal.id}", FAMILY, title, data, expect, http_headers=refusal.headers)


def _refused(exchange: Exchange) -> bool:
    """A 4xx answer: the server refused the request (a 5xx is a failure, not a refusal)."""
    http = exchange.http
    return http is not None and http.status is not None and 400 <= http.status < 500


def _verdict(series: _Series, seconds: float) -> PileupVerdict | None:
    """Judge the series of the current process; a verdict only on growth with a refused exchange to show."""
    if series.sent % SAMPLE_EVERY:
        series.sample()  # the requests after the last regular sample count too
    growth = judge_growth(series.samples, PILEUP_LIMITS)
    if growth is None or series.last is None:
        return None
    failure = SessionPileupFailure(series.refused, growth)
    return PileupVerdict(failure, series.last, growth, series.refused, seconds)
