"""Valid values from two Hypothesis choices (strategies/arguments/bulk.py): valid under the schema, the same for the
same choices, simplest for a zero seed, and a failure still shrinks toward the simplest value that fails."""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, find, settings
from hypothesis import strategies as st
from mcpfuzz.strategies.arguments.bulk import BulkValues, Reader, Unsatisfied
from mcpfuzz.strategies.arguments.bulk_draws import BulkDraws
from mcpfuzz.strategies.arguments.formats import CUSTOM_FORMATS
from mcpfuzz.strategies.arguments.schema_values import ArgumentSchema, draw_examples, hypothesis_jsonschema_strategy

from benchmarks.nested_server import nested_schema

pytestmark = pytest.mark.unit


def _object(properties: dict, required: list[str] | None = None, **more: object) -> dict:
    return {"type": "object", "properties": properties, "required": list(properties) if required is None else required,
            "additionalProperties": False, **more}


SCHEMAS = {
    "strings": _object({"a": {"type": "string", "minLength": 2, "maxLength": 5}, "b": {"type": "string"},
                        "c": {"type": "string", "maxLength": 0}, "d": {"type": "string", "minLength": 300}}),
    "integers": _object({"a": {"type": "integer", "minimum": -3, "maximum": 3},
                         "b": {"type": "integer", "exclusiveMinimum": 10},
                         "c": {"type": "integer", "exclusiveMaximum": -10, "multipleOf": 7},
                         "d": {"type": "integer", "minimum": 2**40, "maximum": 2**41},
                         "e": {"type": "integer"}}),
    "numbers": _object({"a": {"type": "number", "minimum": 0, "exclusiveMaximum": 1},
                        "b": {"type": "number", "exclusiveMinimum": 0.5, "exclusiveMaximum": 0.50001},
                        "c": {"type": "number", "maximum": -1e300}, "d": {"type": "number"},
                        "e": {"type": "number", "minimum": 3, "maximum": 3}}),
    "choices": _object({"a": {"enum": ["x", 1, None, [1], {"k": 2}]}, "b": {"const": "only"},
                        "c": {"type": "string", "enum": ["s", 2, "t"]}, "d": {"type": "boolean"},
                        "e": {"type": "null"}}),
    "arrays": _object({"a": {"type": "array", "items": {"type": "integer", "minimum": 0, "maximum": 3},
                             "minItems": 2, "maxItems": 4, "uniqueItems": True},
                       "b": {"type": "array", "items": {"type": "string"}, "minItems": 1},
                       "c": {"type": "array", "items": {"type": "boolean"}, "maxItems": 0}}),
    "optional and extra": _object({"a": {"type": "string"}, "b": {"type": "integer"}, "c": {"type": "boolean"}},
                                  required=["a"], additionalProperties=True),
    "extra of a schema": _object({"a": {"type": "string"}}, additionalProperties={"type": "integer", "minimum": 5}),
    "many optional": _object({f"p{i}": {"type": "integer", "minimum": i} for i in range(20)}, required=[]),
    "nested, formats": nested_schema(),
}
ALWAYS = settings(max_examples=300, database=None, deadline=None, suppress_health_check=list(HealthCheck))


def _bulk(schema: dict) -> BulkValues:
    return BulkValues(ArgumentSchema(schema).prepared.generation, hypothesis_jsonschema_strategy, CUSTOM_FORMATS)


def _values(schema: dict, count: int, seed: int) -> list:
    bulk = _bulk(schema)

    @st.composite
    def values(draw: st.DrawFn) -> object:
        try:
            return bulk.draw(draw)
        except Unsatisfied:
            return None

    return draw_examples(values(), count, seed)


@pytest.mark.parametrize("name", sorted(SCHEMAS))
def test_every_value_is_valid_under_the_schema(name: str) -> None:
    schema = SCHEMAS[name]
    checked = ArgumentSchema(schema)
    values = [value for value in _values(schema, 300, seed=1) if value is not None]
    # Unique items of a small range run out now and then (the caller then draws from the strategy).
    assert len(values) >= 200, f"{name}: only {len(values)} values of 300"
    invalid = [value for value in values if not checked.is_valid(value)]
    assert not invalid, f"{name}: {json.dumps(invalid[:3])[:500]}"
    distinct = len({json.dumps(value, sort_keys=True) for value in values})
    assert distinct > min(len(values) // 2, 15), "values barely vary"


def test_the_same_choices_give_the_same_values() -> None:
    schema = SCHEMAS["nested, formats"]
    assert _values(schema, 50, seed=7) == _values(schema, 50, seed=7)
    assert _values(schema, 50, seed=7) != _values(schema, 50, seed=8)


def test_a_zero_seed_gives_the_simplest_value() -> None:
    bulk = _bulk(_object({"s": {"type": "string", "minLength": 1}, "n": {"type": "integer", "minimum": 4},
                          "x": {"type": "number", "maximum": -2}, "o": {"type": "boolean"}},
                         required=["s", "n", "x"]))
    assert bulk.generate(Reader(0, 2048), lambda strategy: None) == {"s": " ", "n": 4, "x": -2.0}
    assert bulk.generate(Reader(123, 0), lambda strategy: None) == {"s": " ", "n": 4, "x": -2.0}


def test_a_failure_shrinks_toward_the_simplest_value() -> None:
    """The integer is read first: as the budget shrinks toward its bytes, the string after it becomes simplest (the
    seed's shrinking is not monotone, so a byte or two past the integer's may stay)."""
    bulk = _bulk(_object({"n": {"type": "integer", "minimum": 0, "maximum": 1000}, "s": {"type": "string"}}))
    found = find(st.composite(lambda draw: bulk.draw(draw))(), lambda value: value["n"] > 500, settings=ALWAYS)
    assert found["n"] > 500 and len(found["s"]) <= 8 and len(found["s"].replace(" ", "")) <= 2, found


def test_strings_reach_beyond_ascii_and_their_length_limits() -> None:
    values = [value for value in _values(SCHEMAS["strings"], 300, seed=3) if value is not None]
    texts = [value["b"] for value in values]
    assert any(any(ord(c) > 0x7F for c in text) for text in texts)
    assert any(any(ord(c) > 0xFFFF for c in text) for text in texts)
    assert any(len(text) > 32 for text in texts) and any(text == "" for text in texts)
    assert {len(value["a"]) for value in values} == {2, 3, 4, 5}


def test_a_schema_the_generator_cannot_serve_keeps_its_strategy() -> None:
    """A pattern is not understood: the whole object goes to its strategy (nothing would be saved)."""
    draws = BulkDraws(ArgumentSchema(_object({"p": {"type": "string", "pattern": "^a+$"}})))
    values = draw_examples(st.composite(lambda draw: draws.value(draw, draws.schema.positive, populated=False))(),
                           50, seed=1)
    assert values and all(set(value["p"]) == {"a"} for value in values)
