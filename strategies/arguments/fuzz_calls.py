"""The fuzz phase's calls of a schema's target: valid arguments, one rule broken, an edge value, or a boundary."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from time import perf_counter

from hypothesis import reject
from hypothesis import strategies as st
from mcpfuzz.strategies.arguments.bulk_draws import BulkDraws
from mcpfuzz.strategies.arguments.call import POSITIVE, ArgumentCall
from mcpfuzz.strategies.arguments.edges import edge_call, fuzz_edge_candidates
from mcpfuzz.strategies.arguments.negative import MAX_CHOICE, MAX_START, SPREADS, one_break
from mcpfuzz.strategies.arguments.schema_values import ArgumentSchema
from mcpfuzz.strategies.short_repr import TRIES, named_composite

from mcpfuzz.jsonrpc.call_split import SPLIT

VALID = "valid arguments"
# One kind of call: draws one from the example's data, or None when the drawn pieces do not fit together.
KindDraw = Callable[[st.DrawFn], "ArgumentCall | None"]


def fuzz_calls(schema: ArgumentSchema, boundaries: Sequence[ArgumentCall] = (), *,
               strict_types: bool = False) -> st.SearchStrategy[ArgumentCall]:
    """One call: its kind picked with equal chances (shrinking toward valid), then drawn; shown as `fuzz_calls()`.

    `one_of(valid, negative, edge, sampled_from(boundaries))` in one composite: `one_of` alone built a
    filtered `sampled_from` on every draw, and a fuzz example is a list of calls. A drawn call is never
    None: pieces that do not fit are drawn again (TRIES times, then the example is invalid, as the filters
    did). The repr stays a few bytes (see short_repr).
    """
    kinds = FuzzKinds(schema, tuple(boundaries), strict_types=strict_types)
    if schema.positive.is_empty:
        return st.nothing()
    return named_composite("fuzz_calls", kinds.draw)


class FuzzKinds:
    """How each kind of fuzz call is drawn from the example's `draw`: the kind one integer, then its pieces."""

    def __init__(self, schema: ArgumentSchema, boundaries: tuple[ArgumentCall, ...], *, strict_types: bool) -> None:
        self.schema = schema
        self.boundaries = boundaries
        self.strict_types = strict_types
        self.edges = fuzz_edge_candidates(schema)
        # Bases for negative and edge calls: every listed property present (unless that object cannot be drawn,
        # as when a property's schema is `false`), or any valid value.
        self.bases = [base for base in (schema.populated, schema.positive) if not base.is_empty]
        # The same values from one bytes choice each where the schema compiles to a generator (bulk.py).
        self.bulk = BulkDraws(schema)
        kinds: list[KindDraw] = [self._valid, self._negative]
        if self.edges:
            kinds.append(self._edge)
        if boundaries:
            kinds.append(self._boundary)
        self.kinds = kinds
        self._kind = _index(len(kinds))
        self._base_index = _index(len(self.bases))
        self._spread = _index(len(SPREADS))
        self._choice = _index(MAX_CHOICE + 1)
        self._start = _index(MAX_START + 1)
        self._edge_index = _index(len(self.edges))
        self._boundary_index = _index(len(boundaries))

    def draw(self, draw: st.DrawFn) -> ArgumentCall:
        """One call of a kind drawn first (Hypothesis' mutator copies the kind's span between calls of an example)."""
        if SPLIT.on:
            started = perf_counter()
            try:
                return self._draw(draw)
            finally:
                SPLIT.add("draw", started)
        return self._draw(draw)

    def _draw(self, draw: st.DrawFn) -> ArgumentCall:
        kind = self.kinds[draw(self._kind)]
        for _ in range(TRIES):
            call = kind(draw)
            if call is not None:
                return call
        reject()
        raise AssertionError("reject returns only by raising")  # pragma: no cover

    def _base(self, draw: st.DrawFn) -> dict:
        """A valid value to change: every listed property present, or any valid value (in this order)."""
        base = self.bases[draw(self._base_index)] if len(self.bases) > 1 else self.bases[0]
        return self.bulk.value(draw, base, populated=base is self.schema.populated)

    def _valid(self, draw: st.DrawFn) -> ArgumentCall:
        return ArgumentCall(POSITIVE, self.bulk.value(draw, self.schema.positive, populated=False), VALID)

    def _negative(self, draw: st.DrawFn) -> ArgumentCall | None:
        base = self._base(draw)
        spread = SPREADS[draw(self._spread)]
        return one_break(self.schema, base, spread, draw(self._choice), draw(self._start),
                         strict_types=self.strict_types)

    def _edge(self, draw: st.DrawFn) -> ArgumentCall | None:
        base = self._base(draw)
        site, label, value = self.edges[draw(self._edge_index)]
        return edge_call(self.schema, base, site, label, value)

    def _boundary(self, draw: st.DrawFn) -> ArgumentCall:
        return self.boundaries[draw(self._boundary_index)]


def _index(count: int) -> st.SearchStrategy[int]:
    """An index into `count` items, shrinking toward the first (nothing when there are none).

    `sampled_from`, not `integers`: it is one integer choice, as uniform as a bare choice, and drawn without
    the lazy wrapper every `st.integers` has (unwrapped again on each draw: a tenth of a call's draw time).
    """
    return st.sampled_from(range(count)) if count else st.nothing()
