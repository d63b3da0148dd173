"""Requests in flight at once (read by concurrency), and what each got when sent alone."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from mcpfuzz.jsonrpc.parts.part import CasePart, case_part


@dataclass(frozen=True)
class AloneAnswers:
    """The result one request of a concurrent case got when sent alone, before and after the burst.

    None where it got no result (an error, silence, a dead server). Observed by the engine around the case,
    never saved with it: a replay asks again.
    """

    request: int
    before: Any = None
    after: Any = None


@case_part("concurrent")
@dataclass(frozen=True)
class ConcurrencyCheck(CasePart):
    """Requests in flight at once (read by concurrency): each `(id, method, subject)` is answered once, with its
    own answer (the shape of its own method, a read's contents for its own URI, and, when every request is
    read-only, not the answer another of them got alone). `subject` is a read's URI, a tool call's tool name, or
    "" for a list. `alone`: what each request got when sent alone, filled in by the engine around the burst.
    `changes_state`: a request may change what the others (or itself, sent again) answer, a tool not annotated
    read-only: no request is sent alone and no answer is compared with another's."""

    requests: tuple[tuple[int, str, str], ...]
    alone: tuple[AloneAnswers, ...] = ()
    changes_state: bool = False

    def to_extra(self) -> dict[str, Any]:
        extra: dict[str, Any] = {"concurrent": [list(request) for request in self.requests]}
        if self.changes_state:
            extra["concurrent_changes_state"] = True
        return extra

    @classmethod
    def from_extra(cls, extra: Mapping[str, Any]) -> ConcurrencyCheck | None:
        part = extra.get("concurrent")
        if not isinstance(part, list):
            return None
        return cls(tuple((int(rid), str(method), str(uri)) for rid, method, uri in part),
                   changes_state=extra.get("concurrent_changes_state") is True)
