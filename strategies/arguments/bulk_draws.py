"""A schema's valid values for the fuzz phase's calls: from one bytes choice (bulk.py) where that works, else
from the schema's strategy, as before."""

from __future__ import annotations

import warnings
from typing import Any

from hypothesis import strategies as st
from hypothesis.errors import HypothesisException
from mcpfuzz.strategies.arguments.bulk import BulkValues, Unsatisfied
from mcpfuzz.strategies.arguments.formats import CUSTOM_FORMATS
from mcpfuzz.strategies.arguments.schema_prep import all_required
from mcpfuzz.strategies.arguments.schema_values import (
    ArgumentSchema,
    draw_examples,
    hypothesis_jsonschema_strategy,
)

# A schema whose bulk values the validator mostly refuses (a keyword the generation copy dropped) keeps its strategy:
# decided once, from TRIAL values drawn with a fixed seed before the search, so that the same choices always give
# the same value (a decision taken during the search would replay an example differently while it shrinks).
TRIAL = 24


class BulkDraws:
    """Valid values of one schema (any, or with every listed property present), drawn in bulk where possible."""

    def __init__(self, schema: ArgumentSchema) -> None:
        self.schema = schema
        # A value from the bytes alone is valid by construction where the schema is drawn exactly (`exact`: no
        # keyword left to filtering): it is not validated again (a tenth of a 30-property call's draw).
        self._trusted: set[BulkValues] = set()
        self._plain = self._checked(_bulk(schema.prepared.generation))
        self._populated = self._checked(_bulk(all_required(schema.prepared.generation)))

    def value(self, draw: st.DrawFn, strategy: st.SearchStrategy[dict], *, populated: bool) -> dict:
        """A valid value: from the bytes when they give one the schema accepts, else from `strategy`."""
        bulk = self._populated if populated else self._plain
        if bulk is not None:
            try:
                value = bulk.draw(draw)
            except Unsatisfied:
                value = None
            if value is not None and (bulk in self._trusted or self.schema.is_valid(value)):
                return value
        return draw(strategy)

    def _checked(self, bulk: BulkValues | None) -> BulkValues | None:
        """`bulk` when its values are valid by construction or mostly valid on a trial; else None."""
        if bulk is None:
            return None
        if bulk.whole and self.schema.exact:
            self._trusted.add(bulk)
            return bulk

        @st.composite
        def trial(draw: st.DrawFn) -> bool:
            try:
                return self.schema.is_valid(bulk.draw(draw))
            except Unsatisfied:
                return False

        kept = draw_examples(trial(), TRIAL, seed=0)
        return bulk if kept and 2 * sum(kept) > len(kept) else None


def _bulk(generation: Any) -> BulkValues | None:
    """The bulk generator of an object schema, or None where it would replace nothing or cannot be built."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # hypothesis-jsonschema warns when formats are overridden
        try:
            bulk = BulkValues(generation, hypothesis_jsonschema_strategy, CUSTOM_FORMATS)
        except (HypothesisException, ValueError, TypeError, RecursionError):
            return None
    return bulk if bulk.useful else None
