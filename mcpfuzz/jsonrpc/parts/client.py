"""A call whose server asks mcpfuzz for input (read by client-requests, input-required, missing-capability)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from mcpfuzz.jsonrpc.client_check import AnswerMode, RetryKind
from mcpfuzz.jsonrpc.parts.part import CasePart, case_part


@case_part("client")
@dataclass(frozen=True)
class ClientCheck(CasePart):
    """A call whose server asks mcpfuzz for input (read by client-requests, input-required, missing-capability).

    `mode`: how the session's responder answers the server's requests while the case is open. `declared`: the
    client capabilities the case declares. `retry`: the kind of 2026-07-28 retry this call is, if one.
    `baseline`: for a tampered retry, the result the same retry got with the state untouched (None: not a
    successful one, so no verdict on tampering).
    """

    mode: AnswerMode = AnswerMode.ACCEPT
    declared: tuple[str, ...] = ()
    retry: RetryKind | None = None
    baseline: Any = field(default=None, hash=False, compare=False)

    def to_extra(self) -> dict[str, Any]:
        part: dict[str, Any] = {"mode": self.mode.value, "declared": list(self.declared)}
        if self.retry is not None:
            part.update(retry=self.retry.value, baseline=self.baseline)
        return {"client": part}
