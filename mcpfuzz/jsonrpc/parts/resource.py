"""A `resources/read` (read by declared-served and resource-not-found)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from mcpfuzz.jsonrpc.parts.part import CasePart, case_part


@case_part("resource")
@dataclass(frozen=True)
class ResourceCheck(CasePart):
    """A `resources/read` (read by declared-served and resource-not-found).

    `listed`: the URI is in resources/list, so it reads without error and `contents[].uri` names it.
    `missing`: the URI was made up to exist nowhere, so the era's not-found error is due.
    """

    uri: str
    listed: bool = False
    missing: bool = False

    @classmethod
    def from_extra(cls, extra: Mapping[str, Any]) -> ResourceCheck | None:
        part = extra.get("resource")
        if not isinstance(part, dict) or not isinstance(part.get("uri"), str):
            return None
        return cls(part["uri"], listed=bool(part.get("listed")), missing=bool(part.get("missing")))
