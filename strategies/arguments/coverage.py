"""The coverage phase's arguments: deterministic boundaries, enum values, optional fields and single-rule breaks."""

from __future__ import annotations

import itertools
import json
import math
from collections.abc import Iterator
from typing import Any

from mcpfuzz.strategies.arguments.call import POSITIVE, ArgumentCall
from mcpfuzz.strategies.arguments.edges import edge_calls, refused_edges
from mcpfuzz.strategies.arguments.negative import negative_calls
from mcpfuzz.strategies.arguments.schema_prep import enum_sample
from mcpfuzz.strategies.arguments.schema_values import ArgumentSchema
from mcpfuzz.strategies.arguments.seeds import seed_calls
from mcpfuzz.strategies.arguments.sites import MISSING, Site, get_at, set_at, show

# Pairs of enum values are tried exhaustively while there are at most this many of them.
MAX_ENUM_PAIRS = 64


def coverage_calls(schema: ArgumentSchema, plain: list[dict], populated: list[dict], *, seed: int | None = None,
                   strict_types: bool = False) -> list[ArgumentCall]:
    """All coverage calls of one tool, valid ones first (the schema's seeds right after the simplest), each distinct.

    Each call changes one thing in the simplest valid arguments (plus the one optional field it
    needs), so a bug tied to one value is not masked by another (a hang on one enum value must not
    swallow every other case). With a `seed`, a schema whose array bounds reuse drawn items gets a few
    fully populated values drawn from it first (`populated` is then the simplest alone, as preflight gives).
    """
    if seed is not None and samples_array_items(schema):
        populated = schema.populated_samples(seed, (populated or plain)[0])
    simplest, full = plain[0], (populated or plain)[0]
    bases = _one_field_bases(schema, simplest, full)
    # The schema's own values (examples, defaults, values its descriptions name) first: they reach the code
    # behind "not found" that drawn values miss.
    calls = [ArgumentCall(POSITIVE, simplest, "the simplest valid arguments"), *seed_calls(schema, simplest, full),
             ArgumentCall(POSITIVE, full, "every property present")]
    calls += _optional_fields(schema, simplest, full)
    calls += _enum_values(schema, simplest, full)
    calls += _boundaries(schema, bases, populated)
    calls += _first_edge_per_site(schema, bases)
    calls += _first_per_site(negative_calls(schema, base, strict_types=strict_types) for base in bases)
    unique: dict[str, ArgumentCall] = {}
    for call in calls:
        unique.setdefault(json.dumps(call.arguments, sort_keys=True) + call.kind, call)
    return list(unique.values())


def samples_array_items(schema: ArgumentSchema) -> bool:
    """Whether the boundaries reuse the array items of drawn values (an array bounded by minItems or maxItems):
    only then are more fully populated values than the simplest drawn for `coverage_calls`."""
    return any(isinstance(site.schema.get(rule), int) for site in schema.sites for rule in ("minItems", "maxItems"))


def _one_field_bases(schema: ArgumentSchema, simplest: dict, full: dict) -> list[dict]:
    """The simplest arguments, then the simplest with each optional top-level property of `full` added."""
    bases = [simplest]
    for site in schema.sites:
        if len(site.path) == 1 and get_at(simplest, site.path) is MISSING:
            value = get_at(full, site.path)
            with_field = set_at(simplest, site.path, value) if value is not MISSING else None
            if with_field is not None and schema.is_valid(with_field):
                bases.append(with_field)
    return bases


def _first_per_site(groups: Iterator[list[ArgumentCall]]) -> list[ArgumentCall]:
    """One call per (what it does, where): the same break on several bases is sent once."""
    chosen: dict[str, ArgumentCall] = {}
    for group in groups:
        for call in group:
            chosen.setdefault(_head(call.description), call)
    return list(chosen.values())


def _first_edge_per_site(schema: ArgumentSchema, bases: list[dict]) -> list[ArgumentCall]:
    """`_first_per_site` of every base's edge calls, without validating an edge already placed on an earlier base
    (an edge call's description is its head: which value, where), nor one its property refuses on any base; that
    was most of a 30-property tool's coverage."""
    chosen: dict[str, ArgumentCall] = {}
    refused = refused_edges(schema)
    for base in bases:
        for call in edge_calls(schema, base, skip=lambda description: description in refused
                               or _head(description) in chosen):
            chosen.setdefault(_head(call.description), call)
    return list(chosen.values())


