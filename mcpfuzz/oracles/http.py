"""Streamable HTTP transport rules: status codes, sessions handed out by refusals, the Origin check."""

from __future__ import annotations

from collections.abc import Iterator

from mcpfuzz.jsonrpc.exchange import ID_CURRENT, Exchange
from mcpfuzz.jsonrpc.http_reply import HttpReply
from mcpfuzz.jsonrpc.oracle_ids import OracleId
from mcpfuzz.jsonrpc.parts.http_rule import HttpRule
from mcpfuzz.jsonrpc.transport_kind import TransportKind
from mcpfuzz.oracles.base import Failure, Scope, Severity, failure_class, register
from mcpfuzz.oracles.memory import Growth

HttpStatusFailure = failure_class(OracleId.HTTP_STATUS, "HTTP status breaks the transport rules")
SessionLeakFailure = failure_class(OracleId.SESSION_LEAK, "Refused request created a session")
OriginCheckFailure = failure_class(OracleId.ORIGIN_CHECK, "Foreign Origin accepted")
_KIB, _MIB = 1024, 1024 * 1024  # binary sizes, as memory-growth reports them


class SessionPileupFailure(Failure):
    """`session-leak` seen in memory: refused requests pile up server-side state (`mcpfuzz.engine.monitor.pileup`).

    The run-level part of session-leak (registered with `Scope.RUN` too): judged by the engine on a
    series of memory samples, not on one exchange; it shares the id so that `--exclude-oracles
    session-leak` and the SARIF rule cover both ways of leaking a session.
    """

    oracle = OracleId.SESSION_LEAK.value
    title = "Refused requests pile up server-side sessions"

    def __init__(self, refused: int, growth: Growth) -> None:
        # Medium, as for a refusal that hands out its session id: nothing breaks at once, but any client
        # that reaches the endpoint can exhaust the server's memory without ever being accepted.
        super().__init__(Severity.MEDIUM, pileup_message(refused, growth), "pileup", server_wide=True)
        self.refused = refused
        self.growth = growth


def pileup_message(refused: int, growth: Growth) -> str:
    """E.g. `300 refused requests (HTTP 4xx) made the server's RSS ... grow by 15.2 MB (about 66 KB each) ...`."""
    return (f"{refused} refused requests (HTTP 4xx) made the server's RSS (its whole process tree) grow by "
            f"{growth.growth / _MIB:.1f} MB over the {growth.requests} requests after warm-up (about "
            f"{growth.slope / _KIB:.0f} KB each; {growth.start_rss / _MIB:.1f} MB to {growth.end_rss / _MIB:.1f} MB "
            f"in {growth.seconds:.1f} s), still growing at the end: a refused request must not create a session, "
            "yet each one seems to leave one (or other state) behind, so any client that can reach the endpoint "
            "can exhaust the server's memory without ever being accepted")


def _streamable(exchange: Exchange) -> HttpReply | None:
    """The POST's reply on streamable HTTP, once it has a status (legacy SSE answers 202 to everything)."""
    http = exchange.http
    if http is None or http.transport is not TransportKind.STREAMABLE_HTTP or http.status is None \
            or exchange.crash is not None:
        return None
    return http


