"""Tool-argument generation (no server): valid values stay valid, negatives break exactly one rule."""

from __future__ import annotations

import contextlib
import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator
from mcpfuzz.strategies.arguments.call import NEGATIVE, POSITIVE
from mcpfuzz.strategies.arguments.compiled import compiled_fully
from mcpfuzz.strategies.arguments.coverage import coverage_calls
from mcpfuzz.strategies.arguments.edges import edge_arguments
from mcpfuzz.strategies.arguments.formats import CUSTOM_FORMATS, format_checker
from mcpfuzz.strategies.arguments.negative import negative_arguments, negative_calls
from mcpfuzz.strategies.arguments.schema_prep import SchemaProblem
from mcpfuzz.strategies.arguments.schema_values import (
    PREFLIGHT_CHARACTERS,
    PREFLIGHT_DRAWS,
    PREFLIGHT_MIN_DRAWS,
    ArgumentSchema,
    draw_examples,
    enough_drawn,
    hypothesis_jsonschema_strategy,
)

pytestmark = pytest.mark.unit

SEARCH = {
    "type": "object",
    "properties": {
        "query": {"type": "string", "minLength": 1, "maxLength": 200},
        "limit": {"type": "integer", "minimum": 1, "maximum": 10},
        "sort": {"enum": ["relevance", "date", "name"]},
        "tags": {"type": "array", "items": {"type": "string", "maxLength": 20}, "maxItems": 5},
        "filters": {"type": "object"},
    },
    "required": ["query"],
    "additionalProperties": False,
}
TREE = {
    "type": "object",
    "properties": {"tree": {"$ref": "#/$defs/node"}},
    "required": ["tree"],
    "additionalProperties": False,
    "$defs": {"node": {"type": "object", "properties": {
        "value": {"type": "integer"},
        "children": {"type": "array", "items": {"$ref": "#/$defs/node"}, "maxItems": 3}},
        "required": ["value"], "additionalProperties": False}},
}
FORMATS = ("uuid", "date-time", "date", "time", "duration", "email", "uri", "uri-reference", "hostname", "ipv4",
           "ipv6", "regex")
FAST = settings(max_examples=60, database=None, deadline=None, suppress_health_check=list(HealthCheck))


def test_object_schema_draws_with_the_pinned_hypothesis() -> None:
    """The version trap: hypothesis-jsonschema 0.23.1 crashes on object schemas with hypothesis >= 6.170.10.

    Common shapes are compiled to direct strategies; `minProperties` leaves the whole object to
    hypothesis-jsonschema's object strategy, the one that crashes.
    """
    schema = {**SEARCH, "minProperties": 2}
    assert not compiled_fully(schema, CUSTOM_FORMATS)
    values = draw_examples(hypothesis_jsonschema_strategy(schema), 20, seed=1)
    assert len(values) == 20 and all(isinstance(v, dict) and "query" in v for v in values)
    values = draw_examples(ArgumentSchema(schema).positive, 20, seed=1)
    assert len(values) == 20 and all(isinstance(v, dict) and len(v) >= 2 for v in values)


@pytest.mark.parametrize("schema", [SEARCH, TREE], ids=["flat", "recursive-ref"])
def test_positive_values_are_valid_under_2020_12(schema: dict) -> None:
    arguments = ArgumentSchema(schema)
    validator = Draft202012Validator(schema, format_checker=format_checker())

    @FAST
    @given(arguments.positive)
    def check(value: dict) -> None:
        assert validator.is_valid(value), value

    check()


def test_recursive_ref_draws_nested_trees() -> None:
    values = draw_examples(ArgumentSchema(TREE).populated, 30, seed=3)
    assert any(value["tree"].get("children") for value in values)


@pytest.mark.parametrize("fmt", FORMATS)
def test_every_format_draws_values_that_pass_the_format_check(fmt: str) -> None:
    schema = {"type": "object", "properties": {"v": {"type": "string", "format": fmt}}, "required": ["v"],
              "additionalProperties": False}
    values = draw_examples(ArgumentSchema(schema).positive, 15, seed=2)
    assert len(values) == 15
    checker = format_checker()
    assert all(checker.conforms(v["v"], fmt) for v in values)


