"""What a change of a server's surface is: its impact on a client, its kind (with a stable code), where it is."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from enum import Enum
from typing import Any


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


def as_dict(value: Any) -> dict:
    """A declaration's part that should be an object, or an empty one when the server sent something else."""
    return value if isinstance(value, dict) else {}


def text_walk(item: str, path: str, before: Any, after: Any) -> Iterator[Change]:
    """Descriptions, titles and the server's info: cosmetic, one change per differing leaf."""
    if isinstance(before, dict) and isinstance(after, dict):
        for key in sorted(set(before) | set(after)):
            if before.get(key, MISSING) != after.get(key, MISSING):
                yield from text_walk(item, f"{path}.{key}" if path else key, before.get(key, MISSING),
                                     after.get(key, MISSING))
        return
    word = "added" if before is MISSING else "removed" if after is MISSING else "changed"
    yield Change(Impact.COSMETIC, ChangeKind.TEXT_CHANGED, item, path, f"{path.rsplit('.', 1)[-1]} {word}",
                 before, after)
