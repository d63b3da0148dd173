"""The time past which an answer is far slower than its target's usual (read by slow-input)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from mcpfuzz.jsonrpc.parts.part import CasePart, case_part


@case_part("slow_after")
@dataclass(frozen=True)
class SlowAfter(CasePart):
    """Seconds past which an answer is far slower than its target's usual: set by the engine on a call whose
    slowness it saw twice (a case without this part is never judged on time)."""

    seconds: float

    def to_extra(self) -> dict[str, Any]:
        return {"slow_after": self.seconds}

    @classmethod
    def from_extra(cls, extra: Mapping[str, Any]) -> SlowAfter | None:
        value = extra.get("slow_after")
        if isinstance(value, bool) or not isinstance(value, (int, float)) or value <= 0:
            return None
        return cls(float(value))
