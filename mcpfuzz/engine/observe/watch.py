"""Side effects attributed to calls: the hooks' records read as each case is judged, and told to its exchange.

How a record finds its call: a record the hook tagged with a request id (the mcp 1.x SDK's request context) goes to
the case that sent that id. An untagged one goes to the call in flight when it happened: made after the exchange's
`started` and read when the case is judged (the hooks write before the server answers). In a pipelined window
several calls are in flight at once: an untagged record goes to those whose answer had not come yet when it was made,
and is `ambiguous` when that is more than one. A record from before the case is start-up (the process' first call
had not come: what it touched is learnt as allowed) when its process had done nothing for a call yet, or is a
standby's; otherwise it came after its own call's answer and is left out.

Each exchange seen gets an `ObservedCall` part: what its tool declared and the folders the server was given, so
that a saved case is judged again the same way by a replay, which lists no tools.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from mcpfuzz.engine.observe.places import Places
from mcpfuzz.engine.observe.records import Record, RecordFile
from mcpfuzz.jsonrpc.effects import FILE_OPS, Effect, Observation, Op
from mcpfuzz.jsonrpc.exchange import Exchange
from mcpfuzz.jsonrpc.parts.observed import ObservedCall

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
    allowed: tuple[str, ...] = ()  # the --allow-path folders, saved with each case
    calls_seen: set[int] = field(default_factory=set)  # pids that did something for a call
    parents: dict[int, int] = field(default_factory=dict)  # pid -> parent pid, from the hellos
    hellos: int = 0
    pending: list[Record] = field(default_factory=list)

    def look(self, exchange: Exchange, *, standby: int | None = None, places: Places | None = None) -> None:
        """Tell the exchange the side effects of its case (`places`: another workspace's, for a re-check)."""
        self.look_window([exchange], standby=standby, places=places)

    def look_window(self, exchanges: Sequence[Exchange], *, standby: int | None = None,
                    places: Places | None = None) -> None:
        """Tell each exchange of calls in flight together (a pipelined window, or one case) its side effects."""
        judged_by = _allowing(places or self.places, exchanges)
        by_id = {request: exchange for exchange in exchanges for request in _request_ids(exchange)}
        charged: dict[int, list[Effect]] = {id(exchange): [] for exchange in exchanges}
        started = min(exchange.started for exchange in exchanges)
        waiting: list[Record] = []
        for record in [*self.pending, *self.records.read()]:
            if record.effect is None:
                self.hellos += 1
                if record.parent is not None:
                    self.parents[record.pid] = record.parent
                continue
            owner = by_id.get(record.request) if record.request is not None else None
            if record.request is not None and owner is None:
                waiting.append(record)
                continue
            if standby is not None and self._descends(record.pid, standby):
                self._learn(record)
                continue
            if owner is None and record.at < started:
                if record.pid not in self.calls_seen:
                    self._learn(record)
                continue
            self.calls_seen.add(record.pid)
            owners = [owner] if owner is not None else _in_flight(exchanges, record.at)
            effect = _placed(record.effect, judged_by)
            if len(owners) > 1:
                effect = replace(effect, ambiguous=True)
            for one in owners:
                if len(charged[id(one)]) < MAX_EFFECTS:
                    charged[id(one)].append(effect)
        self.pending = waiting[-MAX_PENDING:]
        for exchange in exchanges:
            self._tell(exchange, charged[id(exchange)], judged_by)

    def skip(self) -> None:
        """Read what is there now as start-up (the records before a re-check's own case)."""
        for record in self.records.read():
            if record.effect is not None and record.pid not in self.calls_seen:
                self._learn(record)

    @property
    def seeing(self) -> bool:
        """True once a hook said it is in."""
        return self.hellos > 0

    def _tell(self, exchange: Exchange, effects: list[Effect], judged_by: Places) -> None:
        """The exchange's observation, judged on what its case's part says its tool declared (the run's targets
        when the case has none yet: a case sent on a process in use gets one, once a hook is seen)."""
        part = exchange.case.expect.part(ObservedCall)
        if part is None:
            hints = self.hints_of(exchange.case.target)
            part = ObservedCall(read_only=hints.get("readOnlyHint") is True,
                                open_world=hints.get("openWorldHint") is True, allowed=self.allowed)
            if self.seeing and not exchange.case.fresh:  # a lifecycle case replays as it is: on a process of its own
                case = exchange.case
                exchange.case = replace(case, expect=case.expect.with_part(part))
        exchange.observation = Observation(tuple(effects), read_only=part.read_only, open_world=part.open_world,
                                           inputs=tuple(_strings(_params(exchange))),
                                           workspace=judged_by.given[0].rstrip("/") if judged_by.given else "")

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


def _placed(effect: Effect, places: Places) -> Effect:
    """A file effect marked outside or not."""
    if effect.op not in FILE_OPS:
        return effect
    return replace(effect, outside=places.outside(effect.op, effect.path)
                   or (bool(effect.to) and effect.op is Op.RENAME and places.outside(effect.op, effect.to)))


def _allowing(places: Places, exchanges: Sequence[Exchange]) -> Places:
    """`places` with the folders a saved case says its server was given besides (a replay's, a later run's)."""
    saved = [folder for exchange in exchanges if (part := exchange.case.expect.part(ObservedCall)) is not None
             for folder in part.allowed]
    return places.allowing(saved) if saved else places


def _in_flight(exchanges: Sequence[Exchange], at: float) -> list[Exchange]:
    """The exchanges whose call was in flight at `at`: sent before it, not answered yet (every one of them when none
    was: work after the last answer). One exchange alone owns everything after it started."""
    if len(exchanges) == 1:
        return list(exchanges)
    flying = [exchange for exchange in exchanges if exchange.started <= at
              and ((answered := _answered_at(exchange)) is None or at <= answered)]
    return flying or list(exchanges)


def _answered_at(exchange: Exchange) -> float | None:
    """When the exchange's first response arrived (the monotonic clock), or None."""
    times = [arrival.at for arrival in exchange.responses()]
    return exchange.started + min(times) if times else None


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
