"""What the correct answer to a frame is, following JSON-RPC 2.0 and the negotiated MCP version."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from mcpfuzz.jsonrpc.ids import ABSENT

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603


@dataclass(frozen=True)
class Expectation:
    """The answers a frame may correctly get, and which oracle judges a wrong one.

    `judge` is the oracle id that reports a wrong code or a wrong kind of answer. `id` is the
    request id the reply must carry (ABSENT when no reply is due, None for id null). `well_formed`
    says the frame is a valid MCP request, so silence is `no-hang`'s (critical); silence on an
    invalid request with a readable id is the judge's (high).
    """

    judge: str
    reply: bool = True
    id: Any = ABSENT
    id_recoverable: bool = True
    codes: frozenset[int] = frozenset()
    error_ok: bool = True
    result_ok: bool = False
    null_id_ok: bool = False
    well_formed: bool = False
    method: str | None = None
    batch_ids: tuple[Any, ...] = ()
    batch_replies_ok: bool = False
    note: str = ""
    extra: dict = field(default_factory=dict, hash=False, compare=False)

    def describe(self) -> str:
        """Say in words what a correct server answers."""
        statuses = self.extra.get("http_status")
        if statuses:
            codes = self.extra.get("codes")
            error = f" with error {'/'.join(map(str, codes))}" if codes else ""
            return f"HTTP {'/'.join(map(str, statuses))}{error}"
        if not self.reply:
            return "no reply"
        parts = []
        if self.result_ok:
            parts.append("a result")
        if self.error_ok:
            parts.append("error " + "/".join(str(c) for c in sorted(self.codes, reverse=True)) if self.codes
                         else "an error")
        who = "id null" if self.id is None or self.id is ABSENT else f"its id {_show(self.id)}"
        if self.null_id_ok and self.id is not None and self.id is not ABSENT:
            who += " (or null)"
        text = " or ".join(parts) + f" with {who}"
        return f"{text}; {self.note}" if self.note else text


def _show(value: Any) -> str:
    from mcpfuzz.jsonrpc.ids import show_id

    return show_id(value)


def parse_error() -> Expectation:
    """JSON-RPC 2.0 section 5.1: invalid JSON gets -32700 with id null."""
    return Expectation(judge="parse-error", id=None, id_recoverable=False, codes=frozenset({PARSE_ERROR}))


def invalid_request(id: Any = None, *, null_id_ok: bool = False, codes: frozenset[int] | None = None
                    ) -> Expectation:
    """JSON-RPC 2.0 section 5: an invalid request gets -32600 with its id, or null when unreadable."""
    recoverable = id is not None and id is not ABSENT
    return Expectation(judge="invalid-request", id=id if recoverable else None, id_recoverable=recoverable,
                       codes=codes or frozenset({INVALID_REQUEST}), null_id_ok=null_id_ok)


def method_not_found(id: Any) -> Expectation:
    """JSON-RPC 2.0 section 5.1: an unknown method gets -32601."""
    return Expectation(judge="method-not-found", id=id, codes=frozenset({METHOD_NOT_FOUND}))


def invalid_params(id: Any, *, also: frozenset[int] = frozenset(), result_ok: bool = False,
                   note: str = "") -> Expectation:
    """Bad params for a known method get -32602 (plus any codes the spec also allows here)."""
    return Expectation(judge="invalid-params", id=id, codes=frozenset({INVALID_PARAMS}) | also,
                       result_ok=result_ok, note=note)


def result(id: Any, method: str, *, error_ok: bool = False, judge: str = "no-hang") -> Expectation:
    """A valid request: a result (of `method`'s shape) with its id."""
    return Expectation(judge=judge, id=id, result_ok=True, error_ok=error_ok, well_formed=True, method=method)


def any_answer(id: Any, method: str | None = None, *, judge: str = "no-hang", note: str = "") -> Expectation:
    """Any result or error is correct; only silence, a crash or a wrong id is a finding."""
    return Expectation(judge=judge, id=id, result_ok=True, error_ok=True, well_formed=True, method=method,
                       note=note)


def no_reply(judge: str = "notification-silent") -> Expectation:
    """Notifications and responses sent to the server get no reply at all."""
    return Expectation(judge=judge, reply=False, id=ABSENT, id_recoverable=False)
