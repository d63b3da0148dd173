"""A frame past a limit RFC 8259 lets a JSON reader set (read by no-hang and id-preserved)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from mcpfuzz.jsonrpc.expectation import ReaderLimit
from mcpfuzz.jsonrpc.parts.part import CasePart, case_part


@case_part("past_limit")
@dataclass(frozen=True)
class PastLimit(CasePart):
    """The frame goes past a limit RFC 8259 lets readers set: silence or a changed id is low, and no-hang owns
    it whatever the judge."""

    limit: ReaderLimit

    def to_extra(self) -> dict[str, Any]:
        return {"past_limit": self.limit.value}

    @classmethod
    def from_extra(cls, extra: Mapping[str, Any]) -> PastLimit | None:
        value = extra.get("past_limit")
        return cls(ReaderLimit(value)) if value else None
