"""What the correct answer to a frame is, following JSON-RPC 2.0 and the negotiated MCP version."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import Enum
from typing import Any, Literal

from mcpfuzz.jsonrpc.client_check import ClientCheck
from mcpfuzz.jsonrpc.ids import ABSENT
from mcpfuzz.jsonrpc.json_value import Absent, Json
from mcpfuzz.jsonrpc.oracle_ids import OracleId
from mcpfuzz.jsonrpc.task_check import TaskCheck

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
# MCP server/resources up to 2025-11-25: resource not found (2026-07-28 uses INVALID_PARAMS, SEP-2164).
LEGACY_NOT_FOUND = -32002

# A severity by name: the frame model sits below the oracles, so it names their `Severity` rather than import it.
SeverityName = Literal["low", "medium", "high", "critical"]


class ReaderLimit(str, Enum):
    """A limit RFC 8259 lets a JSON reader set; a frame past it may be refused, and silence on it is low."""

    NESTING = "nesting"  # section 9: "may set limits on the maximum depth of nesting"
    SIZE = "size"  # section 9: "may set limits on the size of texts"
    BIG_INTEGER = "big-integer"  # section 6: integers beyond +-(2**53-1) are not interoperable

    def describe(self) -> str:
        """What the frame went past, with the rule that permits refusing it."""
        return {ReaderLimit.NESTING: "nested deeper than a JSON reader must accept (RFC 8259 section 9)",
                ReaderLimit.SIZE: "bigger than a JSON reader must accept (RFC 8259 section 9)",
                ReaderLimit.BIG_INTEGER: "carrying an integer beyond +-(2**53-1), which RFC 8259 section 6 "
                                         "calls not interoperable"}[self]


@dataclass(frozen=True)
class HttpRule:
    """Streamable HTTP: the statuses a correct server answers this request with (read by http-status).

    `severity` is how bad another status is (a SHOULD of the spec is low); `codes` are the JSON-RPC
    error codes the error body must carry, when the rule names one (-32020 HeaderMismatch). `served_ok`:
    the rule binds only servers that refuse the request, so a normal answer (a 2xx carrying a result for
    its id) proves it does not apply (a request without a session, on a server that does not require one).
    """

    statuses: tuple[int, ...]
    severity: SeverityName = "medium"
    codes: tuple[int, ...] = ()
    served_ok: bool = False


@dataclass(frozen=True)
class VersionCheck:
    """What version-negotiation checks on this case's answer besides server/discover's own versions."""

    unsupported: str | None = None  # modern: the request names this unsupported version, so -32022 is due
    initialize: str | None = None  # legacy: initialize asks for this unsupported version
    refusal_ok: bool = False  # ... and may be refused outright (a modern-only server)
    discover_failed: bool = False  # the probe's initialize, after server/discover failed


@dataclass(frozen=True)
class ToolCallCheck:
    """A `tools/call` of a listed tool (read by valid-input-accepted, output-schema and the corpus replay).

    `valid` says the arguments satisfy the tool's inputSchema; `rule` is the schema keyword
    invalid arguments break; `unicode_unsafe` marks a lone surrogate, which a parser may refuse.
    """

    tool: str | None
    valid: bool
    rule: str = ""
    output_schema: Mapping[str, Any] | None = field(default=None, hash=False)
    unicode_unsafe: bool = False
    # A plain JSON-RPC method's declared result schema (OpenRPC): the whole `result` must conform (response-schema).
    result_schema: Mapping[str, Any] | None = field(default=None, hash=False)
    # A plain method's declared error codes: valid params may get these or a JSON-RPC 2.0 code, no other. None: any.
    declared_errors: tuple[int, ...] | None = None


@dataclass(frozen=True)
class ListingCheck:
    """One page of a declared capability's list method (read by declared-served).

    `cursors` are the cursors sent so far, this page's included: a `nextCursor` naming one of them
    again sends a paging client round in a loop for ever.
    """

    capability: str
    page: int = 1
    cursors: tuple[str, ...] = ()


@dataclass(frozen=True)
class ResourceCheck:
    """A `resources/read` (read by declared-served and resource-not-found).

    `listed`: the URI is in resources/list, so it reads without error and `contents[].uri` names it.
    `missing`: the URI was made up to exist nowhere, so the era's not-found error is due.
    """

    uri: str
    listed: bool = False
    missing: bool = False


@dataclass(frozen=True)
class CancelCheck:
    """A request, `notifications/cancelled` for it, then a probe request (read by cancel-respected).

    The probe's answer proves the server had read the cancel: an answer to `request` after it was sent
    clearly after the cancel arrived; one before it may have been on its way already (never a finding).
    With `running`, the request is judged only when it was provably still running (see the oracle).
    """

    request: int
    probe: int
    # Work in flight: `running` is a ping written (with the cancel and the probe, in one write) `pause` seconds after
    # the request; the request unanswered when it was answered was still running when the cancel was read.
    # `latency` is the target's shortest measured answer (seconds; 0: unknown, so no verdict can be proved).
    running: int | None = None
    pause: float = 0.0
    latency: float = 0.0


@dataclass(frozen=True)
class AloneAnswers:
    """The result one request of a concurrent case got when sent alone, before and after the burst.

    None where it got no result (an error, silence, a dead server). Observed by the engine around the case,
    never saved with it: a replay asks again.
    """

    request: int
    before: Any = None
    after: Any = None


@dataclass(frozen=True)
class ConcurrencyCheck:
    """Requests in flight at once (read by concurrency): each `(id, method, subject)` is answered once, with its
    own answer (the shape of its own method, a read's contents for its own URI, and, when every request is
    read-only, not the answer another of them got alone). `subject` is a read's URI, a tool call's tool name, or
    "" for a list. `alone`: what each request got when sent alone, filled in by the engine around the burst.
    `changes_state`: a request may change what the others (or itself, sent again) answer, a tool not annotated
    read-only: no request is sent alone and no answer is compared with another's."""

    requests: tuple[tuple[int, str, str], ...]
    alone: tuple[AloneAnswers, ...] = ()
    changes_state: bool = False


