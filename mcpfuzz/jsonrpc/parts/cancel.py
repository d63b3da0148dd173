"""A request, `notifications/cancelled` for it, then a probe request (read by cancel-respected)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from mcpfuzz.jsonrpc.parts.part import CasePart, case_part


@case_part("cancel")
@dataclass(frozen=True)
class CancelCheck(CasePart):
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

    def to_extra(self) -> dict[str, Any]:
        part: dict[str, Any] = {"request": self.request, "probe": self.probe}
        if self.running is not None:
            part.update(running=self.running, pause=self.pause, latency=self.latency)
        return {"cancel": part}

    @classmethod
    def from_extra(cls, extra: Mapping[str, Any]) -> CancelCheck | None:
        part = extra.get("cancel")
        if not isinstance(part, dict) or not isinstance(part.get("request"), int) \
                or not isinstance(part.get("probe"), int):
            return None
        running = part.get("running")
        pause, latency = part.get("pause", 0.0), part.get("latency", 0.0)
        if not isinstance(running, int) or not isinstance(pause, int | float) or not isinstance(latency, int | float):
            return cls(part["request"], part["probe"])
        return cls(part["request"], part["probe"], running, float(pause), float(latency))