def test_uuid_format_is_really_checked() -> None:
    checker = format_checker()
    assert checker.conforms("e3e70682-c209-4cac-629f-6fbed82c07cd", "uuid")
    assert not checker.conforms("e3e70682c2094cac629f6fbed82c07cd", "uuid")
    assert not checker.conforms("PT", "duration") and checker.conforms("P1DT2H", "duration")
    assert not checker.conforms("2024-02-30T00:00:00Z", "date-time")


def test_unsatisfiable_schema_is_reported_with_its_keyword() -> None:
    schema = {"type": "object", "properties": {"n": {"type": "integer", "minimum": 5, "maximum": 1}},
              "required": ["n"]}
    with pytest.raises(SchemaProblem) as raised:
        ArgumentSchema(schema).preflight(1)
    assert raised.value.tip


def test_remote_ref_and_invalid_schema_are_reported() -> None:
    with pytest.raises(SchemaProblem, match="not local"):
        ArgumentSchema({"type": "object", "properties": {"a": {"$ref": "https://example.com/s.json"}}})
    with pytest.raises(SchemaProblem, match="invalid"):
        ArgumentSchema({"type": "object", "properties": {"a": {"type": "strin"}}})


def test_draft4_boolean_exclusive_maximum_is_honoured() -> None:
    schema = {"$schema": "http://json-schema.org/draft-04/schema#", "type": "object",
              "properties": {"r": {"type": "number", "maximum": 1, "exclusiveMaximum": True}}, "required": ["r"]}
    values = draw_examples(ArgumentSchema(schema).positive, 30, seed=4)
    assert values and all(v["r"] < 1 for v in values)


def test_negative_calls_break_exactly_one_rule_and_say_which() -> None:
    arguments = ArgumentSchema(SEARCH)
    base = {"query": "abc", "limit": 5, "sort": "date", "tags": ["a"], "filters": {}}
    calls = {c.description: c for c in negative_calls(arguments, base)}
    assert "violates maximum at /properties/limit (maximum 10, sent 11)" in calls
    assert "violates required at /properties/query (removed `query`)" in calls
    assert "violates additionalProperties at / (added property `mcpfuzz_unexpected`)" in calls
    assert any(d.startswith("violates enum at /properties/sort") for d in calls)
    assert any(d.startswith("violates maxLength at /properties/query") for d in calls)
    for call in calls.values():
        errors = list(Draft202012Validator(SEARCH).iter_errors(call.arguments))
        assert errors and {str(e.validator) for e in errors} == {call.rule}, call.description


def test_lax_coercions_are_only_sent_with_strict_types() -> None:
    schema = {"type": "object", "properties": {"n": {"type": "integer"}, "s": {"type": "string"}},
              "required": ["n", "s"]}
    arguments = ArgumentSchema(schema)
    lax = [c.arguments for c in negative_calls(arguments, {"n": 1, "s": "x"}, choice=0)]
    lax += [c.arguments for k in range(1, 4) for c in negative_calls(arguments, {"n": 1, "s": "x"}, choice=k)]
    sent = [a[k] for a in lax for k in ("n", "s") if k in a]
    assert 1.5 not in sent and "12" not in sent and 12345 not in sent and None not in sent
    strict = [c.arguments for k in range(8) for c in
              negative_calls(arguments, {"n": 1, "s": "x"}, strict_types=True, choice=k)]
    assert any(a.get("n") == 1.5 for a in strict) and any(a.get("s") == 12345 for a in strict)
    assert any("n" in a and a["n"] is None for a in strict)


def test_negative_strategy_only_draws_invalid_values() -> None:
    arguments = ArgumentSchema(SEARCH)
    validator = Draft202012Validator(SEARCH)

    @FAST
    @given(negative_arguments(arguments))
    def check(call) -> None:  # noqa: ANN001
        assert call.kind == NEGATIVE and not validator.is_valid(call.arguments)

    check()


