"""Every subschema of a JSON Schema with its location, for the schema rules."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

# Keywords holding one subschema, a list of them, or a map of them (drafts 4 to 2020-12).
ONE = ("additionalProperties", "additionalItems", "contains", "propertyNames", "not", "if", "then", "else",
       "unevaluatedProperties", "unevaluatedItems")
MANY = ("allOf", "anyOf", "oneOf", "prefixItems")
BY_NAME = ("properties", "patternProperties", "dependentSchemas", "$defs", "definitions")
MAX_DEPTH = 64  # a declared schema deeper than this is not walked further (the rules stay bounded)


def subschemas(schema: Any, location: str, depth: int = 0) -> Iterator[tuple[Any, str]]:
    """The schema itself, then every subschema under it, each with its location (`...properties.limit`)."""
    yield schema, location
    if not isinstance(schema, dict) or depth >= MAX_DEPTH:
        return
    for key in ONE:
        if key in schema and isinstance(schema[key], dict | bool):
            yield from subschemas(schema[key], f"{location}.{key}", depth + 1)
    items = schema.get("items")
    if isinstance(items, dict | bool):
        yield from subschemas(items, f"{location}.items", depth + 1)
    elif isinstance(items, list):
        for index, item in enumerate(items):
            yield from subschemas(item, f"{location}.items[{index}]", depth + 1)
    for key in MANY:
        if isinstance(schema.get(key), list):
            for index, item in enumerate(schema[key]):
                yield from subschemas(item, f"{location}.{key}[{index}]", depth + 1)
    for key in BY_NAME:
        if isinstance(schema.get(key), dict):
            for name, item in schema[key].items():
                yield from subschemas(item, f"{location}.{key}.{name}", depth + 1)


def object_schemas(schema: Any, location: str) -> Iterator[tuple[dict, str]]:
    """The subschemas that describe objects (`type` is or includes `object`)."""
    for node, where in subschemas(schema, location):
        if isinstance(node, dict):
            kind = node.get("type")
            if kind == "object" or (isinstance(kind, list) and "object" in kind):
                yield node, where
