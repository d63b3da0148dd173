"""Seeds: argument values a schema itself suggests (`examples`, `default`, `const`, values its descriptions name).

Real tools answer most drawn calls with "not found": the id, path or name they know is never drawn. A schema often
says which values work (`"examples": ["item-1"]`, a description "one of: asc, desc" or "e.g. `src/main.py`"), so
those are tried first in coverage and drawn often in the fuzz phase.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

from mcpfuzz.strategies.arguments.call import POSITIVE, ArgumentCall
from mcpfuzz.strategies.arguments.schema_values import ArgumentSchema
from mcpfuzz.strategies.arguments.sites import MISSING, Site, get_at, set_at, show

MAX_SEEDS_PER_SITE = 8
MAX_SEED_LENGTH = 200
SCHEMA_SEED = "schema seed"
# "one of: a, b, c" / "one of a|b|c" / "either a or b": a closed list of words, up to the end of the clause.
_ONE_OF = re.compile(r"\b(?:one of|must be|either|allowed values?|possible values?|valid values?|values?)\s*:?\s*"
                     r"([^.;\n()]{1,200})", re.IGNORECASE)
# "e.g. `foo`", "for example: foo", "such as 'foo'", "like \"foo\"": one value after a cue.
_EXAMPLE = re.compile(r"\b(?:e\.g\.|eg\.|for example|for instance|example|such as|like)\s*:?,?\s*"
                      r"(`[^`]{1,200}`|'[^']{1,200}'|\"[^\"]{1,200}\"|[^\s,;()]{1,200})", re.IGNORECASE)
_QUOTED = re.compile(r"`([^`]{1,200})`|'([^'\s]{1,200})'|\"([^\"]{1,200})\"")
_LIST_SPLIT = re.compile(r"\s*(?:,|\||/|\bor\b|\band\b)\s*")
_WORD = re.compile(r"^[\w.\-:/@+#~]+$")


def site_seeds(site: Site) -> list[Any]:
    """The values the schema of one property suggests, most trusted first, distinct, at most MAX_SEEDS_PER_SITE."""
    spec = site.schema
    found: list[Any] = []
    if "const" in spec:
        found.append(spec["const"])
    examples = spec.get("examples")
    if isinstance(examples, list):
        found += examples
    if "default" in spec:
        found.append(spec["default"])
    description = spec.get("description")
    if isinstance(description, str):
        found += [_typed(word, site) for word in description_values(description)]
    return _distinct([value for value in found if value is not MISSING and _small(value)])[:MAX_SEEDS_PER_SITE]


def description_values(text: str) -> list[str]:
    """Words a description names as values: quoted ones, the items of "one of: a, b" lists, the value after "e.g."."""
    values: list[str] = []
    for match in _ONE_OF.finditer(text):
        items = [item.strip().strip("`'\"") for item in _LIST_SPLIT.split(match.group(1))]
        # A list only when every item is a bare word: "one of the files you own" is prose, not values.
        if len(items) >= 2 and all(item and _WORD.match(item) for item in items):
            values += items
    for match in _EXAMPLE.finditer(text):
        word = match.group(1).strip("`'\"").rstrip(".")
        if word and (match.group(1)[0] in "`'\"" or _WORD.match(word)):
            values.append(word)
    for match in _QUOTED.finditer(text):
        values.append(next(group for group in match.groups() if group is not None))
    return list(dict.fromkeys(values))


def _typed(word: str, site: Site) -> Any:
    """A word from prose as the property's type wants it: `10` for an integer property, `true` for a boolean."""
    types = site.types
    if any(t in types for t in ("integer", "number", "boolean", "null", "array", "object")):
        try:
            value = json.loads(word)
        except ValueError:
            return word
        if not isinstance(value, str):
            return value
    return word


def _small(value: Any) -> bool:
    try:
        return len(json.dumps(value)) <= MAX_SEED_LENGTH
    except (TypeError, ValueError):
        return False


def _distinct(values: list[Any]) -> list[Any]:
    seen: dict[str, Any] = {}
    for value in values:
        seen.setdefault(json.dumps(value, sort_keys=True), value)
    return list(seen.values())


def seed_calls(schema: ArgumentSchema, simplest: dict, full: dict) -> list[ArgumentCall]:
    """Valid calls built from the schema's seeds: whole-object examples, every property at its first seed at once,
    then each seed alone in the simplest arguments (or in `full` for a nested property)."""
    calls: list[ArgumentCall] = []
    root_examples = schema.prepared.original.get("examples") if isinstance(schema.prepared.original, dict) else None
    for example in root_examples if isinstance(root_examples, list) else []:
        if isinstance(example, dict) and schema.is_valid(example):
            calls.append(ArgumentCall(POSITIVE, example, f"{SCHEMA_SEED}: the schema's example"))
    seeded = [(site, site_seeds(site)) for site in schema.sites]
    seeded = [(site, values) for site, values in seeded if values]
    if not seeded:
        return calls
    together = full
    for site, values in seeded:
        placed = _placed(schema, together, site, values[0])
        together = placed if placed is not None else together
    if together is not full:
        calls.append(ArgumentCall(POSITIVE, together, f"{SCHEMA_SEED}: every property at its schema's value"))
    for site, values in seeded:
        base = simplest if len(site.path) == 1 or get_at(simplest, site.path[:-1]) is not MISSING else full
        for value in values:
            placed = _placed(schema, base, site, value)
            if placed is not None:
                calls.append(ArgumentCall(POSITIVE, placed, f"{SCHEMA_SEED}: {site.pointer} = {show(value)}"))
    return calls


def _placed(schema: ArgumentSchema, base: dict, site: Site, value: Any) -> dict | None:
    """`base` with `value` at the site, when that is still valid."""
    candidate = set_at(base, site.path, value)
    return candidate if candidate is not None and schema.is_valid(candidate) else None


def seed_strings(schema: ArgumentSchema) -> Iterator[str]:
    """Every string seed of a schema (for the run's dictionary of values the server knows)."""
    for site in schema.sites:
        for value in site_seeds(site):
            if isinstance(value, str):
                yield value
        enum = site.schema.get("enum")
        for value in enum if isinstance(enum, list) else []:
            if isinstance(value, str):
                yield value
