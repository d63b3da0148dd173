"""The strategies stand on Hypothesis' public API: no private import, no SearchStrategy subclass, and the
object schemas left to hypothesis-jsonschema draw on every Hypothesis mcpfuzz supports (.ci/hypothesis-range
runs this file on the lowest allowed and the newest)."""

from __future__ import annotations

import ast
import functools
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis_jsonschema import _from_schema as hjs
from jsonschema import Draft7Validator
from mcpfuzz.strategies.arguments import jsonschema_objects
from mcpfuzz.strategies.arguments.fuzz_calls import fuzz_calls
from mcpfuzz.strategies.arguments.schema_values import ArgumentSchema, draw_examples, hypothesis_jsonschema_strategy
from mcpfuzz.strategies.short_repr import kept, named_composite

pytestmark = pytest.mark.unit

ROOT = Path(__file__).resolve().parent.parent
PRIVATE_MODULES = ("hypothesis.internal", "hypothesis.strategies._internal", "hypothesis.core")
CHECKS = settings(max_examples=60, database=None, deadline=None, suppress_health_check=list(HealthCheck))
# Object schemas the compiler leaves to hypothesis-jsonschema, one keyword of its object strategy each.
OBJECT_SCHEMAS: dict[str, dict[str, Any]] = {
    "patternProperties": {"type": "object", "patternProperties": {"^n_": {"type": "integer"}},
                          "properties": {"name": {"type": "string"}}, "required": ["name"]},
    "minProperties": {"type": "object", "properties": {"a": {"type": "boolean"}}, "minProperties": 2},
    "maxProperties": {"type": "object", "maxProperties": 1},
    "propertyNames": {"type": "object", "propertyNames": {"maxLength": 2}, "minProperties": 1},
    "dependencies": {"type": "object", "properties": {"card": {"type": "string"}, "cvv": {"type": "string"}},
                     "dependencies": {"card": ["cvv"]}},
    "closed": {"type": "object", "properties": {"x": {"type": "integer"}, "y": {"type": "integer"}},
               "additionalProperties": False, "minProperties": 1},
    "nested": {"type": "object", "properties": {"inner": {"type": "object", "minProperties": 1,
                                                          "additionalProperties": {"type": "string"}}},
               "required": ["inner"]},
}

# hypothesis-jsonschema's own uses of private Hypothesis API (its regex strategy, its float bounds): mcpfuzz
# cannot move those, so they are drawn here on both ends of the range.
OTHER_SCHEMAS: dict[str, dict[str, Any]] = {
    "pattern": {"type": "string", "pattern": "^[A-Z]{3}-[0-9]+$"},
    "float bounds": {"type": "number", "exclusiveMinimum": 0.1, "exclusiveMaximum": 0.2},
    "fractional step": {"type": "number", "multipleOf": 0.25, "minimum": -1, "maximum": 1},
}


def _python_files() -> list[Path]:
    return sorted([*ROOT.joinpath("strategies").rglob("*.py"), *ROOT.joinpath("mcpfuzz").rglob("*.py")])


@dataclass(frozen=True)
class _Module:
    """What these checks read of one module: the modules it imports and the bases of each class it defines."""

    path: Path
    imports: tuple[str, ...]
    classes: tuple[tuple[str, str], ...]  # (class name, base as written)


@functools.cache
def _modules() -> tuple[_Module, ...]:
    """Every module of the project, parsed and walked once for the checks of this file."""
    modules = []
    for path in _python_files():
        imports: list[str] = []
        classes: list[tuple[str, str]] = []
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                imports += [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                imports.append(node.module or "")
            elif isinstance(node, ast.ClassDef):
                classes += [(node.name, ast.unparse(base)) for base in node.bases]
        modules.append(_Module(path, tuple(imports), tuple(classes)))
    return tuple(modules)


def test_no_module_imports_private_hypothesis() -> None:
    offending = [f"{module.path.relative_to(ROOT)}: {name}" for module in _modules() for name in module.imports
                 if name.startswith(PRIVATE_MODULES)]
    assert not offending


def test_no_class_subclasses_search_strategy() -> None:
    """Hypothesis documents SearchStrategy as no extension point: strategies are built from its factories."""
    offending = [f"{module.path.relative_to(ROOT)}: {name}({base})" for module in _modules()
                 for name, base in module.classes if "SearchStrategy" in base]
    assert not offending


def test_hypothesis_jsonschema_objects_are_drawn_by_mcpfuzz() -> None:
    assert jsonschema_objects.install() and hjs.object_schema is jsonschema_objects.object_schema


@pytest.mark.parametrize("name", sorted(OBJECT_SCHEMAS))
def test_object_schemas_left_to_hypothesis_jsonschema_draw_valid_objects(name: str) -> None:
    schema = OBJECT_SCHEMAS[name]
    validator = Draft7Validator(schema)
    drawn = draw_examples(hypothesis_jsonschema_strategy(schema), 40, seed=3)
    assert len(drawn) == 40, drawn
    assert all(validator.is_valid(value) for value in drawn), [v for v in drawn if not validator.is_valid(v)]
    assert len({repr(value) for value in drawn}) > 1 or name == "maxProperties"


@pytest.mark.parametrize("name", sorted(OTHER_SCHEMAS))
def test_hypothesis_jsonschemas_own_private_paths_draw_valid_values(name: str) -> None:
    schema = OTHER_SCHEMAS[name]
    drawn = draw_examples(hypothesis_jsonschema_strategy(schema), 40, seed=3)
    assert drawn and all(Draft7Validator(schema).is_valid(value) for value in drawn), drawn  # few when few exist


def test_an_object_schema_that_allows_no_more_names_than_it_lists_is_drawn_without_giving_up() -> None:
    """A closed object draws at most its listed members (the member count is capped), never an invalid example."""
    schema = OBJECT_SCHEMAS["closed"]

    @CHECKS
    @given(hypothesis_jsonschema_strategy(schema))
    def check(value: dict) -> None:
        assert 1 <= len(value) <= 2 and value.keys() <= {"x", "y"}

    check()


def test_kept_and_named_composites_keep_their_short_repr_emptiness_and_labels() -> None:
    """Hypothesis' mutator copies spans between draws of one label: composites of different names differ."""
    calls = named_composite("calls", lambda draw: draw(st.integers()))
    assert repr(calls) == "calls()"
    assert calls.label != named_composite("values", lambda draw: draw(st.integers())).label
    assert kept(st.nothing(), lambda value: True, "none").is_empty
    with pytest.raises(ValueError, match="identifier"):
        named_composite("two words", lambda draw: 0)


def test_the_same_seed_draws_the_same_fuzz_calls() -> None:
    schema = ArgumentSchema({"type": "object", "properties": {"q": {"type": "string", "maxLength": 10},
                                                              "n": {"type": "integer", "minimum": 0}},
                             "required": ["q"], "additionalProperties": False})
    calls = st.lists(fuzz_calls(schema), min_size=1, max_size=5)
    first, again, other = (draw_examples(calls, 30, seed) for seed in (5, 5, 6))
    assert first == again and first != other