def test_edge_strategy_draws_valid_edge_values() -> None:
    arguments = ArgumentSchema(SEARCH)
    seen: set[str] = set()

    @settings(max_examples=150, database=None, deadline=None, suppress_health_check=list(HealthCheck))
    @given(edge_arguments(arguments))
    def check(call) -> None:  # noqa: ANN001
        assert call.kind == POSITIVE and arguments.is_valid(call.arguments)
        seen.add(call.description.split(" at ")[0])

    check()
    assert len(seen) >= 5


def test_coverage_hits_boundaries_enums_pairs_edges_and_negatives() -> None:
    schema = {"type": "object", "properties": {
        "kind": {"enum": ["a", "b", "c"]}, "color": {"enum": ["red", "black"]},
        "limit": {"type": "integer", "minimum": 1, "maximum": 10},
        "tags": {"type": "array", "items": {"type": "string"}, "maxItems": 3},
        "blob": {"type": "object"}, "name": {"type": "string"}}, "required": ["kind"],
        "additionalProperties": False}
    arguments = ArgumentSchema(schema)
    plain, populated = arguments.preflight(1)
    calls = coverage_calls(arguments, plain, populated, seed=1)
    sent = [c.arguments for c in calls if c.kind == POSITIVE]
    assert all(arguments.is_valid(a) for a in sent)
    assert {a.get("kind") for a in sent} >= {"a", "b", "c"}
    assert any(a.get("kind") == "c" and a.get("color") == "black" for a in sent)
    assert any(a.get("limit") == 10 for a in sent) and any(a.get("limit") == 1 for a in sent)
    assert any(len(a.get("tags", [])) == 3 for a in sent)
    depths = {json.dumps(a.get("blob")).count("{") for a in sent if isinstance(a.get("blob"), dict)}
    assert {6, 32, 256} <= depths
    descriptions = [c.description for c in calls if c.kind == NEGATIVE]
    assert "violates maximum at /properties/limit (maximum 10, sent 11)" in descriptions
    assert "violates required at /properties/kind (removed `kind`)" in descriptions
    strings = [c for c in calls if c.description.startswith("edge value: a lone surrogate")]
    assert strings and json.dumps(strings[0].arguments).count("\\ud800") == 1


def test_generation_is_deterministic_for_a_seed() -> None:
    first = draw_examples(ArgumentSchema(SEARCH).positive, 10, seed=42)
    again = draw_examples(ArgumentSchema(SEARCH).positive, 10, seed=42)
    other = draw_examples(ArgumentSchema(SEARCH).positive, 10, seed=43)
    assert first == again and first != other


def test_strategies_compose_with_plain_hypothesis() -> None:
    """The strategies are ordinary Hypothesis strategies (usable in a user's own tests)."""
    arguments = ArgumentSchema(SEARCH)

    @FAST
    @given(st.tuples(arguments.positive, negative_arguments(arguments)))
    def check(pair) -> None:  # noqa: ANN001
        assert arguments.is_valid(pair[0]) and not arguments.is_valid(pair[1].arguments)

    check()


@pytest.mark.parametrize("kind", ["integer", "number"])
def test_a_one_element_array_for_a_number_is_a_strict_type_change_only(kind: str) -> None:
    """JavaScript's Number([1]) is 1 (zod's z.coerce.number() takes it): lax coercion, sent only with
    --strict-types; [1, 2] (NaN to Number()) is sent always."""
    schema = ArgumentSchema({"type": "object", "properties": {"n": {"type": kind}}, "required": ["n"]})

    def sent(strict: bool) -> list[object]:
        return [call.arguments["n"] for choice in range(8)
                for call in negative_calls(schema, {"n": 3}, strict_types=strict, choice=choice)
                if call.rule == "type"]

    assert [1] not in sent(False) and [1, 2] in sent(False)
    assert [1] in sent(True)


