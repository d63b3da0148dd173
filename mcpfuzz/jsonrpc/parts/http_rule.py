"""The statuses a correct streamable HTTP server answers a request with (read by http-status)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from mcpfuzz.jsonrpc.expectation import SeverityName
from mcpfuzz.jsonrpc.parts.part import CasePart, case_part


@case_part("http")
@dataclass(frozen=True)
class HttpRule(CasePart):
    """Streamable HTTP: the statuses a correct server answers this request with (read by http-status).

    `severity` is how bad another status is (a SHOULD of the spec is low); `codes` are the JSON-RPC
    error codes the error body must carry, when the rule names one (-32020 HeaderMismatch). `served_ok`:
    the rule binds only servers that refuse the request, so a normal answer (a 2xx carrying a result for
    its id) proves it does not apply (a request without a session, on a server that does not require one).
    """

    statuses: tuple[int, ...]
    severity: SeverityName = "medium"
    codes: tuple[int, ...] = ()
    served_ok: bool = False

    def describe(self) -> str | None:
        if not self.statuses:
            return None
        error = f" with error {'/'.join(map(str, self.codes))}" if self.codes else ""
        return f"HTTP {'/'.join(map(str, self.statuses))}{error}"

    def to_extra(self) -> dict[str, Any]:
        extra: dict[str, Any] = {"http_status": list(self.statuses), "http_severity": self.severity}
        if self.codes:
            extra["codes"] = list(self.codes)
        if self.served_ok:
            extra["http_served_ok"] = True
        return extra

    @classmethod
    def from_extra(cls, extra: Mapping[str, Any]) -> HttpRule | None:
        if "http_status" not in extra:
            return None
        return cls(tuple(extra["http_status"] or ()), extra.get("http_severity", "medium"),
                   tuple(extra.get("codes") or ()), served_ok=bool(extra.get("http_served_ok")))
