"""One page of a declared capability's list method (read by declared-served)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from mcpfuzz.jsonrpc.parts.part import CasePart, case_part


@case_part("listing")
@dataclass(frozen=True)
class ListingCheck(CasePart):
    """One page of a declared capability's list method (read by declared-served).

    `cursors` are the cursors sent so far, this page's included: a `nextCursor` naming one of them
    again sends a paging client round in a loop for ever.
    """

    capability: str
    page: int = 1
    cursors: tuple[str, ...] = ()

    @classmethod
    def from_extra(cls, extra: Mapping[str, Any]) -> ListingCheck | None:
        part = extra.get("listing")
        if not isinstance(part, dict):
            return None
        return cls(str(part.get("capability", "")), int(part.get("page") or 1),
                   tuple(str(cursor) for cursor in part.get("cursors") or ()))