# -- preparing a target: one Hypothesis run, the same simplest values, a cheap meta-schema check ----------------

OPTIONAL_TAGS = {"type": "object", "properties": {
    "query": {"type": "string", "maxLength": 100, "title": "Query"},
    "tags": {"anyOf": [{"type": "array", "items": {"type": "string"}, "maxItems": 5}, {"type": "null"}],
             "default": None, "title": "Tags"}}, "required": ["query"], "title": "searchArguments"}
DESCRIBED_REF = {"type": "object", "properties": {"at": {"$ref": "#/$defs/point", "description": "where"}},
                 "required": ["at"], "$defs": {"point": {"type": "object", "properties": {
                     "x": {"type": "integer"}, "y": {"type": "integer"}}, "required": ["x", "y"]}}}
PATTERNED = {"type": "object", "properties": {"a": {"type": "string", "pattern": "^x[0-9]$"}}, "required": ["a"]}
# A pipeline of stages, each a free-form object under a `oneOf` (as database query tools declare).
LARGE_VALUES = {"type": "object", "properties": {"pipeline": {"type": "array", "items": {"oneOf": [
    {"type": "object", "properties": {stage: {"type": "object", "additionalProperties": {}}}, "required": [stage],
     "additionalProperties": False} for stage in ("$match", "$project", "$group")]}}}, "required": ["pipeline"]}


@pytest.mark.parametrize("schema", [SEARCH, TREE, OPTIONAL_TAGS, DESCRIBED_REF, PATTERNED,
                                    {"type": "object", "properties": {"n": {"type": "number", "exclusiveMinimum": 2,
                                                                            "multipleOf": 0.5}}}])
def test_preflight_gives_the_values_the_first_draws_of_each_strategy_give(schema: dict) -> None:
    """The preflight's values are the first of earlier versions' preflight draws (a run of each strategy); for a
    schema drawn exactly, one run of one example gives them, the simplest, whatever the seed."""
    arguments = ArgumentSchema(schema)
    plain, populated = arguments.preflight(7)
    assert plain == draw_examples(ArgumentSchema(schema).positive, 12, seed=7)[:1]
    assert populated == draw_examples(ArgumentSchema(schema).populated, 6, seed=7)[:1]
    if arguments.exact:
        assert ArgumentSchema(schema).preflight(8) == (plain, populated)


def test_a_schema_drawn_exactly_needs_one_example_and_the_others_are_judged_on_their_draws() -> None:
    """Compiled shapes, "any value" extras, pydantic's Optional (anyOf with null) and a described $ref draw valid
    values by construction: one example. Any other schema is drawn more, and a keyword left to filtering is
    judged by its rejections."""
    for schema in (SEARCH, OPTIONAL_TAGS, DESCRIBED_REF, {"type": "object", "properties": {"a": {}}}):
        arguments = ArgumentSchema(schema)
        arguments.preflight(1)
        assert arguments.exact and arguments.accepted == 2 and not arguments.rejections
    patterned = ArgumentSchema(PATTERNED)
    patterned.preflight(1)
    # 12 plain values and the simplest fully populated one: the other populated ones only where coverage needs them
    assert not patterned.exact and patterned.accepted == 13
    filtered = ArgumentSchema({"type": "object", "unevaluatedProperties": False})  # extras drawn, then refused
    with contextlib.suppress(SchemaProblem):
        filtered.preflight(2)
    assert not filtered.exact and filtered.rejections["unevaluatedProperties"] > 0


