"""How long each called target takes to answer a valid call, measured as the run's calls are judged."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from statistics import median
from typing import Any

from mcpfuzz.engine.events import PhaseName
from mcpfuzz.jsonrpc.exchange import ID_CURRENT, Exchange
from mcpfuzz.jsonrpc.frame import Case
from mcpfuzz.jsonrpc.parts.tool_call import ToolCallCheck
from mcpfuzz.strategies.payloads.canaries import carries_canary

MAX_SAMPLES = 64  # per target: enough for a median, bounded for a long soak
MAX_PARAMS = 8  # distinct params kept per target (the concurrency case sends a few of them at once)


@dataclass
class TargetLatency:
    """One target's measured answers: seconds each took, and the distinct params of its answered valid calls.
    `read_only`: its calls change nothing (`Case.shared_ok`), so answers to them may be compared."""

    method: str
    read_only: bool = False
    seconds: list[float] = field(default_factory=list)
    params: dict[str, tuple[float, dict[str, Any]]] = field(default_factory=dict)  # canonical -> (seconds, params)

    @property
    def shortest(self) -> float:
        """The fastest answer seen: a floor no answer of this target's work comes before."""
        return min(self.seconds)

    @property
    def typical(self) -> float:
        """The median answer."""
        return median(self.seconds)


@dataclass
class LatencyBook:
    """A judged observer: each answered valid call of a target (a call phase's, `Case.slow_ok`), its time and its
    params, by target."""

    targets: dict[str, TargetLatency] = field(default_factory=dict)

    def __call__(self, phase: PhaseName, exchange: Exchange, judged: object) -> None:
        """Note `exchange` when it is a target's valid call answered with a result."""
        case = exchange.case
        if not case.slow_ok or exchange.crash is not None or not _valid(case):
            return
        answer = next((a for a in exchange.responses() if a.id_tag == ID_CURRENT), None)
        request = _request(case.data)
        if answer is None or not answer.incoming.is_result or request is None:
            return
        method, params = request
        book = self.targets.setdefault(case.target, TargetLatency(method, case.shared_ok))
        if len(book.seconds) < MAX_SAMPLES:
            book.seconds.append(answer.at)
        key = json.dumps(params, sort_keys=True)
        if carries_canary(key):
            return  # a security payload: sent again in flight it would only fire its oracle a second time
        if key in book.params or len(book.params) < MAX_PARAMS:
            book.params[key] = (max(answer.at, book.params.get(key, (0.0, params))[0]), params)

    def slowest(self, at_least: float, most: int) -> list[tuple[str, TargetLatency]]:
        """Up to `most` targets whose every answer took `at_least` seconds, slowest first."""
        slow = [(label, book) for label, book in self.targets.items() if book.seconds and book.shortest >= at_least]
        return sorted(slow, key=lambda item: -item[1].shortest)[:most]


def _valid(case: Case) -> bool:
    """A call whose params satisfy the target's schema (a tool's arguments; other kinds: a well-formed request)."""
    check = case.expect.part(ToolCallCheck)
    return check.valid if check is not None else case.expect.well_formed


def _request(data: bytes) -> tuple[str, dict[str, Any]] | None:
    """The method and params of a one-line request, without `_meta` (the era's, and a progressToken)."""
    try:
        message = json.loads(data)
    except ValueError:
        return None
    if not isinstance(message, dict) or not isinstance(message.get("method"), str):
        return None
    params = message.get("params")
    if not isinstance(params, dict):
        return None
    return message["method"], {key: value for key, value in params.items() if key != "_meta"}
