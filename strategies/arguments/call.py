"""One set of tool arguments to send, with what it is meant to test."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

POSITIVE = "positive"
NEGATIVE = "negative"


@dataclass(frozen=True)
class ArgumentCall:
    """Arguments for one `tools/call`: valid (positive) or breaking exactly one rule (negative).

    `rule` is the schema keyword a negative call breaks; `description` is shown in findings,
    e.g. `violates maximum at /properties/limit (maximum 10, sent 11)`.
    """

    kind: str
    arguments: Any
    description: str
    rule: str = ""

    @property
    def unicode_unsafe(self) -> bool:
        """True when a string holds a lone surrogate: valid JSON grammar that many parsers refuse."""
        return _has_surrogate(self.arguments)


def _has_surrogate(value: Any) -> bool:
    if isinstance(value, str):
        if value.isascii():
            return False
        try:
            value.encode("utf-8")  # strict UTF-8 refuses exactly the surrogate code points
        except UnicodeEncodeError:
            return True
        return False
    if isinstance(value, dict):
        return any(_has_surrogate(k) or _has_surrogate(v) for k, v in value.items())
    if isinstance(value, list):
        return any(_has_surrogate(item) for item in value)
    return False


def nesting_depth(value: Any) -> int:
    """How deep objects and arrays nest (a scalar is 0)."""
    depth = 0
    stack = [(value, 1)]
    while stack:
        node, level = stack.pop()
        if isinstance(node, dict):
            depth = max(depth, level)
            stack += [(v, level + 1) for v in node.values()]
        elif isinstance(node, list):
            depth = max(depth, level)
            stack += [(v, level + 1) for v in node]
    return depth