def test_a_schema_of_large_values_stops_drawing_at_the_same_value_for_a_seed() -> None:
    """A schema that is not exact and draws large values (free-form objects under a union, as deep query
    schemas have) stops its check once the values hold PREFLIGHT_CHARACTERS of JSON: fewer than PREFLIGHT_DRAWS,
    the same values for the same seed, and the simplest values of a full run."""
    def large(seed: int) -> tuple[ArgumentSchema, list[dict]]:
        arguments = ArgumentSchema(LARGE_VALUES)
        arguments.preflight(seed)
        return arguments, draw_examples(arguments.positive, PREFLIGHT_DRAWS, seed, enough=enough_drawn)

    arguments, drawn = large(3)
    assert not arguments.exact
    assert PREFLIGHT_MIN_DRAWS <= len(drawn) < PREFLIGHT_DRAWS
    assert sum(len(json.dumps(value)) for value in drawn) >= PREFLIGHT_CHARACTERS
    assert large(3)[1] == drawn
    assert drawn == draw_examples(ArgumentSchema(LARGE_VALUES).positive, PREFLIGHT_DRAWS, 3)[:len(drawn)]
    assert arguments.preflight(3)[0] == drawn[:1]


def test_coverage_draws_populated_samples_only_for_array_bounds_and_as_before() -> None:
    """The coverage boundaries reuse array items of a few fully populated values, drawn from the seed as the
    preflight drew them earlier; a schema without array bounds draws none."""
    arguments = ArgumentSchema(SEARCH)
    plain, populated = arguments.preflight(1)
    samples = draw_examples(arguments.populated, 6, seed=1)
    assert coverage_calls(arguments, plain, populated, seed=1) == coverage_calls(arguments, plain, samples)
    small = ArgumentSchema({"type": "object", "properties": {"n": {"type": "integer", "maximum": 3}}})
    drawn = small.accepted
    small_plain, small_populated = small.preflight(1)
    coverage_calls(small, small_plain, small_populated, seed=1)
    assert small.accepted == drawn + 2  # the preflight's one pair, nothing more


def test_edge_calls_placed_once_per_site_are_those_of_every_base() -> None:
    """Coverage skips validating an edge value already placed on an earlier base, or refused by its property
    whatever the base: the calls are the ones validating every edge on every base gives."""
    from mcpfuzz.strategies.arguments.coverage import _first_edge_per_site, _first_per_site, _one_field_bases
    from mcpfuzz.strategies.arguments.edges import edge_calls

    for schema in (SEARCH, TREE, OPTIONAL_TAGS, DESCRIBED_REF):
        arguments = ArgumentSchema(schema)
        plain, populated = arguments.preflight(1)
        bases = _one_field_bases(arguments, plain[0], populated[0])
        every = _first_per_site(edge_calls(arguments, base) for base in bases)
        assert _first_edge_per_site(arguments, bases) == every


@pytest.mark.parametrize("schema", [
    SEARCH, TREE, OPTIONAL_TAGS, {"anyOf": []}, {"properties": {"a": {"anyOf": [{"type": 1}]}}},
    {"patternProperties": {"[": {}}}, {"$defs": {"x": {"enum": 3}}}, {"properties": {"a": {"pattern": "("}}},
    {"$schema": "http://json-schema.org/draft-04/schema#", "properties": {"a": True}},
    {"$schema": "http://json-schema.org/draft-07/schema#", "items": [{"type": "q"}]},
    {"properties": {"a": {"properties": {"b": {"items": {"maxLength": "x"}}}}}}])
def test_the_meta_schema_check_of_subschemas_one_by_one_agrees_with_jsonschema(schema: dict) -> None:
    """Each distinct subschema checked once against the meta-schema: the same verdict as jsonschema's check of
    the whole, and an invalid schema's message is jsonschema's own."""
    from jsonschema.exceptions import SchemaError
    from mcpfuzz.strategies.arguments.schema_prep import DIALECTS, dialect_of, validator_for

    cls = DIALECTS[dialect_of(schema)]
    try:
        cls.check_schema(schema)
        expected = None
    except SchemaError as error:
        expected = error.message
    if expected is None:
        validator_for(schema)
    else:
        with pytest.raises(SchemaProblem) as raised:
            validator_for(schema)
        assert expected in raised.value.message


def test_an_equal_schema_is_prepared_once() -> None:
    first, again = ArgumentSchema(json.loads(json.dumps(SEARCH))), ArgumentSchema(json.loads(json.dumps(SEARCH)))
    assert first.prepared is again.prepared
