"""Changes of a JSON Schema: an input schema narrows when it refuses what it took, an output schema breaks a client
when what it read may be missing or of another type."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from mcpfuzz.engine.snapshot.model import MISSING, TEXT_KEYS, Change, ChangeKind, Impact, as_dict, text_walk

# Lower and upper bounds: raising a lower one (or lowering an upper one) refuses inputs that were accepted.
LOWER = ("minimum", "exclusiveMinimum", "minLength", "minItems", "minProperties")
UPPER = ("maximum", "exclusiveMaximum", "maxLength", "maxItems", "maxProperties")
# Keywords whose change narrows or widens in a way mcpfuzz cannot rank: breaking, for a person to review.
HANDLED = frozenset({"type", "anyOf", "oneOf", "enum", "const", "properties", "required", "items",
                     "additionalProperties", "default", *LOWER, *UPPER, *TEXT_KEYS})


def types_of(schema: dict) -> frozenset[str] | None:
    """The JSON types a schema accepts (None: any), from `type` or an `anyOf`/`oneOf` of plain typed branches."""
    declared = schema.get("type")
    if isinstance(declared, str):
        return frozenset({declared})
    if isinstance(declared, list):
        return frozenset(t for t in declared if isinstance(t, str))
    branches = schema.get("anyOf", schema.get("oneOf"))
    if isinstance(branches, list) and branches and all(_plain(branch) for branch in branches):
        return frozenset(branch["type"] for branch in branches)
    return None


def _plain(branch: Any) -> bool:
    return isinstance(branch, dict) and isinstance(branch.get("type"), str) and \
        set(branch) <= {"type", *TEXT_KEYS}


def _accepts(types: frozenset[str] | None, kind: str) -> bool:
    return types is None or kind in types or (kind == "integer" and "number" in types)


def _values(schema: dict) -> list | None:
    if "const" in schema:
        return [schema["const"]]
    enum = schema.get("enum")
    return list(enum) if isinstance(enum, list) else None


def schema_changes(item: str, path: str, old: dict, new: dict, *, output: bool) -> Iterator[Change]:
    """A schema's changes: an input schema (what a client sends) narrows when it refuses what it took; an output
    schema (what a client reads) breaks it when a field it read may be gone."""
    old_types, new_types = types_of(old), types_of(new)
    if old_types != new_types:
        lost = sorted(old_types or {"any"}) if old_types is None else sorted(t for t in old_types
                                                                             if not _accepts(new_types, t))
        gained = sorted(new_types or {"any"}) if new_types is None else sorted(t for t in new_types
                                                                               if not _accepts(old_types, t))
        narrowed, widened = bool(lost) and new_types is not None, bool(gained) and old_types is not None
        label = f"type {_type_words(old_types)} -> {_type_words(new_types)}"
        if output:
            yield Change(Impact.BREAKING if widened else Impact.COMPATIBLE,
                         ChangeKind.TYPE_WIDENED if widened else ChangeKind.TYPE_NARROWED, item, path,
                         f"{label} (may now return {', '.join(gained)})" if widened else label, old_types and
                         sorted(old_types), new_types and sorted(new_types))
        else:
            yield Change(Impact.BREAKING if narrowed else Impact.COMPATIBLE,
                         ChangeKind.TYPE_NARROWED if narrowed else ChangeKind.TYPE_WIDENED, item, path,
                         f"{label} (refuses {', '.join(lost)})" if narrowed else f"{label} (widened)",
                         old_types and sorted(old_types), new_types and sorted(new_types))
    yield from _enum(item, path, _values(old), _values(new), output)
    yield from _properties(item, path, old, new, output)
    if "items" in old or "items" in new:
        before, after = old.get("items"), new.get("items")
        if isinstance(before, dict) and isinstance(after, dict) and before != after:
            yield from schema_changes(item, f"{path}[]", before, after, output=output)
    yield from _bounds(item, path, old, new, output)
    if old.get("additionalProperties", True) != new.get("additionalProperties", True):
        closed = new.get("additionalProperties", True) is False
        yield Change(Impact.BREAKING if closed and not output else Impact.COMPATIBLE,
                     ChangeKind.CONSTRAINT_TIGHTENED if closed else ChangeKind.CONSTRAINT_LOOSENED, item,
                     f"{path}.additionalProperties", "unknown properties now refused" if closed else
                     "additionalProperties changed", old.get("additionalProperties", MISSING),
                     new.get("additionalProperties", MISSING))
    for key in sorted(set(old) | set(new)):
        before, after = old.get(key, MISSING), new.get(key, MISSING)
        if before == after:
            continue
        if key in TEXT_KEYS:
            yield from text_walk(item, f"{path}.{key}", before, after)
        elif key == "default":
            yield Change(Impact.COMPATIBLE, ChangeKind.VALUE_CHANGED, item, f"{path}.default", "default changed",
                         before, after)
        elif key in ("anyOf", "oneOf") and types_of(old) is not None and types_of(new) is not None:
            continue  # ranked as types above
        elif key not in HANDLED:
            yield Change(Impact.COMPATIBLE if output else Impact.BREAKING, ChangeKind.SCHEMA_CHANGED, item,
                         f"{path}.{key}", f"`{key}` changed (mcpfuzz cannot rank it: review)", before, after)


def _type_words(types: frozenset[str] | None) -> str:
    return "any" if types is None else "|".join(sorted(types)) or "none"


def _enum(item: str, path: str, old: list | None, new: list | None, output: bool) -> Iterator[Change]:
    if old == new:
        return
    show = lambda values: [json.dumps(v) for v in values]  # noqa: E731 - one line, used twice
    if old is not None and new is not None:
        removed = [v for v in old if v not in new]
        added = [v for v in new if v not in old]
        if removed:
            yield Change(Impact.COMPATIBLE if output else Impact.BREAKING, ChangeKind.ENUM_VALUE_REMOVED, item,
                         f"{path}.enum", f"enum value {', '.join(show(removed))} removed", old, new)
        if added:
            yield Change(Impact.COMPATIBLE, ChangeKind.ENUM_VALUE_ADDED, item, f"{path}.enum",
                         f"enum value {', '.join(show(added))} added", old, new)
    elif new is not None:
        yield Change(Impact.COMPATIBLE if output else Impact.BREAKING, ChangeKind.ENUM_VALUE_REMOVED, item,
                     f"{path}.enum", f"now limited to {', '.join(show(new))}", after=new)
    else:
        yield Change(Impact.COMPATIBLE, ChangeKind.ENUM_VALUE_ADDED, item, f"{path}.enum",
                     "no longer limited to a list of values", old)


def _properties(item: str, path: str, old: dict, new: dict, output: bool) -> Iterator[Change]:
    before, after = as_dict(old.get("properties")), as_dict(new.get("properties"))
    was_required = set(old.get("required") or [])
    now_required = set(new.get("required") or [])
    for name in sorted(set(before) | set(after) | was_required | now_required):
        where = f"{path}.properties.{name}"
        was, now = name in was_required, name in now_required
        if name in before and name not in after:
            yield Change(Impact.BREAKING, ChangeKind.OUTPUT_FIELD_REMOVED if output else ChangeKind.ARGUMENT_REMOVED,
                         item, where, f"{'output field' if output else 'argument'} `{name}` removed", before[name])
            continue
        if name in after and name not in before:
            if output:
                yield Change(Impact.COMPATIBLE, ChangeKind.OUTPUT_FIELD_ADDED, item, where,
                             f"output field `{name}` added", after=after[name])
            else:
                yield Change(Impact.BREAKING if now else Impact.COMPATIBLE,
                             ChangeKind.ARGUMENT_REQUIRED if now else ChangeKind.ARGUMENT_ADDED, item, where,
                             f"new {'required' if now else 'optional'} argument `{name}`", after=after[name])
            continue
        if was != now:
            if output:
                yield Change(Impact.COMPATIBLE if now else Impact.BREAKING,
                             ChangeKind.OUTPUT_FIELD_ADDED if now else ChangeKind.OUTPUT_FIELD_REMOVED, item, where,
                             f"output field `{name}` {'now always present' if now else 'may now be missing'}",
                             was, now)
            else:
                yield Change(Impact.BREAKING if now else Impact.COMPATIBLE,
                             ChangeKind.ARGUMENT_REQUIRED if now else ChangeKind.ARGUMENT_ADDED, item, where,
                             f"argument `{name}` now {'required' if now else 'optional'}", was, now)
        if name in before and name in after and before[name] != after[name]:
            yield from schema_changes(item, where, as_dict(before[name]), as_dict(after[name]), output=output)


def _bounds(item: str, path: str, old: dict, new: dict, output: bool) -> Iterator[Change]:
    for key in (*LOWER, *UPPER):
        before, after = old.get(key), new.get(key)
        if before == after or not all(isinstance(v, (int, float)) or v is None for v in (before, after)):
            continue
        if before is None:
            tighter = True
        elif after is None:
            tighter = False
        else:
            tighter = after > before if key in LOWER else after < before
        yield Change(Impact.BREAKING if tighter and not output else Impact.COMPATIBLE,
                     ChangeKind.CONSTRAINT_TIGHTENED if tighter else ChangeKind.CONSTRAINT_LOOSENED, item,
                     f"{path}.{key}", f"{key} {before} -> {after} ({'tighter' if tighter else 'looser'})",
                     MISSING if before is None else before, MISSING if after is None else after)
