"""A list method sent on a fresh connection or process (read by list-identity)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from mcpfuzz.jsonrpc.parts.part import OBSERVED, CasePart, case_part


@case_part("identity")
@dataclass(frozen=True)
class IdentityCheck(CasePart):
    """A list method sent on a fresh connection or process (read by list-identity): its items, named by `name_key`,
    must be the same set as on the connection in use. `ordered`: the order is compared too (tools only).
    `baseline`: every item the connection in use listed just before (all pages), filled in by the engine around
    the case, never saved; None when it could not list them."""

    list_key: str
    name_key: str
    ordered: bool = False
    baseline: tuple[Any, ...] | None = field(default=None, hash=False, metadata=OBSERVED)

    @classmethod
    def from_extra(cls, extra: Mapping[str, Any]) -> IdentityCheck | None:
        part = extra.get("identity")
        if not isinstance(part, dict) or not isinstance(part.get("list_key"), str):
            return None
        return cls(part["list_key"], str(part.get("name_key") or "name"), bool(part.get("ordered")))
