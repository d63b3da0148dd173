"""What version-negotiation checks on a case's answer besides server/discover's own versions."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from mcpfuzz.jsonrpc.parts.part import CasePart, case_part


@case_part("versions")
@dataclass(frozen=True)
class VersionCheck(CasePart):
    """What version-negotiation checks on this case's answer besides server/discover's own versions."""

    unsupported: str | None = None  # modern: the request names this unsupported version, so -32022 is due
    initialize: str | None = None  # legacy: initialize asks for this unsupported version
    refusal_ok: bool = False  # ... and may be refused outright (a modern-only server)
    discover_failed: bool = False  # the probe's initialize, after server/discover failed

    def to_extra(self) -> dict[str, Any]:
        extra: dict[str, Any] = {}
        if self.initialize is not None:
            extra.update(initialize_version=self.initialize, refusal_ok=self.refusal_ok)
        if self.unsupported is not None:
            extra["unsupported_version"] = self.unsupported
        if self.discover_failed:
            extra["discover_failed"] = True
        return extra

    @classmethod
    def from_extra(cls, extra: Mapping[str, Any]) -> VersionCheck | None:
        if not {"initialize_version", "unsupported_version", "discover_failed"} & set(extra):
            return None
        return cls(unsupported=extra.get("unsupported_version"), initialize=extra.get("initialize_version"),
                   refusal_ok=bool(extra.get("refusal_ok")), discover_failed=bool(extra.get("discover_failed")))
