"""What the correct answer to a frame is, following JSON-RPC 2.0 and the negotiated MCP version."""

from __future__ import annotations

from dataclasses import dataclass, replace
from enum import Enum
from typing import Any, Literal

from mcpfuzz.jsonrpc.ids import ABSENT
from mcpfuzz.jsonrpc.json_value import Absent, Json
from mcpfuzz.jsonrpc.oracle_ids import OracleId
from mcpfuzz.jsonrpc.parts.part import CasePart, P

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
class Expectation:
    """The answers a frame may correctly get, and which oracle judges a wrong one.

    `judge` is the oracle id that reports a wrong code or a wrong kind of answer (a string that is
    no oracle id fails here, when the case is built). `id` is the request id the reply must carry
    (ABSENT when no reply is due, None for id null). `well_formed` says the frame is a valid MCP
    request, so silence is `no-hang`'s (critical); silence on an invalid request with a readable id
    is the judge's (high). `wrong_answer` is how bad another error code, or a result where an error is
    due, is: low where the spec only says SHOULD (prompts). `parts`: what single oracles need to know
    about this case besides (`mcpfuzz.jsonrpc.parts`), at most one of each kind.
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
    wrong_answer: SeverityName = "medium"
    parts: tuple[CasePart, ...] = ()

    def __post_init__(self) -> None:
        # A typo in a strategy's judge fails as soon as the case is built, not when an oracle looks it up.
        object.__setattr__(self, "judge", OracleId(self.judge))
        kinds = [type(part) for part in self.parts]
        if len(set(kinds)) != len(kinds):
            raise ValueError(f"a case has at most one part of each kind, not {[kind.__name__ for kind in kinds]}")
        # In one order whatever order they were given in, so equal expectations compare equal.
        object.__setattr__(self, "parts", tuple(sorted(self.parts, key=lambda part: part.key)))

    def part(self, kind: type[P]) -> P | None:
        """This case's part of that kind, if it has one."""
        for part in self.parts:
            if type(part) is kind:
                return part
        return None

    def has(self, kind: type[CasePart]) -> bool:
        """Whether this case has a part of that kind (a flag part says all by being there)."""
        return self.part(kind) is not None

    def with_part(self, part: CasePart) -> Expectation:
        """This expectation with `part` in place of its part of the same kind (added when it had none)."""
        kept = tuple(mine for mine in self.parts if type(mine) is not type(part))
        return replace(self, parts=(*kept, part))

    def describe(self) -> str:
        """Say in words what a correct server answers."""
        for part in self.parts:
            said = part.describe()
            if said is not None:
                return said
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
