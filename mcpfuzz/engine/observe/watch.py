"""Side effects attributed to calls: the hooks' records read as each case is judged, and told to its exchange.

How a record finds its call: a record the hook tagged with a request id (the mcp 1.x SDK's request context) goes to
the case that sent that id. An untagged one goes to the case in flight when it happened: made after the exchange's
`started` and read when the case is judged (the hooks write before the server answers). A record from before the
case is start-up (the process' first call had not come: what it touched is learnt as allowed) when its process
had done nothing for a call yet, or is a standby's; otherwise it came after its own call's answer and is left out.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from typing import Any

from mcpfuzz.engine.observe.places import Places
from mcpfuzz.engine.observe.records import Record, RecordFile
from mcpfuzz.jsonrpc.effects import FILE_OPS, Effect, Observation, Op
from mcpfuzz.jsonrpc.exchange import Exchange

MAX_PENDING = 2_000  # tagged records waiting for their case (a pipelined window): older ones are dropped
MAX_EFFECTS = 200  # effects kept per exchange: a call that walks a tree is judged on its first ones
# tool label -> its annotations (empty: none declared, or not a tool).
HintsOf = Callable[[str], dict[str, Any]]


@dataclass
class ObservationWatch:
    """The record file of a run, what start-up touched, and the processes seen."""

    records: RecordFile
    places: Places
    hints_of: HintsOf = field(default=lambda label: {})
    calls_seen: set[int] = field(default_factory=set)  # pids that did something for a call
    parents: dict[int, int] = field(default_factory=dict)  # pid -> parent pid, from the hellos
    hellos: int = 0
    pending: list[Record] = field(default_factory=list)

    def look(self, exchange: Exchange, *, standby: int | None = None, places: Places | None = None) -> None:
        """Tell the exchange the side effects of its case (`places`: another workspace's, for a re-check)."""
        judged_by = places or self.places
        ids = _request_ids(exchange)
        mine: list[Effect] = []
        waiting: list[Record] = []
        for record in [*self.pending, *self.records.read()]:
            if record.effect is None:
                self.hellos += 1
                if record.parent is not None:
                    self.parents[record.pid] = record.parent
                continue
            if record.request is not None and record.request not in ids:
                waiting.append(record)
                continue
            if standby is not None and self._descends(record.pid, standby):
                self._learn(record)
            elif record.at < exchange.started and (record.request is None or record.request not in ids):
                if record.pid not in self.calls_seen:
                    self._learn(record)
            elif len(mine) < MAX_EFFECTS:
                self.calls_seen.add(record.pid)
                effect = record.effect
                if effect.op in FILE_OPS:
                    effect = replace(effect, outside=judged_by.outside(effect.op, effect.path)
                                     or (bool(effect.to) and effect.op is Op.RENAME
                                         and judged_by.outside(effect.op, effect.to)))
                mine.append(effect)
        self.pending = waiting[-MAX_PENDING:]
        hints = self.hints_of(exchange.case.target)
        exchange.observation = Observation(tuple(mine), read_only=hints.get("readOnlyHint") is True,
                                           open_world=hints.get("openWorldHint") is True,
                                           inputs=tuple(_strings(_params(exchange))),
                                           workspace=judged_by.given[0].rstrip("/") if judged_by.given else "")

    def skip(self) -> None:
        """Read what is there now as start-up (the records before a re-check's own case)."""
        for record in self.records.read():
            if record.effect is not None and record.pid not in self.calls_seen:
                self._learn(record)

    @property
    def seeing(self) -> bool:
        """True once a hook said it is in."""
        return self.hellos > 0

    def _learn(self, record: Record) -> None:
        effect = record.effect
        if effect is not None and effect.op in FILE_OPS:
            self.places.learn_startup(effect.path)

    def _descends(self, pid: int, ancestor: int) -> bool:
        for _ in range(32):
            if pid == ancestor:
                return True
            parent = self.parents.get(pid)
            if parent is None:
                return False
            pid = parent
        return False


def _params(exchange: Exchange) -> Any:
    """The params of the case's own request (its data's first line)."""
    try:
        message = json.loads(exchange.case.data.split(b"\n", 1)[0])
    except ValueError:
        return None
    return message.get("params") if isinstance(message, dict) else None


def _request_ids(exchange: Exchange) -> set[str]:
    """The case's request ids as the hooks write them (JSON)."""
    expect = exchange.case.expect
    found: list[Any] = [*getattr(expect, "batch_ids", ())]
    own = getattr(expect, "id", None)
    if isinstance(own, (int, str)):
        found.append(own)
    return {json.dumps(value) for value in found if isinstance(value, (int, str))}


def _strings(value: Any) -> Iterable[str]:
    """Every string in the params' arguments (or the params themselves when there are none), as sent."""
    if isinstance(value, dict) and isinstance(value.get("arguments"), dict):
        value = value["arguments"]
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            yield item
        elif isinstance(item, dict):
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