# One more sending of a judged call: the state observed just before it and just after it.
Resent = tuple[tuple[Any, ...], tuple[Any, ...]]


@dataclass(frozen=True)
class StateCheck:
    """A call judged on the state the server shows around it (read by the semantic oracle `judge`).

    `observe`: the requests that show the state, `(method, params)`: a resource list, reads, read-only tools with
    fixed arguments. The engine sends them twice before the case and once after it (`before`, `again`, `after`:
    each request's result, None where it got none); where a change showed, the case is sent again, observed before
    and after each time (`resent`). `item`: use-after-delete, the value the delete was given. The observed answers
    are never saved: a replay observes again.
    """

    judge: OracleId
    observe: tuple[tuple[str, Any], ...]
    item: str = ""
    before: tuple[Any, ...] = ()
    again: tuple[Any, ...] = ()
    after: tuple[Any, ...] = ()
    resent: tuple[Resent, ...] = ()

    def changed(self) -> list[int]:
        """The observations that were stable before the case (the same twice) and differ after it: one that
        changes by itself (a clock, a counter read-only tools may return) differs before and is left out."""
        observed = zip(self.before, self.again, self.after, strict=False)  # empty before the engine filled them
        return [index for index, (first, second, after) in enumerate(observed)
                if first is not None and first == second and after is not None and after != second]

    def confirmed(self) -> list[int]:
        """The changed observations that, each time the case was sent again, held still until it and changed
        with it (a clock that ticked once during the call does not tick in step with it each time)."""
        confirmed = []
        for index in self.changed() if self.resent else ():
            last = self.after[index]
            for before, after in self.resent:
                if before[index] != last or after[index] is None or after[index] == before[index]:
                    break
                last = after[index]
            else:
                confirmed.append(index)
        return confirmed


@dataclass(frozen=True)
class IdentityCheck:
    """A list method sent on a fresh connection or process (read by list-identity): its items, named by `name_key`,
    must be the same set as on the connection in use. `ordered`: the order is compared too (tools only).
    `baseline`: every item the connection in use listed just before (all pages), filled in by the engine around
    the case, never saved; None when it could not list them."""

    list_key: str
    name_key: str
    ordered: bool = False
    baseline: tuple[Any, ...] | None = field(default=None, hash=False)


