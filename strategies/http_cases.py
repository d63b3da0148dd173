"""Cases that only exist over streamable HTTP: foreign Origin, session ids, headers that disagree with the body."""

from __future__ import annotations

from collections.abc import Iterator

from mcpfuzz.strategies.messages import FrameBuilder, initialize_params

from mcpfuzz.jsonrpc.expectation import Expectation, HttpRule, SeverityName
from mcpfuzz.jsonrpc.frame import Case
from mcpfuzz.jsonrpc.ids import ABSENT
from mcpfuzz.jsonrpc.oracle_ids import OracleId
from mcpfuzz.jsonrpc.versions import Era

FAMILY = "http"
# Never resolved or contacted: `.example` is reserved (RFC 2606); it only fills the Origin header.
FOREIGN_ORIGIN = "http://mcpfuzz-rebinding.example"
UNKNOWN_SESSION = "mcpfuzz-unknown-session-0000"
HEADER_MISMATCH = -32020


def _status(judge: OracleId, statuses: tuple[int, ...], severity: SeverityName, why: str, rid: object,
            codes: tuple[int, ...] = (), *, served_ok: bool = False) -> Expectation:
    """An HTTP-level expectation: the allowed statuses, how bad another one is, and the rule it rests on.

    `id` is the frame's id, for error bodies to carry; JSON-RPC oracles do not judge these cases.
    `served_ok`: the rule binds only a server that refuses the request (HttpRule.served_ok).
    """
    return Expectation(judge=judge, reply=False, note=why, id=rid,
                       http=HttpRule(statuses, severity, codes, served_ok=served_ok))


def http_cases(b: FrameBuilder, *, tool: str | None, has_session: bool) -> Iterator[Case]:
    """The HTTP family for the negotiated era; `has_session` when the server handed out an Mcp-Session-Id."""
    method = b.barrier_method
    rid = b.fresh_id()
    yield Case("origin-foreign", FAMILY, f"{method} with a foreign Origin header",
               b.frame(method, {} if b.era is Era.MODERN else ABSENT, rid),
               _status(OracleId.ORIGIN_CHECK, (403,), "medium", "servers MUST refuse an invalid Origin with 403 "
                       "(DNS rebinding protection)", rid), http_headers=(("Origin", FOREIGN_ORIGIN),))
    if b.era is Era.LEGACY:
        yield from _legacy_cases(b, has_session)
    else:
        yield from _modern_cases(b, tool)


def _legacy_cases(b: FrameBuilder, has_session: bool) -> Iterator[Case]:
    yield Case("initialize-bad-accept", FAMILY, "initialize refused for its Accept header",
               b.frame("initialize", initialize_params(b.version), b.fresh_id()),
               Expectation(judge=OracleId.SESSION_LEAK, reply=False, note="a refused request must not open a session"),
               fresh=True, era=Era.LEGACY, http_headers=(("Accept", "text/plain"),))
    if not has_session:
        return
    rid = b.fresh_id()
    yield Case("session-unknown", FAMILY, "ping with an Mcp-Session-Id the server never issued",
               b.frame("ping", ABSENT, rid),
               _status(OracleId.HTTP_STATUS, (404,), "medium", "a request with an unknown or ended session id MUST get "
                       "404", rid), http_headers=(("Mcp-Session-Id", UNKNOWN_SESSION),))
    # Streamable HTTP 2025-03-26 on, "Session Management": "Servers that require a session ID SHOULD respond to
    # requests without an Mcp-Session-Id header (other than initialization) with HTTP 400". Handing out a session
    # id does not make it required: a server that serves the ping anyway (a temporary session) is right, so the
    # case is its own probe, and only a refusal other than 400 is a finding.
    rid = b.fresh_id()
    yield Case("session-missing", FAMILY, "ping without the Mcp-Session-Id of the session",
               b.frame("ping", ABSENT, rid),
               _status(OracleId.HTTP_STATUS, (400,), "low", "a server that requires a session SHOULD answer a request "
                       "without one with 400", rid, served_ok=True), http_headers=(("Mcp-Session-Id", None),))


def _modern_cases(b: FrameBuilder, tool: str | None) -> Iterator[Case]:
    why = "a header that disagrees with the body MUST get 400 with error -32020 (HeaderMismatch)"
    mismatches: list[tuple[str, str, tuple[str, str | None], str]] = [
        ("header-method-mismatch", "server/discover with Mcp-Method: tools/list", ("Mcp-Method", "tools/list"), why),
        ("header-method-missing", "server/discover without Mcp-Method", ("Mcp-Method", None),
         "a missing required header MUST get 400 with -32020"),
        ("header-version-mismatch", "MCP-Protocol-Version: 2025-06-18 on a 2026-07-28 body",
         ("MCP-Protocol-Version", "2025-06-18"), why),
    ]
    for case_id, title, header, rule in mismatches:
        rid = b.fresh_id()
        yield Case(case_id, FAMILY, title, b.frame("server/discover", {}, rid),
                   _status(OracleId.HTTP_STATUS, (400,), "medium", rule, rid, codes=(HEADER_MISMATCH,)),
                   http_headers=(header,))
    if tool is not None:
        rid = b.fresh_id()
        yield Case("header-name-mismatch", FAMILY, f"tools/call of {tool} with Mcp-Name naming another tool",
                   b.frame("tools/call", {"name": tool, "arguments": {}}, rid),
                   _status(OracleId.HTTP_STATUS, (400,), "medium", why, rid, codes=(HEADER_MISMATCH,)),
                   http_headers=(("Mcp-Name", "mcpfuzz-other-tool"),))
    rid = b.fresh_id()
    yield Case("session-stale", FAMILY, "server/discover carrying a stale Mcp-Session-Id",
               b.frame("server/discover", {}, rid),
               _status(OracleId.HTTP_STATUS, (200,), "low", "2026-07-28 has no sessions: a stateless server should "
                       "ignore a leftover session id, not refuse the request", rid),
               http_headers=(("Mcp-Session-Id", UNKNOWN_SESSION),))
