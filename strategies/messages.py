"""Era-aware builders for the frames the catalogue sends."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from mcpfuzz.jsonrpc.encode import dumps, request, with_meta
from mcpfuzz.jsonrpc.ids import ABSENT
from mcpfuzz.jsonrpc.versions import LATEST_LEGACY, Era, modern_meta


@dataclass
class FrameBuilder:
    """Builds request bytes for one era, handing out ids that never collide with the harness's."""

    era: Era
    version: str
    next_id: int = 100
    meta: dict | None = field(init=False)

    def __post_init__(self) -> None:
        self.meta = modern_meta(self.version) if self.era is Era.MODERN else None

    def fresh_id(self) -> int:
        """A new integer id, unique within the catalogue (the harness counts from 10000)."""
        self.next_id += 1
        return self.next_id

    @property
    def barrier_method(self) -> str:
        """The cheapest request of the era: ping (legacy) or server/discover (modern)."""
        return "ping" if self.era is Era.LEGACY else "server/discover"

    def message(self, method: Any, params: Any = ABSENT, id: Any = ABSENT, **envelope: Any) -> dict:
        """A request or notification object with the era's `_meta` in object params."""
        return request(method, with_meta(params, self.meta), id, **envelope)

    def frame(self, method: Any, params: Any = ABSENT, id: Any = ABSENT, **envelope: Any) -> bytes:
        """The same, as bytes."""
        return dumps(self.message(method, params, id, **envelope))


def initialize_params(version: str = LATEST_LEGACY, capabilities: dict | None = None) -> dict:
    """Legacy `initialize` params declaring `capabilities` (none unless given: only the session serves any)."""
    from mcpfuzz import __version__

    return {"protocolVersion": version, "capabilities": capabilities or {},
            "clientInfo": {"name": "mcpfuzz", "version": __version__}}
