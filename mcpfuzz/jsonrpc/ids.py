"""Request ids compared by exact JSON value and JSON type."""

from __future__ import annotations

from typing import Any

from mcpfuzz.jsonrpc.json_value import ABSENT, Absent, Json, json_text

__all__ = ["ABSENT", "Absent", "IdKey", "id_key", "id_text", "is_valid_mcp_id", "json_type", "show_id"]

IdKey = tuple[str, Any]


def json_type(value: Any) -> str:
    """Name the JSON type of a decoded value (bool before int: bool subclasses int in Python)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    if isinstance(value, dict):
        return "object"
    return type(value).__name__


def id_key(value: Any) -> IdKey:
    """Key an id by JSON type and value, so `"1"`, `1`, `1.0` and `true` never compare equal."""
    cls = type(value)
    if cls is int:  # the ids of nearly every frame and answer: json_type's answer without its chain of tests
        return ("integer", value)
    if cls is str:
        return ("string", value)
    kind = json_type(value)
    if kind in ("array", "object"):
        return (kind, json_text(value, sort_keys=True))
    return (kind, value)


def is_valid_mcp_id(value: Any) -> bool:
    """MCP (basic/index): an id is a string or an integer, never null."""
    return json_type(value) in ("string", "integer")


def id_text(value: Json) -> str:
    """An id's JSON text, keys sorted (never raising, whatever a server sent: see json_text)."""
    return json_text(value, sort_keys=True)


def show_id(value: Json | Absent) -> str:
    """Render an id as it looks on the wire, shortened when huge."""
    if value is ABSENT:
        return "<no id>"
    text = json_text(value)
    return text if len(text) <= 60 else f"{text[:40]}...({len(text)} chars)"
