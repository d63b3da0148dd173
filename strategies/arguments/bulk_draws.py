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
from mcpfuzz.strategies.arguments.schema_values import ArgumentSchema, hypothesis_jsonschema_strategy

# A schema whose bulk values the validator keeps refusing (a keyword the generation copy dropped, a pattern) goes
# back to its strategy for good: past TRIAL draws, when more than half of them missed.
TRIAL = 32


class BulkDraws:
    """Valid values of one schema (any, or with every listed property present), drawn in bulk where possible."""

    def __init__(self, schema: ArgumentSchema) -> None:
        self.schema = schema
        self._plain = _bulk(schema.prepared.generation)
        self._populated = _bulk(all_required(schema.prepared.generation))
        # A value from the bytes alone is valid by construction where the schema is drawn exactly (`exact`: no
        # keyword left to filtering): it is not validated again (a tenth of a 30-property call's draw).
        self._trusted = {bulk for bulk in (self._plain, self._populated)
                         if bulk is not None and bulk.whole and schema.exact}
        self.drawn = 0
        self.missed = 0

    def value(self, draw: st.DrawFn, strategy: st.SearchStrategy[dict], *, populated: bool) -> dict:
        """A valid value: from the bytes when they give one the schema accepts, else from `strategy`."""
        bulk = self._populated if populated else self._plain
        if bulk is not None and (self.drawn < TRIAL or 2 * self.missed <= self.drawn):
            self.drawn += 1
            try:
                value = bulk.draw(draw)
            except Unsatisfied:
                value = None
            if value is not None and (bulk in self._trusted or self.schema.is_valid(value)):
                return value
            self.missed += 1
        return draw(strategy)


def _bulk(generation: Any) -> BulkValues | None:
    """The bulk generator of an object schema, or None where it would replace nothing or cannot be built."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # hypothesis-jsonschema warns when formats are overridden
        try:
            bulk = BulkValues(generation, hypothesis_jsonschema_strategy, CUSTOM_FORMATS)
        except (HypothesisException, ValueError, TypeError, RecursionError):
            return None
    return bulk if bulk.useful else None
