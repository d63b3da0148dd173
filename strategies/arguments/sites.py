"""Where values live in a tool's arguments: property sites of the schema, and edits at a path."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

MAX_DEPTH = 4
Path = tuple[str, ...]


@dataclass(frozen=True)
class Site:
    """One property of an object in the arguments, with its schema and whether its object requires it."""

    path: Path
    schema: dict
    required: bool
    parent: dict

    @property
    def pointer(self) -> str:
        """The schema location, e.g. `/properties/filter/properties/limit`."""
        return "".join(f"/properties/{_escape(name)}" for name in self.path)

    @property
    def name(self) -> str:
        """The property name."""
        return self.path[-1]

    @property
    def types(self) -> tuple[str, ...]:
        """The JSON types the schema names (empty when it names none)."""
        declared = self.schema.get("type")
        if isinstance(declared, str):
            return (declared,)
        if isinstance(declared, list):
            return tuple(t for t in declared if isinstance(t, str))
        return ()

    @property
    def free_form(self) -> bool:
        """An object (or anything) whose content the schema leaves open."""
        if self.schema.get("enum") is not None or "const" in self.schema:
            return False
        open_object = self.types == ("object",) and not self.schema.get("properties") and \
            self.schema.get("additionalProperties", True) is not False
        return open_object or (not self.types and not any(k in self.schema for k in ("anyOf", "oneOf", "allOf",
                                                                                      "$ref", "not")))


def _escape(name: str) -> str:
    return name.replace("~", "~0").replace("/", "~1")


def sites(schema: Any, *, prefix: Path = (), depth: int = 0) -> list[Site]:
    """Every property site of an object schema, nested objects included (to MAX_DEPTH levels)."""
    if not isinstance(schema, dict) or depth >= MAX_DEPTH:
        return []
    properties = schema.get("properties")
    if not isinstance(properties, dict):
        return []
    required = set(schema.get("required") or [])
    found = []
    for name, sub in properties.items():
        if not isinstance(sub, dict):
            continue
        site = Site((*prefix, name), sub, name in required, schema)
        found.append(site)
        found += sites(sub, prefix=site.path, depth=depth + 1)
    return found


def object_paths(schema: Any, *, prefix: Path = (), depth: int = 0) -> list[tuple[Path, dict]]:
    """The root and every nested object schema with listed properties, with their paths."""
    if not isinstance(schema, dict) or depth >= MAX_DEPTH:
        return []
    found = [(prefix, schema)]
    for name, sub in (schema.get("properties") or {}).items():
        if isinstance(sub, dict) and isinstance(sub.get("properties"), dict):
            found += object_paths(sub, prefix=(*prefix, name), depth=depth + 1)
    return found


_MISSING = object()


def get_at(value: Any, path: Path) -> Any:
    """The value at a path, or `MISSING`."""
    for name in path:
        if not isinstance(value, dict) or name not in value:
            return _MISSING
        value = value[name]
    return value


MISSING = _MISSING


def set_at(value: dict, path: Path, new: Any) -> dict | None:
    """A copy with `new` at `path`; None when a parent object is absent.

    Only the objects along the path are copied; the rest is shared with `value` (nothing here
    changes a value in place, and a deep copy per edit was a large part of a negative draw).
    """
    parents = _parents(value, path)
    return None if parents is None else _rebuild(parents, path, new)


def delete_at(value: dict, path: Path) -> dict | None:
    """A copy without the member at `path`; None when it is not there (copied as in `set_at`)."""
    if get_at(value, path) is MISSING:
        return None
    parents = _parents(value, path)
    assert parents is not None
    return _rebuild(parents, path, MISSING)


def _parents(value: Any, path: Path) -> list[dict] | None:
    """The objects from `value` down to the parent of `path`'s member; None when one is not an object."""
    nodes = [value]
    for name in path[:-1]:
        node = nodes[-1].get(name) if isinstance(nodes[-1], dict) else None
        nodes.append(node)
    return nodes if all(isinstance(node, dict) for node in nodes) else None


def _rebuild(parents: list[dict], path: Path, new: Any) -> dict:
    out = dict(parents[-1])
    if new is MISSING:
        del out[path[-1]]
    else:
        out[path[-1]] = new
    for node, name in zip(reversed(parents[:-1]), reversed(path[:-1]), strict=True):
        out = {**node, name: out}
    return out


def show(value: Any, limit: int = 40) -> str:
    """A short JSON rendering for descriptions."""
    if isinstance(value, str) and len(value) > limit:
        return json.dumps(value[:limit]) + f"... ({len(value)} chars)"
    text = json.dumps(value, ensure_ascii=True)
    return text if len(text) <= limit else text[:limit] + "..."
