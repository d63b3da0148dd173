"""The changes between two snapshots, each ranked by what it does to a client that cached the first one.

Breaking: a client built on the old surface may fail (a tool, prompt or argument gone or renamed, a new required
argument, a type narrowed, an enum value removed, a safety hint weakened, an output field gone). Compatible: such a
client keeps working (additions, widened types). Cosmetic: only a person reads it (descriptions, titles, the
server's version). Order never shows: snapshots are sorted.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from typing import Any

from mcpfuzz.engine.snapshot.model import MISSING, TEXT_KEYS, Change, ChangeKind, Impact, as_dict, text_walk
from mcpfuzz.engine.snapshot.schema_changes import schema_changes
from mcpfuzz.engine.snapshot.surface import KIND_OF_SECTION

__all__ = ["MISSING", "Change", "ChangeKind", "Impact", "compare", "worst"]

# The hints' defaults (MCP ToolAnnotations) and the value a client may rely on: a hint that moves away from it
# is weakened (breaking).
HINTS = {"readOnlyHint": (False, True), "destructiveHint": (True, False), "idempotentHint": (False, True),
         "openWorldHint": (True, False)}


def compare(old: Mapping[str, Any], new: Mapping[str, Any]) -> list[Change]:
    """Every change from `old` to `new`, breaking ones first, then by item."""
    changes = [*_protocol(old, new), *text_walk("server", "", old.get("server", {}), new.get("server", {})),
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
            yield from text_walk(item, key, before, after)
        elif section == "tools" and key == "inputSchema":
            yield from schema_changes(item, key, as_dict(before), as_dict(after), output=False)
        elif section == "tools" and key == "outputSchema":
            yield from _outputschema_changes(item, before, after)
        elif section == "tools" and key == "annotations":
            yield from _annotations(item, as_dict(before), as_dict(after))
        elif section == "prompts" and key == "arguments":
            yield from _arguments(item, as_dict(before), as_dict(after))
        elif key == "mimeType":
            yield Change(Impact.BREAKING, ChangeKind.SCHEMA_CHANGED, item, key, "MIME type changed", before, after)
        elif key in ("name", "size", "_meta"):
            yield Change(Impact.COSMETIC, ChangeKind.VALUE_CHANGED, item, key, f"{key} changed", before, after)
        else:
            yield Change(Impact.COMPATIBLE, ChangeKind.VALUE_CHANGED, item, key, f"{key} changed", before, after)


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
            yield from text_walk(item, f"annotations.{key}", old.get(key, MISSING), new.get(key, MISSING))


def _arguments(item: str, old: dict, new: dict) -> Iterator[Change]:
    for name in sorted(set(old) | set(new)):
        before, after = as_dict(old.get(name)), as_dict(new.get(name))
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
                    yield from text_walk(item, f"{path}.{key}", before.get(key, MISSING), after.get(key, MISSING))


def _outputschema_changes(item: str, before: Any, after: Any) -> Iterator[Change]:
    if before is MISSING:
        yield Change(Impact.COMPATIBLE, ChangeKind.OUTPUT_FIELD_ADDED, item, "outputSchema", "output schema declared",
                     after=after)
    elif after is MISSING:
        yield Change(Impact.BREAKING, ChangeKind.OUTPUT_FIELD_REMOVED, item, "outputSchema",
                     "output schema removed (structured content no longer promised)", before)
    else:
        yield from schema_changes(item, "outputSchema", as_dict(before), as_dict(after), output=True)


