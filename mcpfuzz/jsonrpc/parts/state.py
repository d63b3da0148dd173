"""A call judged on the state the server shows around it (read by the semantic oracles)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from mcpfuzz.jsonrpc.oracle_ids import OracleId
from mcpfuzz.jsonrpc.parts.part import OBSERVED, CasePart, case_part

# One more sending of a judged call: the state observed just before it and just after it.
Resent = tuple[tuple[Any, ...], tuple[Any, ...]]


@case_part("state")
@dataclass(frozen=True)
class StateCheck(CasePart):
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
    before: tuple[Any, ...] = field(default=(), metadata=OBSERVED)
    again: tuple[Any, ...] = field(default=(), metadata=OBSERVED)
    after: tuple[Any, ...] = field(default=(), metadata=OBSERVED)
    resent: tuple[Resent, ...] = field(default=(), metadata=OBSERVED)

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

    def to_extra(self) -> dict[str, Any]:
        return {"state": {"judge": self.judge.value, "item": self.item,
                          "observe": [[method, params] for method, params in self.observe]}}

    @classmethod
    def from_extra(cls, extra: Mapping[str, Any]) -> StateCheck | None:
        part = extra.get("state")
        if not isinstance(part, dict) or not isinstance(part.get("observe"), list):
            return None
        return cls(OracleId(part["judge"]), tuple((str(method), params) for method, params in part["observe"]),
                   str(part.get("item") or ""))
