"""Lifecycle cases, each on a fresh server process: what comes before and around the handshake."""

from __future__ import annotations

from mcpfuzz.strategies.messages import FrameBuilder, initialize_params

from mcpfuzz.jsonrpc import expectation as ex
from mcpfuzz.jsonrpc.encode import dumps
from mcpfuzz.jsonrpc.expectation import Expectation
from mcpfuzz.jsonrpc.frame import Case
from mcpfuzz.jsonrpc.oracle_ids import OracleId
from mcpfuzz.jsonrpc.parts.version_check import VersionCheck
from mcpfuzz.jsonrpc.versions import LATEST_LEGACY, Era

UNKNOWN_VERSION = "1999-01-01"


def discover_first(version: str, rid: int) -> Case:
    """`server/discover` as the very first frame: how the era is negotiated (any answer is fine)."""
    builder = FrameBuilder(Era.MODERN, version)
    return Case("discover-first", "lifecycle", "server/discover as the first frame",
                builder.frame("server/discover", {}, rid), ex.any_answer(rid, "server/discover"),
                fresh=True, patient=True)


def initialize_case(version: str, rid: int, *, discover_failed: bool, capabilities: dict | None = None) -> Case:
    """The legacy handshake request, judged (the probe sends it), declaring the client `capabilities` the session
    serves: the process it handshakes is the one the calls go to, and a server asks only for what was declared."""
    builder = FrameBuilder(Era.LEGACY, LATEST_LEGACY)
    expect = Expectation(judge=OracleId.NO_HANG, id=rid, result_ok=True, error_ok=False, well_formed=True,
                         method="initialize", parts=(VersionCheck(discover_failed=True),) if discover_failed else ())
    frame = builder.frame("initialize", initialize_params(version, capabilities), rid)
    return Case("initialize", "probe", "initialize", frame, expect, patient=True, era=Era.LEGACY)


def lifecycle(era: Era) -> list[Case]:
    """Requests before, and odd handshakes, each on a fresh process (no handshake of ours first)."""
    b = FrameBuilder(Era.LEGACY, LATEST_LEGACY, next_id=500)
    cases = []
    rid = b.fresh_id()
    cases.append(Case("request-before-initialize", "lifecycle", "tools/list before initialize",
                      b.frame("tools/list", {}, rid),
                      ex.any_answer(rid, note="before the handshake any error is correct"), fresh=True, era=Era.LEGACY))
    cases.append(Case("notification-before-initialize", "lifecycle", "notifications/initialized before initialize",
                      b.frame("notifications/initialized"), ex.no_reply(), fresh=True, era=Era.LEGACY))
    first, second = b.fresh_id(), b.fresh_id()
    cases.append(Case("initialize-twice", "lifecycle", "initialize a second time",
                      b.frame("initialize", initialize_params(), second), ex.any_answer(second),
                      setup=(b.frame("initialize", initialize_params(), first), b.frame("notifications/initialized")),
                      fresh=True, era=Era.LEGACY))
    first, rid = b.fresh_id(), b.fresh_id()
    # A ping once initialize is answered and before notifications/initialized: MCP allows it, no SDK client sends it,
    # and a server whose handshake reads exactly initialize then initialized ends on it.
    cases.append(Case("ping-before-initialized", "lifecycle", "ping after the initialize answer, before initialized",
                      b.frame("ping", id=rid), ex.any_answer(rid, "ping"),
                      setup=(b.frame("initialize", initialize_params(), first),), fresh=True, era=Era.LEGACY))
    rid = b.fresh_id()
    cases.append(Case("initialize-unknown-version", "lifecycle", f"initialize asking for {UNKNOWN_VERSION}",
                      b.frame("initialize", initialize_params(UNKNOWN_VERSION), rid),
                      Expectation(judge=OracleId.VERSION_NEGOTIATION, id=rid, result_ok=True, error_ok=True,
                                  well_formed=True, method="initialize",
                                  parts=(VersionCheck(initialize=UNKNOWN_VERSION, refusal_ok=era is Era.MODERN),)),
                      fresh=True, patient=True, era=Era.LEGACY))
    rid = b.fresh_id()
    no_params = dumps({"jsonrpc": "2.0", "id": rid, "method": "initialize"})
    if era is Era.LEGACY:
        expect = ex.invalid_params(rid, also=frozenset({ex.INVALID_REQUEST}))
    else:
        expect = Expectation(judge=OracleId.INVALID_PARAMS, id=rid,
                             note="a modern server may refuse initialize with any error")
    cases.append(Case("initialize-without-params", "lifecycle", "initialize without params", no_params, expect,
                      fresh=True, era=Era.LEGACY))
    return cases
