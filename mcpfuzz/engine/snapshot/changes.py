"""The changes between two snapshots, each ranked by what it does to a client that cached the first one.

Breaking: a client built on the old surface may fail (a tool, prompt or argument gone or renamed, a new required
argument, a type narrowed, an enum value removed, a safety hint weakened, an output field gone). Compatible: such a
client keeps working (additions, widened types). Cosmetic: only a person reads it (descriptions, titles, the
server's version). Order never shows: snapshots are sorted.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from enum import Enum
from typing import Any

from mcpfuzz.engine.snapshot.surface import KIND_OF_SECTION


class Impact(str, Enum):
    """How a change affects a client that cached the old surface; ordered from harmless to breaking."""

    COSMETIC = "cosmetic"
    COMPATIBLE = "compatible"
    BREAKING = "breaking"

    @property
    def rank(self) -> int:
        """0 cosmetic, 1 compatible, 2 breaking."""
        return list(Impact).index(self)

    def __str__(self) -> str:
        return self.value


class ChangeKind(str, Enum):
    """What changed; each kind has a stable code (`MF-SNAP-001`) for SARIF rules and allow-lists."""

    ITEM_REMOVED = "item-removed"
    ITEM_RENAMED = "item-renamed"
    ARGUMENT_REMOVED = "argument-removed"
    ARGUMENT_REQUIRED = "argument-required"
    TYPE_NARROWED = "type-narrowed"
    ENUM_VALUE_REMOVED = "enum-value-removed"
    HINT_WEAKENED = "hint-weakened"
    OUTPUT_FIELD_REMOVED = "output-field-removed"
    CONSTRAINT_TIGHTENED = "constraint-tightened"
    SCHEMA_CHANGED = "schema-changed"
    CAPABILITY_REMOVED = "capability-removed"
    ITEM_ADDED = "item-added"
    ARGUMENT_ADDED = "argument-added"
    TYPE_WIDENED = "type-widened"
    ENUM_VALUE_ADDED = "enum-value-added"
    HINT_STRENGTHENED = "hint-strengthened"
    OUTPUT_FIELD_ADDED = "output-field-added"
    CONSTRAINT_LOOSENED = "constraint-loosened"
    CAPABILITY_ADDED = "capability-added"
    PROTOCOL_CHANGED = "protocol-changed"
    VALUE_CHANGED = "value-changed"
    TEXT_CHANGED = "text-changed"

    @property
    def code(self) -> str:
        """The kind's stable code: its place in this enum, which only ever grows at the end of a group."""
        return f"MF-SNAP-{list(ChangeKind).index(self) + 1:03d}"

    def __str__(self) -> str:
        return self.value


MISSING: Any = object()


@dataclass(frozen=True)
class Change:
    """One change: its impact and kind, the item (`tool/search`), where inside it, what it means, and the values."""

    impact: Impact
    kind: ChangeKind
    item: str
    path: str
    what: str
    before: Any = MISSING
    after: Any = MISSING

    def to_json(self) -> dict[str, Any]:
        """The change for scripts; an absent side is left out."""
        out: dict[str, Any] = {"impact": self.impact.value, "kind": self.kind.value, "code": self.kind.code,
                               "item": self.item, "path": self.path, "what": self.what}
        if self.before is not MISSING:
            out["before"] = self.before
        if self.after is not MISSING:
            out["after"] = self.after
        return out


# Words a person reads, never a client: a change of one is cosmetic.
TEXT_KEYS = frozenset({"description", "title", "examples", "$comment", "icons"})
# The hints' defaults (MCP ToolAnnotations) and the value a client may rely on: a hint that moves away from it
# is weakened (breaking).
HINTS = {"readOnlyHint": (False, True), "destructiveHint": (True, False), "idempotentHint": (False, True),
         "openWorldHint": (True, False)}
# Lower and upper bounds: raising a lower one (or lowering an upper one) refuses inputs that were accepted.
LOWER = ("minimum", "exclusiveMinimum", "minLength", "minItems", "minProperties")
UPPER = ("maximum", "exclusiveMaximum", "maxLength", "maxItems", "maxProperties")
# Keywords whose change narrows or widens in a way mcpfuzz cannot rank: breaking, for a person to review.
HANDLED = frozenset({"type", "anyOf", "oneOf", "enum", "const", "properties", "required", "items",
                     "additionalProperties", "default", *LOWER, *UPPER, *TEXT_KEYS})


def compare(old: Mapping[str, Any], new: Mapping[str, Any]) -> list[Change]:
    """Every change from `old` to `new`, breaking ones first, then by item."""
    changes = [*_protocol(old, new), *_text_walk("server", "", old.get("server", {}), new.get("server", {})),
               *_capabilities(old.get("capabilities", {}), new.get("capabilities", {}), "")]
    for section, kind in KIND_OF_SECTION.items():
        changes += _section(section, kind, old.get(section, {}), new.get(section, {}))
    return sorted(changes, key=lambda change: (-change.impact.rank, change.item, change.path))