def _head(description: str) -> str:
    """What a coverage call does and where, without the detail in parentheses."""
    return description.partition(" (")[0]


def _valid(schema: ArgumentSchema, arguments: dict | None, description: str) -> Iterator[ArgumentCall]:
    if arguments is not None and schema.is_valid(arguments):
        yield ArgumentCall(POSITIVE, arguments, description)


def _optional_fields(schema: ArgumentSchema, simplest: dict, full: dict) -> Iterator[ArgumentCall]:
    for site in schema.sites:
        if len(site.path) == 1 and not site.required:
            value = get_at(full, site.path)
            if value is not MISSING and get_at(simplest, site.path) is MISSING:
                yield from _valid(schema, set_at(simplest, site.path, value), f"optional `{site.name}` present")


def _enum_sites(schema: ArgumentSchema, base: dict) -> list[Site]:
    return [s for s in schema.sites if isinstance(s.schema.get("enum"), list)
            and (len(s.path) == 1 or get_at(base, s.path[:-1]) is not MISSING)]


def _enum_values(schema: ArgumentSchema, simplest: dict, full: dict) -> Iterator[ArgumentCall]:
    sites = _enum_sites(schema, full)
    for site in sites:
        base = simplest if len(site.path) == 1 or get_at(simplest, site.path[:-1]) is not MISSING else full
        for value in enum_sample(site.schema["enum"]):
            yield from _valid(schema, set_at(base, site.path, value), f"{site.pointer} = {show(value)}")
    pairs = [(a, b) for a, b in itertools.combinations(sites, 2)]
    total = sum(len(a.schema["enum"]) * len(b.schema["enum"]) for a, b in pairs)
    if total > MAX_ENUM_PAIRS:
        return
    for first, second in pairs:
        for x, y in itertools.product(first.schema["enum"], second.schema["enum"]):
            both = set_at(full, first.path, x)
            both = set_at(both, second.path, y) if both is not None else None
            yield from _valid(schema, both, f"{first.pointer} = {show(x)} with {second.pointer} = {show(y)}")


def _boundaries(schema: ArgumentSchema, bases: list[dict], populated: list[dict]) -> Iterator[ArgumentCall]:
    for site in schema.sites:
        base = next((b for b in bases if len(site.path) == 1 or get_at(b, site.path[:-1]) is not MISSING), None)
        if base is None:
            continue
        for label, value in _boundary_values(site, base, populated):
            yield from _valid(schema, set_at(base, site.path, value), f"{label} at {site.pointer}")


def _boundary_values(site: Site, base: dict, populated: list[dict]) -> Iterator[tuple[str, Any]]:
    spec = site.schema
    integer = "integer" in site.types and "number" not in site.types
    for rule in ("minimum", "maximum"):
        bound: Any = spec.get(rule)
        if _is_number(bound):
            yield f"{rule} {show(bound)} exactly", int(bound) if integer and float(bound).is_integer() else bound
    for rule, direction in (("exclusiveMinimum", math.inf), ("exclusiveMaximum", -math.inf)):
        bound = spec.get(rule)
        if _is_number(bound):
            inside = (math.floor(bound) + 1 if direction > 0 else math.ceil(bound) - 1) if integer else \
                math.nextafter(bound, direction)
            yield f"just inside {rule} {show(bound)}", inside
    current = get_at(base, site.path)
    for rule in ("minLength", "maxLength"):
        bound = spec.get(rule)
        if isinstance(bound, int) and bound <= 1_000_000:
            fill = current[0] if isinstance(current, str) and current else "x"
            yield f"{rule} {bound} exactly", fill * bound
    items = _sample_items(site, populated)
    for rule in ("minItems", "maxItems"):
        bound = spec.get(rule)
        if isinstance(bound, int) and bound <= 100_000 and (items or bound == 0):
            yield f"{rule} {bound} exactly", [items[i % len(items)] for i in range(bound)] if bound else []


def _sample_items(site: Site, populated: list[dict]) -> list[Any]:
    """Distinct array items seen in the drawn values, so that uniqueItems holds where possible."""
    seen: list[Any] = []
    for example in populated:
        value = get_at(example, site.path)
        if isinstance(value, list):
            for item in value:
                if item not in seen:
                    seen.append(item)
    return seen


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