@register(HttpStatusFailure, Severity.MEDIUM, quiet_on_plain=True)
def http_status(exchange: Exchange) -> Iterator[Failure]:
    """Streamable HTTP (2025-03-26 on): 202 and no body for notifications, 400 for bad bodies, no 5xx."""
    http = _streamable(exchange)
    if http is None or http.status is None:  # (_streamable returns only replies with a status)
        return
    expect = exchange.case.expect
    rule = expect.part(HttpRule)
    if http.status >= 500:
        yield HttpStatusFailure(Severity.MEDIUM, f"answered HTTP {http.status}: the server failed on this frame",
                                "5xx", server_wide=True)
    elif rule is not None:
        if expect.judge == OracleId.HTTP_STATUS:
            yield from _wanted_status(exchange, http, rule)
    elif not expect.reply and expect.judge == OracleId.NOTIFICATION_SILENT and not http.refused:
        if http.status != 202 or http.body_size:
            body = f" with a {http.body_size}-byte body" if http.body_size else ""
            yield HttpStatusFailure(Severity.MEDIUM, f"an accepted {expect.note or 'notification'} got HTTP "
                                    f"{http.status}{body}; the spec requires 202 Accepted with no body",
                                    f"notification:{http.status}", server_wide=True)
    elif expect.judge == OracleId.PARSE_ERROR and not expect.result_ok and http.status < 400:
        yield HttpStatusFailure(Severity.MEDIUM, f"an unparseable body got HTTP {http.status}; a server that cannot "
                                "accept a message must answer with an error status such as 400",
                                f"parse:{http.status}", server_wide=True)
    elif http.status == 200 and http.body_size and not http.messages:
        yield HttpStatusFailure(Severity.MEDIUM, f"answered HTTP 200 with content type {http.content_type!r} "
                                "instead of application/json or text/event-stream", "content-type",
                                server_wide=True)


def _wanted_status(exchange: Exchange, http: HttpReply, rule: HttpRule) -> Iterator[Failure]:
    expect = exchange.case.expect
    severity, wanted = Severity.parse(rule.severity), rule.statuses
    if http.status not in wanted:
        if rule.served_ok and http.status is not None and 200 <= http.status < 300 and _served(exchange):
            return  # the request was served: the rule is for servers that refuse it (the case was its own probe)
        yield HttpStatusFailure(severity, f"answered HTTP {http.status}; expected {'/'.join(map(str, wanted))}: "
                                f"{expect.note}", f"{exchange.case.id}:{http.status}")
        return
    codes = rule.codes
    if codes:
        errors = [a.incoming.error_code for a in exchange.responses() if a.incoming.is_error]
        if not any(code in codes for code in errors):
            got = f"error {errors[0]}" if errors else "no JSON-RPC error"
            yield HttpStatusFailure(severity, f"answered HTTP {http.status} with {got}; expected error "
                                    f"{'/'.join(map(str, codes))}: {expect.note}", f"{exchange.case.id}:code")


def _served(exchange: Exchange) -> bool:
    """True when the case got a result carrying its own id."""
    return any(a.incoming.is_result and a.id_tag == ID_CURRENT for a in exchange.responses())


@register(SessionLeakFailure, Severity.MEDIUM, scope=Scope.EXCHANGE | Scope.RUN, quiet_on_plain=True)
def session_leak(exchange: Exchange) -> Iterator[Failure]:
    """A request the server refuses (4xx) must not hand out an Mcp-Session-Id: refusals must cost nothing."""
    http = _streamable(exchange)
    if http is None or not http.refused or not http.session_live:
        return  # an id that answers 404 when used opened nothing (the SDKs hand such ids out)
    yield SessionLeakFailure(Severity.MEDIUM, f"refused with HTTP {http.status} but handed out the session id "
                             f"{(http.session_id or '')[:40]!r}: refused requests can pile up sessions",
                             "refused-session", server_wide=True)


@register(OriginCheckFailure, Severity.MEDIUM, quiet_on_plain=True)
def origin_check(exchange: Exchange) -> Iterator[Failure]:
    """Streamable HTTP, Security: a request with an invalid Origin MUST be refused with 403 (DNS rebinding)."""
    http = _streamable(exchange)
    if http is None or exchange.case.expect.judge != OracleId.ORIGIN_CHECK:
        return
    if http.status != 403:
        yield OriginCheckFailure(Severity.MEDIUM, f"a request with the foreign Origin "
                                 f"{dict(exchange.case.http_headers).get('Origin')!r} got HTTP {http.status}; "
                                 "servers MUST refuse it with 403 (DNS rebinding)", "accepted")
