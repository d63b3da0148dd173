"""Negative arguments: a valid value changed to break exactly one rule of the schema."""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import partial
from typing import Any
from weakref import WeakKeyDictionary

from hypothesis import strategies as st
from mcpfuzz.strategies.arguments.call import NEGATIVE, ArgumentCall
from mcpfuzz.strategies.arguments.schema_values import ArgumentSchema
from mcpfuzz.strategies.arguments.sites import MISSING, Path, Site, delete_at, get_at, set_at, show
from mcpfuzz.strategies.short_repr import kept

from mcpfuzz.jsonrpc.ids import json_type

EXTRA_PROPERTY = "mcpfuzz_unexpected"
# The drawn start among a value's candidate breaks, taken modulo their count (there are rarely 200).
MAX_START = 1023
# How many ways to change a value's type a draw picks among (`choice`, taken modulo their count).
MAX_CHOICE = 7
# How far a bound is crossed: exactly by one in the coverage phase, further in the fuzz phase.
SPREADS = (1, 2, 10, 1000, 2**31)

# Replacement values per declared type that no lax server coerces back into that type. Numbers for
# strings ("5" vs 5), strings and booleans for numbers, null for anything, and 1.5 for integers are
# changes lax servers legitimately accept: only with --strict-types. So is a one-element array for a
# number: JavaScript's Number([1]) is 1 (zod's z.coerce.number() accepts it), while Number([1, 2]) is NaN.
_SAFE_REPLACEMENTS: dict[str, list[Any]] = {
    "string": [{"mcpfuzz": 1}, [1], True],
    "integer": ["text", {"mcpfuzz": 1}, [1, 2]],
    "number": ["text", {"mcpfuzz": 1}, [1, 2]],
    "boolean": ["text", {"mcpfuzz": 1}, [1]],
    "object": ["text", 12345, [1]],
    "array": ["text", 12345, {"mcpfuzz": 1}],
    "null": ["text", 12345],
}
_STRICT_REPLACEMENTS: dict[str, list[Any]] = {
    "string": [12345, None],
    "integer": [1.5, True, "12", None, [1]],
    "number": [True, "12.5", None, [1]],
    "boolean": [1, "true", None],
    "object": [None],
    "array": [None],
    "null": [],
}
# A break a spread cannot make (a length below 0): a place kept among the candidates, so that the candidate a
# drawn start picks does not move when the shrinker lowers the spread (it would then pick another rule).
UNAVAILABLE = object()
# rule, pointer, where, new value (MISSING: removed), detail (or what writes it, for the candidate drawn)
Candidate = tuple[str, str, Path, Any, "str | Callable[[], str]"]


def schema_type(value: Any) -> str:
    """The JSON Schema type of a value: like the wire type, but 2.0 counts as an integer (2020-12)."""
    if isinstance(value, float) and value.is_integer():
        return "integer"
    return json_type(value)


def negative_calls(schema: ArgumentSchema, base: dict, *, strict_types: bool = False, spread: int = 1,
                   choice: int = 0) -> list[ArgumentCall]:
    """Every single-rule break of `base` (a valid value) this schema allows (each checked against the schema)."""
    calls: list[ArgumentCall] = []
    seen: set[str] = set()
    for candidate in _candidates(schema, base, strict_types, spread, choice):
        call = _break(schema, base, candidate)
        if call is None:
            continue
        key = repr(call.arguments)
        if key in seen:
            continue
        seen.add(key)
        calls.append(call)
    return calls


def negative_arguments(schema: ArgumentSchema, *, strict_types: bool = False) -> st.SearchStrategy[ArgumentCall]:
    """A valid value, then one rule broken, drawn at random (shrinks toward the first rule, crossed by one)."""

    def pick(drawn: tuple[dict, int, int, int]) -> ArgumentCall | None:
        return one_break(schema, *drawn, strict_types=strict_types)

    # No flatmap: a strategy built per draw is validated and labelled again on every draw.
    drawn = st.tuples(st.one_of(schema.populated, schema.positive), st.sampled_from(SPREADS),
                      st.integers(0, MAX_CHOICE), st.integers(0, MAX_START)).map(pick)
    return kept(drawn, lambda call: call is not None, "negative_calls")  # type: ignore[arg-type]


