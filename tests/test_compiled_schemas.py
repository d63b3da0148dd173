"""The schema compiler: direct strategies for common shapes draw only valid values, reach the boundaries, and
leave everything else to hypothesis-jsonschema."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, find, given, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator
from mcpfuzz.strategies.arguments.compiled import compile_schema, compiled_fully
from mcpfuzz.strategies.arguments.edges import edge_arguments
from mcpfuzz.strategies.arguments.formats import CUSTOM_FORMATS, format_checker
from mcpfuzz.strategies.arguments.schema_prep import prepare
from mcpfuzz.strategies.arguments.schema_values import ArgumentSchema, draw_examples, hypothesis_jsonschema_strategy

pytestmark = pytest.mark.unit

FAST = settings(max_examples=150, database=None, deadline=None, suppress_health_check=list(HealthCheck))
SEARCH = settings(max_examples=2000, database=None, deadline=None, suppress_health_check=list(HealthCheck))

# Scalar schemas of every kind the compiler understands, bounds of every form included.
_bound = st.one_of(st.integers(-50, 50), st.floats(-50, 50, allow_nan=False).map(lambda x: round(x, 2)))
_numeric = st.fixed_dictionaries({"type": st.sampled_from(["integer", "number"])}, optional={
    "minimum": _bound, "maximum": _bound, "exclusiveMinimum": _bound, "exclusiveMaximum": _bound,
    "multipleOf": st.integers(1, 7)}).filter(lambda s: s["type"] == "integer" or "multipleOf" not in s)
_string = st.one_of(
    st.fixed_dictionaries({"type": st.just("string")}, optional={"minLength": st.integers(0, 5),
                                                                 "maxLength": st.integers(0, 12)}),
    st.sampled_from(sorted(CUSTOM_FORMATS)).map(lambda f: {"type": "string", "format": f}))
_choice = st.one_of(
    st.lists(st.one_of(st.integers(-3, 3), st.text(max_size=3), st.booleans(), st.none()), min_size=1, max_size=5,
             unique_by=repr).map(lambda values: {"enum": values}),
    st.integers(0, 9).map(lambda v: {"const": v}),
    st.just({"type": "string", "enum": ["a", 1, "b"]}))
SCALARS = st.one_of(_numeric, _string, _choice, st.sampled_from([{"type": "boolean"}, {"type": "null"}]))


def _arrays(items: st.SearchStrategy[dict], unique: st.SearchStrategy[bool]) -> st.SearchStrategy[dict]:
    return st.builds(lambda item, low, extra, unique: {"type": "array", "items": item, "minItems": low,
                                                       "maxItems": low + extra, "uniqueItems": unique},
                     items, st.integers(0, 2), st.integers(0, 4), unique)


def _objects(members: st.SearchStrategy[dict]) -> st.SearchStrategy[dict]:
    def build(properties: dict[str, Any], required: list[bool], closed: Any) -> dict:
        schema = {"type": "object", "properties": properties,
                  "required": [name for name, flag in zip(properties, required, strict=False) if flag]}
        if closed is not None:
            schema["additionalProperties"] = closed
        return schema

    return st.builds(build, st.dictionaries(st.sampled_from("abcdef"), members, max_size=4),
                     st.lists(st.booleans(), min_size=4, max_size=4),
                     st.sampled_from([False, None, True, {"type": "integer", "maximum": 3}]))


# uniqueItems only over scalars: unique arrays of arrays or objects are the fallback's.
SCHEMAS = st.recursive(st.one_of(SCALARS, _arrays(SCALARS, st.booleans())),
                       lambda inner: st.one_of(_objects(inner), _arrays(inner, st.just(False))), max_leaves=8)
# Subschemas the compiler leaves to hypothesis-jsonschema (each must still draw valid values).
UNSUPPORTED = [
    {"type": "string", "pattern": "^[a-z]{2,4}$"},
    {"oneOf": [{"type": "integer", "maximum": 0}, {"type": "string", "maxLength": 2}]},
    {"anyOf": [{"type": "integer"}, {"type": "null"}]},
    {"allOf": [{"type": "integer", "minimum": 0}, {"type": "integer", "maximum": 5}]},
    {"type": ["string", "integer"]},
    {"type": "object", "properties": {"x": {"type": "integer"}}, "minProperties": 1},
    {"type": "object", "patternProperties": {"^n_": {"type": "integer"}}, "additionalProperties": False},
    {"type": "object", "propertyNames": {"maxLength": 2}, "maxProperties": 2},
    {"type": "array", "items": {"type": "integer"}, "contains": {"const": 3}},
    {"type": "number", "multipleOf": 0.25, "maximum": 2},
    {"type": "string", "format": "date-time"},
    {"type": "string", "format": "uuid", "maxLength": 36},
    {"type": "integer", "not": {"const": 0}},
    {"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
     "dependencies": {"a": ["b"]}},
    {"if": {"type": "integer"}, "then": {"minimum": 3}, "else": {"type": "string"}},
    {"type": "array", "prefixItems": [{"type": "integer"}, {"type": "string"}]},
    {},
]


def _validator(schema: Any) -> Draft202012Validator:
    return Draft202012Validator(schema, format_checker=format_checker())


def _compiled(schema: Any) -> st.SearchStrategy[Any]:
    return compile_schema(prepare(schema).generation, hypothesis_jsonschema_strategy, CUSTOM_FORMATS)


@FAST
@given(st.data(), SCHEMAS)
def test_compiled_strategies_draw_only_valid_values(data: st.DataObject, schema: dict) -> None:
    validator = _validator(schema)
    strategy = compile_schema(schema, hypothesis_jsonschema_strategy, CUSTOM_FORMATS)
    for _ in range(5):
        value = data.draw(strategy)
        assert validator.is_valid(value), (schema, value, [e.message for e in validator.iter_errors(value)])


@FAST
@given(SCHEMAS)
def test_common_shapes_compile_without_the_fallback(schema: dict) -> None:
    sent: list[Any] = []
    compile_schema(schema, lambda sub: sent.append(sub) or st.nothing(), CUSTOM_FORMATS)
    # Only the extra members an open object allows (any JSON value, `{}`) are hypothesis-jsonschema's.
    assert all(sub == {} for sub in sent), sent


@pytest.mark.parametrize("schema", UNSUPPORTED, ids=lambda s: next(iter(s), "empty") + "-" + str(len(s)))
def test_unsupported_keywords_fall_back_and_still_draw_valid_values(schema: dict) -> None:
    wrapped = {"type": "object", "properties": {"v": schema, "n": {"type": "integer"}}, "required": ["v", "n"],
               "additionalProperties": False}
    assert not compiled_fully(wrapped, CUSTOM_FORMATS)
    # Only the unsupported member goes to the fallback: its sibling and the object are compiled.
    sent: list[Any] = []

    def fallback(sub: Any) -> st.SearchStrategy[Any]:
        sent.append(sub)
        return hypothesis_jsonschema_strategy(sub)

    compile_schema(wrapped, fallback, CUSTOM_FORMATS)
    assert sent and all(sub is not wrapped and sub != {"type": "integer"} for sub in sent)
    validator = _validator(wrapped)
    values = draw_examples(_compiled(wrapped), 30, seed=4)
    assert len(values) == 30 and all(validator.is_valid(v) for v in values)


@pytest.mark.parametrize(("schema", "wanted"), [
    ({"type": "integer", "minimum": -7, "maximum": 12}, [-7, 12]),
    ({"type": "integer", "exclusiveMinimum": -7, "exclusiveMaximum": 12}, [-6, 11]),
    ({"type": "integer", "minimum": 0.5, "maximum": 9.5}, [1, 9]),
    ({"type": "integer", "minimum": 1, "maximum": 100, "multipleOf": 7}, [7, 98]),
    ({"type": "number", "minimum": -2.5, "maximum": 4.25}, [-2.5, 4.25]),
    ({"enum": ["red", "green", 3, None]}, ["red", "green", 3, None]),
    ({"const": "only"}, ["only"]),
    ({"type": "string", "maxLength": 6}, ["", 6]),
    ({"type": "string", "minLength": 2, "maxLength": 4}, [2, 4]),
    ({"type": "array", "items": {"type": "boolean"}, "minItems": 1, "maxItems": 5}, [1, 5]),
])
def test_boundaries_are_reachable(schema: dict, wanted: list[Any]) -> None:
    strategy = _compiled(schema)
    sized = isinstance(schema.get("maxLength", schema.get("maxItems")), int)
    for target in wanted:
        if sized and isinstance(target, int):
            found = find(strategy, lambda v, n=target: len(v) == n, settings=SEARCH)
            assert len(found) == target
        else:
            found = find(strategy, lambda v, t=target: v == t and type(v) is type(t), settings=SEARCH)
            assert found == target


def test_exclusive_number_bounds_are_never_drawn() -> None:
    schema = {"type": "number", "exclusiveMinimum": 0, "exclusiveMaximum": 1}
    values = draw_examples(_compiled(schema), 200, seed=9)
    assert values and all(0 < v < 1 for v in values)


def test_unique_items_count_1_and_1_0_as_one_number() -> None:
    schema = {"type": "array", "items": {"type": "number", "minimum": 0, "maximum": 2}, "minItems": 2,
              "uniqueItems": True}
    validator = _validator(schema)
    values = draw_examples(_compiled(schema), 100, seed=3)
    assert values and all(validator.is_valid(v) for v in values)


def test_the_same_seed_draws_the_same_values() -> None:
    schema = {"type": "object", "properties": {
        "q": {"type": "string", "maxLength": 30}, "n": {"type": "integer", "minimum": 0},
        "tags": {"type": "array", "items": {"enum": ["a", "b"]}}, "id": {"type": "string", "format": "uuid"}},
        "required": ["q"]}
    first = draw_examples(ArgumentSchema(schema).positive, 40, seed=11)
    again = draw_examples(ArgumentSchema(schema).positive, 40, seed=11)
    other = draw_examples(ArgumentSchema(schema).positive, 40, seed=12)
    assert first == again and len(first) == 40 and first != other


def test_compiled_draws_are_never_rejected_by_the_validator() -> None:
    schema = {"type": "object", "properties": {
        "text": {"type": "string", "minLength": 1, "maxLength": 50}, "limit": {"type": "integer", "maximum": 10},
        "mode": {"enum": ["fast", "slow"]}, "ratio": {"type": "number", "exclusiveMinimum": 0},
        "when": {"type": "string", "format": "duration"},
        "inner": {"type": "object", "properties": {"x": {"type": "boolean"}}, "additionalProperties": False}},
        "required": ["text", "inner"], "additionalProperties": False}
    arguments = ArgumentSchema(schema)
    assert compiled_fully(arguments.prepared.generation, CUSTOM_FORMATS)
    values = draw_examples(arguments.positive, 60, seed=2)
    assert len(values) == 60 and arguments.accepted == 60 and not arguments.rejections


def test_edge_values_stay_reachable_and_refused_ones_are_never_drawn() -> None:
    """The compiled alphabet never draws a lone surrogate: the edge strategy mixes it (and the others) in."""
    schema = {"type": "object", "properties": {"text": {"type": "string"}, "short": {"type": "string", "maxLength": 5},
                                               "n": {"type": "integer"}}, "required": ["text"],
              "additionalProperties": False}
    arguments = ArgumentSchema(schema)
    edges = edge_arguments(arguments)
    surrogate = find(edges, lambda call: call.arguments["text"] == "\ud800", settings=SEARCH)
    assert surrogate.unicode_unsafe and "lone surrogate" in surrogate.description
    assert find(edges, lambda call: call.arguments.get("n") == 2**63, settings=SEARCH).arguments["n"] == 2**63
    validator = _validator(schema)
    calls = draw_examples(edges, 100, seed=6)
    assert calls and all(validator.is_valid(call.arguments) for call in calls)
    assert not any(len(call.arguments.get("short", "")) > 5 for call in calls)
    assert arguments.member_accepts(("short",), "x" * 6) is False and arguments.member_accepts(("short",), "")


def test_a_member_that_cannot_be_drawn_is_never_present() -> None:
    """A recursive $ref is cut after three levels (`false`): the optional member there is left out, not retried."""
    schema = {"type": "object", "properties": {"value": {"type": "integer"}, "next": {"$ref": "#"}},
              "required": ["value"], "additionalProperties": False}
    arguments = ArgumentSchema(schema)
    values = draw_examples(arguments.positive, 60, seed=8)
    assert len(values) == 60 and not arguments.rejections
    assert any("next" in value for value in values)
    required = {"type": "object", "properties": {"a": False, "b": {"type": "integer"}}, "required": ["a"]}
    assert compile_schema(required, hypothesis_jsonschema_strategy, CUSTOM_FORMATS).is_empty
    optional = {**required, "required": ["b"], "additionalProperties": False}
    drawn = draw_examples(compile_schema(optional, hypothesis_jsonschema_strategy, CUSTOM_FORMATS), 20, seed=1)
    assert len(drawn) == 20 and all(set(value) == {"b"} for value in drawn)


def test_a_bound_of_minus_zero_is_zero() -> None:
    """JSON has one zero: minimum 0.0 and maximum -0.0 hold 0 (Hypothesis alone finds no float between them)."""
    schema = {"type": "number", "minimum": 0.0, "maximum": -0.0}
    assert draw_examples(_compiled(schema), 5, seed=1) == [0.0]
