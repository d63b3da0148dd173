"""Fuzz draws that start from the calls that reached new code (--coverage), the most recent first.

A call whose arguments made the server run lines no call had run before goes into its target's CoveringPool. Two
draws in three then take one of those arguments (the latest, the deepest so far, half the time) and give one to three
properties the values of a fresh valid draw, so a search that got past one condition of a handler tries the next
condition with the first one still met. The pool only grows while a search runs: a value replayed by Hypothesis
may come from a different call than the first time, which at worst makes one shrink give up (a failure is
recorded as it happens).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from hypothesis import strategies as st
from mcpfuzz.strategies.arguments.call import POSITIVE, ArgumentCall
from mcpfuzz.strategies.arguments.schema_values import ArgumentSchema
from mcpfuzz.strategies.arguments.sites import MISSING, delete_at, get_at, set_at, show

COVER_ODDS = 3  # of this many draws, all but one start from a covering call, once there is one
MAX_COVERING = 256  # covering calls kept per target: the first ones (a handler has few branches that matter)
MAX_CHANGES = 3  # properties changed at once, at most


@dataclass
class CoveringPool:
    """The argument objects of a target whose calls reached code no call had reached before, in the order found."""

    calls: list[ArgumentCall] = field(default_factory=list)

    def add(self, call: ArgumentCall) -> None:
        """Keep a valid call that reached new code (unless the pool is full or holds the same arguments)."""
        if call.kind != POSITIVE or not isinstance(call.arguments, dict) or len(self.calls) >= MAX_COVERING:
            return
        if all(kept.arguments != call.arguments for kept in self.calls):
            self.calls.append(call)


def covering_calls(schema: ArgumentSchema, fuzz: st.SearchStrategy[ArgumentCall],
                   pool: CoveringPool) -> st.SearchStrategy[ArgumentCall]:
    """`fuzz`, and (once `pool` holds calls) more often a covering call changed in one to MAX_CHANGES properties."""
    changeable = schema.sites

    @st.composite
    def draw_call(draw: Any) -> ArgumentCall:
        if not pool.calls or not changeable or draw(st.integers(0, COVER_ODDS - 1)) == 0:
            return draw(fuzz)
        # The latest covering call half the time (it got the furthest so far), else any of them.
        if draw(st.booleans()):
            start = pool.calls[-1]
        else:
            start = pool.calls[draw(st.integers(0, MAX_COVERING - 1)) % len(pool.calls)]
        return _changed(draw, schema, start, changeable)

    return draw_call()


def _changed(draw: Any, schema: ArgumentSchema, start: ArgumentCall, changeable: list) -> ArgumentCall:
    """`start` with the values of a fresh valid draw at one to MAX_CHANGES sites (a change kept only while the
    arguments stay valid)."""
    fresh = draw(schema.positive)
    arguments: dict = start.arguments
    changed = []
    for _ in range(draw(st.integers(1, MAX_CHANGES))):
        site = draw(st.sampled_from(changeable))
        value = get_at(fresh, site.path)
        edited = delete_at(arguments, site.path) if value is MISSING else set_at(arguments, site.path, value)
        if edited is not None and edited != arguments and schema.is_valid(edited):
            arguments = edited
            changed.append(f"{site.pointer} = {show(value)}" if value is not MISSING else f"{site.pointer} left out")
    if not changed:
        return start
    return ArgumentCall(POSITIVE, arguments, f"a call that reached new code, {', '.join(changed)}")