def one_break(schema: ArgumentSchema, base: dict, spread: int, choice: int, start: int, *,
              strict_types: bool = False) -> ArgumentCall | None:
    """`base` (a valid value) with one rule broken: from the `start`-th candidate break (modulo their count),
    the first that breaks exactly its rule, in order and wrapping round; None when none does.

    One candidate checked, not all of them: a 30-property schema has a hundred, each a validation.
    """
    candidates = list(_candidates(schema, base, strict_types, spread, choice))
    return _first_break(schema, base, candidates, start % len(candidates)) if candidates else None


def _break(schema: ArgumentSchema, base: dict, candidate: Candidate) -> ArgumentCall | None:
    """The call of one candidate edit, when it breaks exactly its rule and nothing else."""
    rule, pointer, path, new, detail = candidate
    if new is UNAVAILABLE:
        return None
    broken = schema.edit_errors(base, path, new)
    if not broken or any(keyword != rule for keyword in broken):
        return None
    arguments = delete_at(base, path) if new is MISSING else set_at(base, path, new)
    text = detail if isinstance(detail, str) else detail()
    return ArgumentCall(NEGATIVE, arguments, f"violates {rule} at {pointer or '/'} ({text})", rule)


def _first_break(schema: ArgumentSchema, base: dict, candidates: list[Candidate], start: int) -> ArgumentCall | None:
    for offset in range(len(candidates)):
        call = _break(schema, base, candidates[(start + offset) % len(candidates)])
        if call is not None:
            return call
    return None


def _candidates(schema: ArgumentSchema, base: dict, strict: bool, spread: int, choice: int) -> Iterator[Candidate]:
    for path, object_schema in schema.objects:
        if object_schema.get("additionalProperties") is False and isinstance(get_at(base, path) if path else base,
                                                                             dict):
            pointer = "".join(f"/properties/{p}" for p in path)
            yield ("additionalProperties", pointer, (*path, EXTRA_PROPERTY), "x", f"added property `{EXTRA_PROPERTY}`")
    for rules in _rules_of(schema, strict, spread):
        site = rules.site
        current = get_at(base, site.path)
        if current is MISSING:
            if get_at(base, site.path[:-1]) is MISSING and len(site.path) > 1:
                continue
        elif site.required:
            yield "required", rules.pointer, site.path, MISSING, f"removed `{site.name}`"
        if rules.replacements:
            new = rules.replacements[choice % len(rules.replacements)]
            yield "type", rules.pointer, site.path, new, partial(_type_detail, rules.types, current, new)
        for rule, new, detail in rules.bounds:
            yield rule, rules.pointer, site.path, new, detail
        for rule, new, detail in _length_breaks(site.schema, current, spread):
            yield rule, rules.pointer, site.path, new, detail
        for rule, new, detail in rules.values:
            yield rule, rules.pointer, site.path, new, detail


@dataclass(frozen=True)
class _SiteRules:
    """The breaks of one site that do not depend on the value being changed, worked out once per schema, strictness
    and spread (a negative draw looks at every site of its value: a hundred candidates on a 30-property schema)."""

    site: Site
    pointer: str
    types: tuple[str, ...]
    replacements: list[Any]  # values of another type than the site's
    bounds: list[tuple[str, Any, str]]  # numeric bounds and multipleOf crossed
    values: list[tuple[str, Any, str]]  # a value outside the enum or const, a string the pattern refuses


_RULES: WeakKeyDictionary[ArgumentSchema, dict[tuple[bool, int], list[_SiteRules]]] = WeakKeyDictionary()


def _rules_of(schema: ArgumentSchema, strict: bool, spread: int) -> list[_SiteRules]:
    by_spread = _RULES.setdefault(schema, {})
    key = (strict, spread)
    if key not in by_spread:
        by_spread[key] = [_site_rules(site, strict, spread) for site in schema.sites]
    return by_spread[key]