def worst(changes: list[Change]) -> Impact | None:
    """The most serious impact among `changes` (None: no change)."""
    return max((change.impact for change in changes), key=lambda impact: impact.rank, default=None)


def _protocol(old: Mapping[str, Any], new: Mapping[str, Any]) -> Iterator[Change]:
    before, after = old.get("protocol", {}), new.get("protocol", {})
    if before != after:
        yield Change(Impact.COMPATIBLE, ChangeKind.PROTOCOL_CHANGED, "protocol", "",
                     "the protocol version negotiated changed", before, after)


def _capabilities(old: Any, new: Any, path: str) -> Iterator[Change]:
    if isinstance(old, dict) and isinstance(new, dict):
        for key in sorted(set(old) | set(new)):
            where = f"{path}.{key}" if path else key
            if key not in new:
                yield Change(Impact.BREAKING, ChangeKind.CAPABILITY_REMOVED, "capabilities", where,
                             f"capability `{where}` no longer declared", old[key])
            elif key not in old:
                yield Change(Impact.COMPATIBLE, ChangeKind.CAPABILITY_ADDED, "capabilities", where,
                             f"capability `{where}` declared", after=new[key])
            else:
                yield from _capabilities(old[key], new[key], where)
    elif old != new:
        lost = old is True and new is not True
        yield Change(Impact.BREAKING if lost else Impact.COMPATIBLE,
                     ChangeKind.CAPABILITY_REMOVED if lost else ChangeKind.CAPABILITY_ADDED, "capabilities", path,
                     f"capability `{path}` {'turned off' if lost else 'changed'}", old, new)


def _section(section: str, kind: str, old: Mapping[str, Any], new: Mapping[str, Any]) -> Iterator[Change]:
    removed = [name for name in old if name not in new]
    added = [name for name in new if name not in old]
    renamed = _renames(section, old, new, removed, added)
    for name in removed:
        if name in renamed:
            yield Change(Impact.BREAKING, ChangeKind.ITEM_RENAMED, f"{kind}/{name}", "",
                         f"{kind} renamed to `{renamed[name]}` (same {_shape_word(section)})", name, renamed[name])
        else:
            yield Change(Impact.BREAKING, ChangeKind.ITEM_REMOVED, f"{kind}/{name}", "", f"{kind} removed",
                         old[name])
    for name in added:
        if name not in renamed.values():
            yield Change(Impact.COMPATIBLE, ChangeKind.ITEM_ADDED, f"{kind}/{name}", "", f"{kind} added",
                         after=new[name])
    for name in sorted(set(old) & set(new)):
        yield from _item(section, f"{kind}/{name}", old[name], new[name])


def _shape_word(section: str) -> str:
    return {"tools": "input schema", "prompts": "arguments"}.get(section, "declaration")


def _shape(section: str, item: Any) -> str | None:
    """What must stay equal for a removed and an added item to be one item renamed."""
    if not isinstance(item, dict):
        return None
    key = {"tools": "inputSchema", "prompts": "arguments"}.get(section)
    body = item.get(key) if key else {k: v for k, v in item.items() if k not in TEXT_KEYS and k != "name"}
    return json.dumps(_without_text(body), sort_keys=True) if body else None


def _without_text(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _without_text(v) for k, v in value.items() if k not in TEXT_KEYS}
    if isinstance(value, list):
        return [_without_text(v) for v in value]
    return value


def _renames(section: str, old: Mapping[str, Any], new: Mapping[str, Any], removed: list[str],
             added: list[str]) -> dict[str, str]:
    """Removed items whose shape is that of exactly one added item, paired with it."""
    pairs: dict[str, str] = {}
    for name in removed:
        shape = _shape(section, old[name])
        matches = [other for other in added if shape is not None and _shape(section, new[other]) == shape]
        if len(matches) == 1 and matches[0] not in pairs.values():
            pairs[name] = matches[0]
    return pairs


def _item(section: str, item: str, old: Any, new: Any) -> Iterator[Change]:
    if not isinstance(old, dict) or not isinstance(new, dict):
        if old != new:
            yield Change(Impact.BREAKING, ChangeKind.SCHEMA_CHANGED, item, "", "declaration changed", old, new)
        return
    for key in sorted(set(old) | set(new)):
        before, after = old.get(key, MISSING), new.get(key, MISSING)
        if before == after:
            continue
        if key in TEXT_KEYS:
            yield from _text_walk(item, key, before, after)
        elif section == "tools" and key == "inputSchema":
            yield from _schema(item, key, _dict(before), _dict(after), output=False)
        elif section == "tools" and key == "outputSchema":
            yield from _output_schema(item, before, after)
        elif section == "tools" and key == "annotations":
            yield from _annotations(item, _dict(before), _dict(after))
        elif section == "prompts" and key == "arguments":
            yield from _arguments(item, _dict(before), _dict(after))
        elif key == "mimeType":
            yield Change(Impact.BREAKING, ChangeKind.SCHEMA_CHANGED, item, key, "MIME type changed", before, after)
        elif key in ("name", "size", "_meta"):
            yield Change(Impact.COSMETIC, ChangeKind.VALUE_CHANGED, item, key, f"{key} changed", before, after)
        else:
            yield Change(Impact.COMPATIBLE, ChangeKind.VALUE_CHANGED, item, key, f"{key} changed", before, after)


