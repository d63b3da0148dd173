"""Read a frame as a strict and as a lenient JSON reader would: values, duplicate keys, BOM, bad bytes."""

from __future__ import annotations

import json
from typing import Any

BOM = b"\xef\xbb\xbf"
JSON_WHITESPACE = " \t\r\n"


class JsonObject(dict):
    """A decoded object that remembers the keys it was given more than once (the last value is kept)."""

    duplicated: frozenset[str] = frozenset()
    conflicting: frozenset[str] = frozenset()  # given more than once with different values


def _canonical(value: Any) -> str:
    # json.dumps tells 1 from 1.0 from true, which == does not.
    return json.dumps(value, sort_keys=True)


def _object(pairs: list[tuple[str, Any]]) -> JsonObject:
    result = JsonObject()
    duplicated, conflicting = set(), set()
    for key, value in pairs:
        if key in result:
            duplicated.add(key)
            if _canonical(result[key]) != _canonical(value):
                conflicting.add(key)
        result[key] = value
    if duplicated:
        result.duplicated, result.conflicting = frozenset(duplicated), frozenset(conflicting)
    return result


def _no_constants(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")  # Python's json reads NaN and Infinity; RFC 8259 does not


def strict_value(data: bytes) -> tuple[bool, Any]:
    """(True, value) when `data` is one JSON text by RFC 8259 (UTF-8, no BOM, escaped control characters)."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return False, None
    try:
        return True, json.loads(text, object_pairs_hook=_object, parse_constant=_no_constants)
    except (ValueError, RecursionError):
        return False, None


def lax_values(data: bytes) -> list[Any] | None:
    """What the most lenient reader takes from `data`: one BOM skipped, bad bytes replaced by U+FFFD,
    raw control characters kept, JSON texts read one after another; None when even that fails."""
    if data.startswith(BOM):
        data = data[len(BOM):]
    text = data.decode("utf-8", "replace")
    decoder = json.JSONDecoder(object_pairs_hook=_object, parse_constant=_no_constants, strict=False)
    values: list[Any] = []
    index = 0
    while True:
        while index < len(text) and text[index] in JSON_WHITESPACE:
            index += 1
        if index == len(text):
            return values
        try:
            value, index = decoder.raw_decode(text, index)
        except (ValueError, RecursionError):
            return None
        values.append(value)


def has_duplicates(value: Any) -> bool:
    """True when an object anywhere in `value` was given a key twice (RFC 8259 section 4: unpredictable)."""
    stack = [value]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            if getattr(node, "duplicated", None):
                return True
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)
    return False


def depth(value: Any) -> int:
    """How deep objects and arrays nest (a scalar is 0)."""
    deepest = 0
    stack = [(value, 1)]
    while stack:
        node, level = stack.pop()
        if isinstance(node, dict | list):
            deepest = max(deepest, level)
            stack.extend((child, level + 1) for child in (node.values() if isinstance(node, dict) else node))
    return deepest


SAFE_INTEGER = 2**53 - 1  # RFC 8259 section 6: beyond this, integers are not interoperable


def has_big_integer(value: Any) -> bool:
    """True when an integer anywhere in `value` lies beyond +-(2**53-1)."""
    stack = [value]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)
        elif isinstance(node, int) and not isinstance(node, bool) and abs(node) > SAFE_INTEGER:
            return True
    return False
