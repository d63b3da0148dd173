"""Valid tool arguments from an inputSchema: the one module that talks to hypothesis-jsonschema."""

from __future__ import annotations

import contextlib
import warnings
from collections import Counter
from functools import cached_property
from typing import Any

from hypothesis import HealthCheck, Phase, Verbosity, given, settings
from hypothesis import seed as hypothesis_seed
from hypothesis import strategies as st
from hypothesis.errors import HypothesisException
from hypothesis_jsonschema import from_schema
from mcpfuzz.strategies.argument_sites import Path, Site, object_paths, sites
from mcpfuzz.strategies.formats import CUSTOM_FORMATS
from mcpfuzz.strategies.schema_prep import PreparedSchema, SchemaProblem, all_required, prepare

# Below this share of accepted draws, a schema is reported as one mcpfuzz cannot fuzz well.
MIN_ACCEPTED_SHARE = 0.25
PREFLIGHT_DRAWS = 12


class ArgumentSchema:
    """A tool's inputSchema: validation in its own dialect, and strategies of values valid under it."""

    def __init__(self, schema: Any) -> None:
        self.schema = schema
        self.prepared: PreparedSchema = prepare(schema)
        self.rejections: Counter[str] = Counter()
        self.accepted = 0

    def is_valid(self, value: Any) -> bool:
        """Valid under the original schema (2020-12 unless `$schema` says otherwise), formats included."""
        return isinstance(value, dict) and self.prepared.validator.is_valid(value)

    def errors(self, value: Any) -> list:
        """The validation errors of a value, most specific first."""
        return sorted(self.prepared.validator.iter_errors(value), key=lambda e: -len(e.absolute_path))

    def _keep(self, value: Any) -> bool:
        """The filter of drawn values; counts why values were rejected, for the warning."""
        if self.is_valid(value):
            self.accepted += 1
            return True
        errors = self.errors(value) if isinstance(value, dict) else []
        self.rejections[str(errors[0].validator) if errors else "type"] += 1
        return False

    def _strategy(self, generation: Any) -> st.SearchStrategy[dict]:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # hypothesis-jsonschema warns when formats are overridden
            try:
                base = from_schema(generation, custom_formats=CUSTOM_FORMATS)
            except (HypothesisException, ValueError, TypeError, RecursionError) as error:
                raise SchemaProblem(_keyword_in(str(error)), f"no generator for this schema: {error}"[:300],
                                    "simplify the schema (a plain object of typed properties draws best)"
                                    ) from None
        return base.filter(self._keep)

    @cached_property
    def sites(self) -> list[Site]:
        """Every property site (nested objects included)."""
        return sites(self.prepared.generation)

    @cached_property
    def objects(self) -> list[tuple[Path, dict]]:
        """The root object schema and every nested one, with their paths."""
        return object_paths(self.prepared.generation)

    @cached_property
    def positive(self) -> st.SearchStrategy[dict]:
        """Any argument object valid under the schema."""
        return self._strategy(self.prepared.generation)

    @cached_property
    def populated(self) -> st.SearchStrategy[dict]:
        """Valid argument objects with every listed property present (where the schema allows it)."""
        return self._strategy(all_required(self.prepared.generation))

    def preflight(self, seed: int) -> tuple[list[dict], list[dict]]:
        """A few deterministic draws (plain, fully populated); SchemaProblem when the schema resists drawing."""
        plain = draw_examples(self.positive, PREFLIGHT_DRAWS, seed)
        populated = draw_examples(self.populated, PREFLIGHT_DRAWS // 2, seed) or plain
        attempts = self.accepted + sum(self.rejections.values())
        if not plain:
            keyword = self.rejections.most_common(1)[0][0] if self.rejections else "type"
            raise SchemaProblem(keyword, "no valid arguments could be drawn (the schema may be unsatisfiable)",
                                f"check the `{keyword}` constraints of the inputSchema")
        if attempts and self.accepted / attempts < MIN_ACCEPTED_SHARE and self.rejections:
            keyword = self.rejections.most_common(1)[0][0]
            raise SchemaProblem(keyword, f"{sum(self.rejections.values())} of {attempts} drawn values broke "
                                f"`{keyword}`", f"mcpfuzz cannot draw `{keyword}` well; simplify that part of "
                                "the schema or exclude the tool with --exclude-tool")
        return plain, populated


def draw_examples(strategy: st.SearchStrategy[Any], count: int, seed: int) -> list[Any]:
    """`count` values drawn deterministically from `seed`; the first is the simplest the strategy has."""
    values: list[Any] = []

    @settings(database=None, max_examples=count, phases=[Phase.generate], deadline=None, derandomize=False,
              suppress_health_check=list(HealthCheck), verbosity=Verbosity.quiet)
    @hypothesis_seed(seed)
    @given(strategy)
    def collect(value: Any) -> None:
        values.append(value)

    with contextlib.suppress(HypothesisException):  # unsatisfiable: the caller sees too few values
        collect()
    return values


def _keyword_in(message: str) -> str:
    for keyword in ("$ref", "pattern", "format", "allOf", "anyOf", "oneOf", "not", "if", "dependencies"):
        if keyword in message:
            return keyword
    return "inputSchema"