@dataclass(frozen=True)
class Expectation:
    """The answers a frame may correctly get, and which oracle judges a wrong one.

    `judge` is the oracle id that reports a wrong code or a wrong kind of answer (a string that is
    no oracle id fails here, when the case is built). `id` is the request id the reply must carry
    (ABSENT when no reply is due, None for id null). `well_formed` says the frame is a valid MCP
    request, so silence is `no-hang`'s (critical); silence on an invalid request with a readable id
    is the judge's (high). The flags and parts after `note` say how one oracle reads this case:
    `lenient` (parse-error: a parser may accept the frame), `quiet_ok` (invalid-request: silence is
    low although the id was readable), `is_error_result_ok` (invalid-params: an isError result is a
    correct refusal), `past_limit` (the frame goes past a limit RFC 8259 lets readers set: silence or a
    changed id is low, and no-hang owns it whatever the judge), `http`, `versions`, `tool_call`, `listing`,
    `resource`, `cancel`, `concurrent`, `client`, `task`, `slow_after` (slow-input) and `state` (the semantic
    oracles). `wrong_answer` is how bad another error code, or a result where an error is due, is: low where the
    spec only says SHOULD (prompts).
    """

    judge: OracleId
    reply: bool = True
    id: Json | Absent = ABSENT
    id_recoverable: bool = True
    codes: frozenset[int] = frozenset()
    error_ok: bool = True
    result_ok: bool = False
    null_id_ok: bool = False
    well_formed: bool = False
    method: str | None = None
    batch_ids: tuple[Any, ...] = ()
    note: str = ""
    lenient: bool = False
    quiet_ok: bool = False
    is_error_result_ok: bool = False
    past_limit: ReaderLimit | None = None
    http: HttpRule | None = None
    versions: VersionCheck | None = None
    tool_call: ToolCallCheck | None = None
    listing: ListingCheck | None = None
    resource: ResourceCheck | None = None
    cancel: CancelCheck | None = None
    concurrent: ConcurrencyCheck | None = None
    client: ClientCheck | None = None
    task: TaskCheck | None = None  # a tasks-extension case (task-ids)
    identity: IdentityCheck | None = None
    wrong_answer: SeverityName = "medium"
    # slow-input: seconds past which an answer is far slower than its target's usual (set by the engine on a call
    # whose slowness it saw twice; None: never judged on time).
    slow_after: float | None = None
    state: StateCheck | None = None

    def __post_init__(self) -> None:
        # A typo in a strategy's judge fails as soon as the case is built, not when an oracle looks it up.
        object.__setattr__(self, "judge", OracleId(self.judge))

    @property
    def tool(self) -> str | None:
        """The tool this case calls, when it is a tool call built from the tool's listing."""
        return self.tool_call.tool if self.tool_call is not None else None

    def describe(self) -> str:
        """Say in words what a correct server answers."""
        if self.http is not None and self.http.statuses:
            codes = self.http.codes
            error = f" with error {'/'.join(map(str, codes))}" if codes else ""
            return f"HTTP {'/'.join(map(str, self.http.statuses))}{error}"
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
    return Expectation(judge=OracleId.PARSE_ERROR, id=None, id_recoverable=False, codes=frozenset({PARSE_ERROR}))


def invalid_request(id: Any = None, *, null_id_ok: bool = False, codes: frozenset[int] | None = None
                    ) -> Expectation:
    """JSON-RPC 2.0 section 5: an invalid request gets -32600 with its id, or null when unreadable."""
    recoverable = id is not None and id is not ABSENT
    return Expectation(judge=OracleId.INVALID_REQUEST, id=id if recoverable else None, id_recoverable=recoverable,
                       codes=codes or frozenset({INVALID_REQUEST}), null_id_ok=null_id_ok)


def method_not_found(id: Any) -> Expectation:
    """JSON-RPC 2.0 section 5.1: an unknown method gets -32601."""
    return Expectation(judge=OracleId.METHOD_NOT_FOUND, id=id, codes=frozenset({METHOD_NOT_FOUND}))


def invalid_params(id: Any, *, also: frozenset[int] = frozenset(), result_ok: bool = False,
                   note: str = "") -> Expectation:
    """Bad params for a known method get -32602 (plus any codes the spec also allows here)."""
    return Expectation(judge=OracleId.INVALID_PARAMS, id=id, codes=frozenset({INVALID_PARAMS}) | also,
                       result_ok=result_ok, note=note)


def result(id: Any, method: str, *, error_ok: bool = False, judge: OracleId = OracleId.NO_HANG) -> Expectation:
    """A valid request: a result (of `method`'s shape) with its id."""
    return Expectation(judge=judge, id=id, result_ok=True, error_ok=error_ok, well_formed=True, method=method)


def any_answer(id: Any, method: str | None = None, *, judge: OracleId = OracleId.NO_HANG,
               note: str = "") -> Expectation:
    """Any result or error is correct; only silence, a crash or a wrong id is a finding."""
    return Expectation(judge=judge, id=id, result_ok=True, error_ok=True, well_formed=True, method=method,
                       note=note)


def no_reply(judge: OracleId = OracleId.NOTIFICATION_SILENT) -> Expectation:
    """Notifications and responses sent to the server get no reply at all."""
    return Expectation(judge=judge, reply=False, id=ABSENT, id_recoverable=False)
