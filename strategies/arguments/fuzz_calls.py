"""The fuzz phase's calls of a schema's target: valid arguments, one rule broken, an edge value, or a boundary."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from hypothesis import strategies as st
from mcpfuzz.strategies.arguments.call import POSITIVE, ArgumentCall
from mcpfuzz.strategies.arguments.edges import edge_call, fuzz_edge_candidates
from mcpfuzz.strategies.arguments.negative import MAX_CHOICE, MAX_START, SPREADS, one_break
from mcpfuzz.strategies.arguments.schema_values import ArgumentSchema
from mcpfuzz.strategies.short_repr import TRIES

VALID = "valid arguments"
# One kind of call: draws one from the example's data, or None when the drawn pieces do not fit together.
KindDraw = Callable[[Any], "ArgumentCall | None"]


def fuzz_calls(schema: ArgumentSchema, boundaries: Sequence[ArgumentCall] = (), *,
               strict_types: bool = False) -> st.SearchStrategy[ArgumentCall]:
    """One call: its kind picked with equal chances (shrinking toward valid), then drawn."""
    return FuzzCalls(schema, tuple(boundaries), strict_types=strict_types)


class FuzzCalls(st.SearchStrategy[ArgumentCall]):
    """`one_of(valid, negative, edge, sampled_from(boundaries))` in one layer, shown as `fuzz_calls()`.

    A fuzz example is a list of calls, and every nested draw costs Hypothesis a validation, an emptiness
    check and a span: `one_of` alone built a filtered `sampled_from` on every draw. Here the kind is one
    integer draw, the spread and candidate of a negative call and the place of an edge value a choice each,
    and a drawn call is never None: pieces that do not fit are drawn again (TRIES times, then the example
    is invalid, as the filters did). The repr stays a few bytes (see short_repr).
    """

    def __init__(self, schema: ArgumentSchema, boundaries: tuple[ArgumentCall, ...], *, strict_types: bool) -> None:
        super().__init__()
        self.schema = schema
        self.boundaries = boundaries
        self.strict_types = strict_types
        self.edges = fuzz_edge_candidates(schema)
        # Bases for negative and edge calls: every listed property present (unless that object cannot be drawn,
        # as when a property's schema is `false`), or any valid value.
        self.bases = [base for base in (schema.populated, schema.positive) if not base.is_empty]
        kinds: list[KindDraw] = [self._valid, self._negative]
        if self.edges:
            kinds.append(self._edge)
        if boundaries:
            kinds.append(self._boundary)
        self.kinds = kinds
        self._kind = st.integers(0, len(kinds) - 1)

    def __repr__(self) -> str:
        return "fuzz_calls()"

    def calc_is_empty(self, recur: Any) -> bool:
        return bool(recur(self.schema.positive))

    def do_validate(self) -> None:
        self.schema.positive.validate()
        self.schema.populated.validate()

    def do_draw(self, data: Any) -> ArgumentCall:
        # The kind is a draw of its own (a span), not a bare choice: Hypothesis' mutator copies spans of one label
        # between the calls of an example, kinds included; without it, runs drew a quarter fewer valid calls.
        kind = self.kinds[data.draw(self._kind)]
        for _ in range(TRIES):
            call = kind(data)
            if call is not None:
                return call
        data.mark_invalid("no call of the drawn kind fits")
        raise AssertionError("mark_invalid returns only by raising")  # pragma: no cover

    def _base(self, data: Any) -> dict:
        """A valid value to change: every listed property present, or any valid value (in this order)."""
        return data.draw(self.bases[data.draw_integer(0, 1)] if len(self.bases) > 1 else self.bases[0])

    def _valid(self, data: Any) -> ArgumentCall:
        return ArgumentCall(POSITIVE, data.draw(self.schema.positive), VALID)

    def _negative(self, data: Any) -> ArgumentCall | None:
        base = self._base(data)
        spread = SPREADS[data.draw_integer(0, len(SPREADS) - 1)]
        return one_break(self.schema, base, spread, data.draw_integer(0, MAX_CHOICE), data.draw_integer(0, MAX_START),
                         strict_types=self.strict_types)

    def _edge(self, data: Any) -> ArgumentCall | None:
        base = self._base(data)
        site, label, value = self.edges[data.draw_integer(0, len(self.edges) - 1)]
        return edge_call(self.schema, base, site, label, value)

    def _boundary(self, data: Any) -> ArgumentCall:
        return self.boundaries[data.draw_integer(0, len(self.boundaries) - 1)]
