"""Cases that only exist over streamable HTTP: foreign Origin, session ids, headers that disagree with the body."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from mcpfuzz.strategies.messages import FrameBuilder, initialize_params

from mcpfuzz.jsonrpc.expectation import Expectation, SeverityName
from mcpfuzz.jsonrpc.frame import Case
from mcpfuzz.jsonrpc.ids import ABSENT
from mcpfuzz.jsonrpc.json_value import Json
from mcpfuzz.jsonrpc.oracle_ids import OracleId
from mcpfuzz.jsonrpc.param_headers import ParamHeader, header_text, value_at
from mcpfuzz.jsonrpc.parts.http_rule import HttpRule
from mcpfuzz.jsonrpc.versions import Era

FAMILY = "http"
# Never resolved or contacted: `.example` is reserved (RFC 2606); it only fills the Origin header.
FOREIGN_ORIGIN = "http://mcpfuzz-rebinding.example"
FOREIGN_HOST = "mcpfuzz-rebinding.example"
UNKNOWN_SESSION = "mcpfuzz-unknown-session-0000"
HEADER_MISMATCH = -32020
# Broken Base64 inside the sentinel: a header value with invalid characters once decoded ("Server Validation").
INVALID_SENTINEL = "=?base64?%%mcpfuzz%%?="


@dataclass(frozen=True)
class MirroredCall:
    """A valid tools/call of a tool that mirrors an argument into a header (x-mcp-header), the argument present."""

    tool: str
    arguments: dict[str, Any]
    header: ParamHeader

    @property
    def text(self) -> str:
        """The argument's header text, as a conforming client sends it."""
        return header_text(value_at(self.arguments, self.header.path)) or ""


def _status(judge: OracleId, statuses: tuple[int, ...], severity: SeverityName, why: str, rid: Json,
            codes: tuple[int, ...] = (), *, served_ok: bool = False) -> Expectation:
    """An HTTP-level expectation: the allowed statuses, how bad another one is, and the rule it rests on.

    `id` is the frame's id, for error bodies to carry; JSON-RPC oracles do not judge these cases.
    `served_ok`: the rule binds only a server that refuses the request (HttpRule.served_ok).
    """
    return Expectation(judge=judge, reply=False, note=why, id=rid,
                       parts=(HttpRule(statuses, severity, codes, served_ok=served_ok),))


def http_cases(b: FrameBuilder, *, tool: str | None, has_session: bool,
               mirrored: MirroredCall | None = None) -> Iterator[Case]:
    """The HTTP family for the negotiated era; `has_session` when the server handed out an Mcp-Session-Id;
    `mirrored`, a call whose Mcp-Param header is sent missing, mismatched and invalid (2026-07-28)."""
    method = b.barrier_method
    rid = b.fresh_id()
    yield Case("origin-foreign", FAMILY, f"{method} with a foreign Origin header",
               b.frame(method, {} if b.era is Era.MODERN else ABSENT, rid),
               _status(OracleId.ORIGIN_CHECK, (403,), "medium", "servers MUST refuse an invalid Origin with 403 "
                       "(DNS rebinding protection)", rid), http_headers=(("Origin", FOREIGN_ORIGIN),))
    # A DNS-rebinding request that carries no Origin. The spec's rule is on Origin only (streamable HTTP,
    # "Security"): it says nothing of Host, so serving it (or refusing it, 421 as the Python SDK does, 403 as the
    # TypeScript SDK does) is right; only what every request must not do (a 5xx, a crash) is judged.
    rid = b.fresh_id()
    yield Case("host-foreign", FAMILY, f"{method} with a foreign Host header and no Origin",
               b.frame(method, {} if b.era is Era.MODERN else ABSENT, rid),
               Expectation(judge=OracleId.HTTP_STATUS, reply=False, id=rid,
                           note="the spec sets no rule for a foreign Host: any answer but a failure is right"),
               http_headers=(("Host", FOREIGN_HOST),))
    if b.era is Era.LEGACY:
        yield from _legacy_cases(b, has_session)
    else:
        yield from _modern_cases(b, tool)
        if mirrored is not None:
            yield from _param_header_cases(b, mirrored)


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


def _param_header_cases(b: FrameBuilder, call: MirroredCall) -> Iterator[Case]:
    """2026-07-28 streamable-http, "Server Behavior for Custom Headers": a server MUST reject a call whose mirrored
    header is missing while the body has the value, does not match the body, or holds invalid characters, with
    400 and -32020 (HeaderMismatch)."""
    name = call.header.header
    variants = (
        ("param-header-missing", f"without {name}", None, "a mirrored argument present in the body with its "
         "Mcp-Param header missing MUST get 400 with -32020"),
        ("param-header-mismatch", f"with {name}: {_other(call.text)}", _other(call.text),
         "an Mcp-Param header that does not match the body MUST get 400 with -32020"),
        ("param-header-invalid", f"with {name} in broken Base64", INVALID_SENTINEL,
         "an Mcp-Param header with invalid characters MUST get 400 with -32020"),
    )
    for case_id, how, value, rule in variants:
        rid = b.fresh_id()
        yield Case(case_id, FAMILY, f"tools/call of {call.tool} {how}",
                   b.frame("tools/call", {"name": call.tool, "arguments": call.arguments}, rid),
                   _status(OracleId.HTTP_STATUS, (400,), "medium", rule, rid, codes=(HEADER_MISMATCH,)),
                   http_headers=((name, value),))


def _other(text: str) -> str:
    """A plain header text other than `text`, of the same kind (a number for a number, a boolean for one)."""
    if text in ("true", "false"):
        return "false" if text == "true" else "true"
    if text.lstrip("-").isdigit():
        return str(int(text) + 1)
    return "mcpfuzz-other" if text != "mcpfuzz-other" else "mcpfuzz-another"
