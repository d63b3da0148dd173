"""Fuzz draws that grow the slowest call of a target so far: toward inputs whose cost rises with their size.

Hypothesis' optimiser (the latency `target()`) changes numbers and bytes of a slow example but rarely makes a list or
a string longer, and a round's climb is lost when the next round starts. A call answered slowly (from the latency
target's floor) goes into its target's GrowingPool, which keeps the slowest few. Once it holds one, one draw in three
takes one of them (the slowest half the time) and grows one or two of its values: a list or a string doubled (its
own items repeated), a number doubled; a change is kept only while the arguments stay valid. A server whose answers
never reach the floor never fills the pool, and its searches draw exactly what they drew without it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from hypothesis import strategies as st
from mcpfuzz.strategies.arguments.call import POSITIVE, ArgumentCall
from mcpfuzz.strategies.arguments.schema_values import ArgumentSchema
from mcpfuzz.strategies.arguments.sites import MISSING, get_at, set_at

GROW_ODDS = 3  # of this many draws, one grows a slow call, once there is one
MAX_SLOWEST = 8  # slow calls kept per target: the slowest
MAX_GROWTHS = 2  # values grown at once, at most
MAX_GROWN = 4096  # items or characters a grown value holds at most (a slow input is a small input)


@dataclass
class GrowingPool:
    """A target's slowest valid calls so far, slowest first, with their answer times."""

    calls: list[tuple[float, ArgumentCall]] = field(default_factory=list)

    def add(self, call: ArgumentCall, seconds: float) -> None:
        """Keep a valid call answered after `seconds`, if it is among the slowest (once per argument object)."""
        if call.kind != POSITIVE or not isinstance(call.arguments, dict):
            return
        if any(kept.arguments == call.arguments for _, kept in self.calls):
            return
        self.calls.append((seconds, call))
        self.calls.sort(key=lambda pair: -pair[0])
        del self.calls[MAX_SLOWEST:]


def growing_calls(schema: ArgumentSchema, fuzz: st.SearchStrategy[ArgumentCall],
                  pool: GrowingPool) -> st.SearchStrategy[ArgumentCall]:
    """`fuzz`, and (once `pool` holds calls) one draw in GROW_ODDS a slow call with one or two values grown."""
    growable = schema.sites

    @st.composite
    def draw_call(draw: Any) -> ArgumentCall:
        if not pool.calls or not growable or draw(st.integers(0, GROW_ODDS - 1)) != 0:
            return draw(fuzz)
        calls = pool.calls
        start = calls[0][1] if draw(st.booleans()) else calls[draw(st.integers(0, MAX_SLOWEST - 1)) % len(calls)][1]
        return _grown(draw, schema, start, growable)

    return draw_call()


def _grown(draw: Any, schema: ArgumentSchema, start: ArgumentCall, growable: list) -> ArgumentCall:
    """`start` with one to MAX_GROWTHS of its values grown (each kept only while the arguments stay valid)."""
    arguments: dict = start.arguments
    grown = []
    for _ in range(draw(st.integers(1, MAX_GROWTHS))):
        site = draw(st.sampled_from(growable))
        value = get_at(arguments, site.path)
        bigger = _bigger(value)
        if value is MISSING or bigger is None:
            continue
        edited = set_at(arguments, site.path, bigger)
        if edited is not None and edited != arguments and schema.is_valid(edited):
            arguments = edited
            grown.append(site.pointer)
    if not grown:
        return start
    return ArgumentCall(POSITIVE, arguments, f"the slowest call so far, grown at {', '.join(grown)}")


def _bigger(value: Any) -> Any:
    """A value twice as big: a list or string repeated, a number doubled; None for anything else."""
    if isinstance(value, bool):
        return None
    if isinstance(value, (list, str)) and 0 < len(value) <= MAX_GROWN // 2:
        return value * 2
    if isinstance(value, int):
        return value * 2 if value else 1
    if isinstance(value, float):
        return value * 2 if value else 1.0
    return None