def _dict(value: Any) -> dict:
    return value if isinstance(value, dict) else {}


def _text_walk(item: str, path: str, before: Any, after: Any) -> Iterator[Change]:
    """Descriptions, titles and the server's info: cosmetic, one change per differing leaf."""
    if isinstance(before, dict) and isinstance(after, dict):
        for key in sorted(set(before) | set(after)):
            if before.get(key, MISSING) != after.get(key, MISSING):
                yield from _text_walk(item, f"{path}.{key}" if path else key, before.get(key, MISSING),
                                      after.get(key, MISSING))
        return
    word = "added" if before is MISSING else "removed" if after is MISSING else "changed"
    yield Change(Impact.COSMETIC, ChangeKind.TEXT_CHANGED, item, path, f"{path.rsplit('.', 1)[-1]} {word}",
                 before, after)


def _annotations(item: str, old: dict, new: dict) -> Iterator[Change]:
    read_only = (old.get("readOnlyHint", False), new.get("readOnlyHint", False))
    for hint, (default, promise) in HINTS.items():
        if hint == "destructiveHint" and any(read_only):
            continue  # meaningful only for a tool that is not read-only; readOnlyHint's change says it all
        before, after = old.get(hint, default), new.get(hint, default)
        if before == after:
            continue
        weakened = before == promise
        word = {"readOnlyHint": "read-only", "destructiveHint": "non-destructive", "idempotentHint": "idempotent",
                "openWorldHint": "closed-world"}[hint]
        yield Change(Impact.BREAKING if weakened else Impact.COMPATIBLE,
                     ChangeKind.HINT_WEAKENED if weakened else ChangeKind.HINT_STRENGTHENED, item,
                     f"annotations.{hint}", f"{hint} {json.dumps(after)} (no longer {word})" if weakened
                     else f"{hint} {json.dumps(after)} (now {word})", old.get(hint, MISSING), new.get(hint, MISSING))
    for key in sorted(set(old) | set(new)):
        if key not in HINTS and old.get(key, MISSING) != new.get(key, MISSING):
            yield from _text_walk(item, f"annotations.{key}", old.get(key, MISSING), new.get(key, MISSING))


def _arguments(item: str, old: dict, new: dict) -> Iterator[Change]:
    for name in sorted(set(old) | set(new)):
        before, after = _dict(old.get(name)), _dict(new.get(name))
        was, now = bool(before.get("required")), bool(after.get("required"))
        path = f"arguments.{name}"
        if name not in new:
            yield Change(Impact.BREAKING, ChangeKind.ARGUMENT_REMOVED, item, path, f"argument `{name}` removed",
                         old[name])
        elif name not in old:
            yield Change(Impact.BREAKING if now else Impact.COMPATIBLE,
                         ChangeKind.ARGUMENT_REQUIRED if now else ChangeKind.ARGUMENT_ADDED, item, path,
                         f"new {'required' if now else 'optional'} argument `{name}`", after=new[name])
        else:
            if was != now:
                yield Change(Impact.BREAKING if now else Impact.COMPATIBLE,
                             ChangeKind.ARGUMENT_REQUIRED if now else ChangeKind.ARGUMENT_ADDED, item, path,
                             f"argument `{name}` now {'required' if now else 'optional'}", was, now)
            for key in sorted((set(before) | set(after)) - {"required"}):
                if before.get(key, MISSING) != after.get(key, MISSING):
                    yield from _text_walk(item, f"{path}.{key}", before.get(key, MISSING), after.get(key, MISSING))


def _output_schema(item: str, before: Any, after: Any) -> Iterator[Change]:
    if before is MISSING:
        yield Change(Impact.COMPATIBLE, ChangeKind.OUTPUT_FIELD_ADDED, item, "outputSchema", "output schema declared",
                     after=after)
    elif after is MISSING:
        yield Change(Impact.BREAKING, ChangeKind.OUTPUT_FIELD_REMOVED, item, "outputSchema",
                     "output schema removed (structured content no longer promised)", before)
    else:
        yield from _schema(item, "outputSchema", _dict(before), _dict(after), output=True)


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


def _schema(item: str, path: str, old: dict, new: dict, *, output: bool) -> Iterator[Change]:
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
            yield from _schema(item, f"{path}[]", before, after, output=output)
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
            yield from _text_walk(item, f"{path}.{key}", before, after)
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
    before, after = _dict(old.get("properties")), _dict(new.get("properties"))
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
            yield from _schema(item, where, _dict(before[name]), _dict(after[name]), output=output)


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