def _site_rules(site: Site, strict: bool, spread: int) -> _SiteRules:
    spec = site.schema
    types = site.types
    replacements = [value for t in types for value in _SAFE_REPLACEMENTS.get(t, [])]
    if strict:
        replacements += [value for t in types for value in _STRICT_REPLACEMENTS.get(t, [])]
    allowed = set(types) | ({"integer"} if "number" in types else set())
    values: list[tuple[str, Any, str]] = []
    if isinstance(spec.get("enum"), list) and spec["enum"]:
        new = _outside(spec["enum"], spread)
        values.append(("enum", new, f"sent {show(new)}, not one of {show(spec['enum'], 60)}") if new is not None
                      else ("enum", UNAVAILABLE, ""))
    if "const" in spec:
        new = _outside([spec["const"]], spread)
        values.append(("const", new, f"sent {show(new)} instead of {show(spec['const'])}") if new is not None
                      else ("const", UNAVAILABLE, ""))
    pattern = spec.get("pattern")
    if isinstance(pattern, str):
        new = _not_matching(pattern, spec)
        if new is not None:
            values.append(("pattern", new, f"sent {show(new)}, which does not match {show(pattern, 60)}"))
    return _SiteRules(site, site.pointer, types, [v for v in replacements if schema_type(v) not in allowed],
                      list(_numeric_breaks(spec, spread)), values)


def _type_detail(types: tuple[str, ...], current: Any, new: Any) -> str:
    """A type break's description, written only for the candidate drawn."""
    if current is MISSING:
        return f"sent {show(new)}, not {'/'.join(types)}"
    return f"was {show(current)}, became {show(new)}"


def _numeric_breaks(spec: dict, spread: int) -> Iterator[tuple[str, Any, str]]:
    integer = spec.get("type") == "integer"
    step: float = spread if integer else float(spread)

    def fit(value: float) -> Any:
        return int(value) if integer and float(value).is_integer() else value

    for rule, sign in (("minimum", -1), ("maximum", 1)):
        bound: Any = spec.get(rule)
        if _is_number(bound):
            new = fit(bound + sign * step)
            yield rule, new, f"{rule} {show(bound)}, sent {show(new)}"
    for rule, sign in (("exclusiveMinimum", -1), ("exclusiveMaximum", 1)):
        bound = spec.get(rule)
        if _is_number(bound):
            new = fit(bound + sign * (step - 1) if spread > 1 else bound)
            yield rule, new, f"{rule} {show(bound)}, sent {show(new)}"
    multiple: Any = spec.get("multipleOf")
    if _is_number(multiple) and multiple > 0:
        low: Any = spec.get("minimum", 0) if _is_number(spec.get("minimum")) else 0
        start = math.ceil(low / multiple) * multiple
        new = fit(start + (1 if integer and multiple > 1 else multiple / 2))
        yield "multipleOf", new, f"multipleOf {show(multiple)}, sent {show(new)}"


def _length_breaks(spec: dict, current: Any, spread: int) -> Iterator[tuple[str, Any, str]]:
    fill = current[0] if isinstance(current, str) and current else "x"
    for rule, sign in (("minLength", -1), ("maxLength", 1)):
        bound = spec.get(rule)
        if isinstance(bound, int):
            size = bound + sign * spread
            fits = size >= 0 and bound + spread <= 1_000_000
            yield (rule, fill * size, f"{rule} {bound}, sent {size} characters") if fits else (rule, UNAVAILABLE, "")
    items = current if isinstance(current, list) and current else None
    for rule, sign in (("minItems", -1), ("maxItems", 1)):
        bound = spec.get(rule)
        if isinstance(bound, int):
            size = bound + sign * spread
            if size < 0 or bound + spread > 100_000 or size > 0 and items is None:
                yield rule, UNAVAILABLE, ""
                continue
            new = [items[i % len(items)] for i in range(size)] if items else []
            yield rule, new, f"{rule} {bound}, sent {size} items"


def _outside(values: list[Any], spread: int) -> Any:
    first = values[0]
    if isinstance(first, str):
        candidate = f"{first}-mcpfuzz" if spread == 1 else f"{first}-{spread}"
        return candidate if candidate not in values else None
    if isinstance(first, int) and not isinstance(first, bool):
        numbers = [v for v in values if isinstance(v, int) and not isinstance(v, bool)]
        return max(numbers) + spread
    return None


_PATTERN_PROBES = ("", "!", " ", "mcpfuzz", "0", "-", "\n", "AAAA", "a b", "%%%%")


def _not_matching(pattern: str, spec: dict) -> str | None:
    try:
        compiled = re.compile(pattern)
    except re.error:
        return None
    low, high = spec.get("minLength", 0), spec.get("maxLength")
    for probe in _PATTERN_PROBES:
        sized = (probe * max(1, low))[:high] if probe else probe
        if len(sized) >= low and (high is None or len(sized) <= high) and not compiled.search(sized):
            return sized
    return None


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)

