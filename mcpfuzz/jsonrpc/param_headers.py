"""Tool arguments a server asks to see mirrored into `Mcp-Param-{Name}` HTTP headers (`x-mcp-header`, SEP-2243).

2026-07-28 basic/transports/streamable-http, "Custom Headers from Tool Parameters": a property's schema may carry
`x-mcp-header: Name`; a client then sends the argument's value in `Mcp-Param-Name`, and the server MUST refuse a
call whose header is missing, does not match the body, or holds invalid characters (400, -32020).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

ANNOTATION = "x-mcp-header"
HEADER_PREFIX = "Mcp-Param-"
# RFC 9110 section 5.1 `token` (1*tchar), which the spec requires of an annotation's value.
TOKEN = re.compile(r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+")
PRIMITIVE_TYPES = {"string", "integer", "boolean"}


@dataclass(frozen=True)
class ParamHeader:
    """One mirrored argument: the chain of `properties` keys that reaches it, and its header's name part."""

    path: tuple[str, ...]
    name: str

    @property
    def header(self) -> str:
        """The full header name, `Mcp-Param-{name}`."""
        return HEADER_PREFIX + self.name


def param_headers(input_schema: Any) -> tuple[ParamHeader, ...]:
    """The valid annotations of a tool's inputSchema, reached through `properties` keys only, in schema order.

    Annotations the spec forbids (not a token, a duplicate name, on a `number` or a non-primitive) are left
    out: a client excludes such a tool, so no header of it is ever sent.
    """
    found: list[ParamHeader] = []
    seen: set[str] = set()
    stack: list[tuple[tuple[str, ...], Any]] = [((), input_schema)]
    while stack:
        path, schema = stack.pop(0)
        properties = schema.get("properties") if isinstance(schema, dict) else None
        if not isinstance(properties, dict):
            continue
        for key, sub in properties.items():
            if not isinstance(sub, dict):
                continue
            name = sub.get(ANNOTATION)
            if isinstance(name, str) and TOKEN.fullmatch(name) and name.lower() not in seen \
                    and sub.get("type") in PRIMITIVE_TYPES:
                seen.add(name.lower())
                found.append(ParamHeader((*path, key), name))
            stack.append(((*path, key), sub))
    return tuple(found)


def header_text(value: Any) -> str | None:
    """An argument's header text ("Value Encoding", type conversion): strings as they are, integers in decimal,
    booleans `true`/`false`, other numbers in decimal; None for anything else (null, arrays, objects: no header)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        # Also past the safe range the spec asks annotated integers to keep to: the value is in the body, so the
        # header must be sent ("Client omits header but value is in body": non-conforming).
        return str(value)
    if isinstance(value, float) and value == value and abs(value) != float("inf"):
        # 2.0 is an integer to JSON Schema; another number (a wrong type, drawn as a negative) is in the body all
        # the same, so it goes out in decimal as the Python SDK's client renders it, never left out.
        return str(int(value)) if value.is_integer() else str(value)
    return value if isinstance(value, str) else None


def value_at(arguments: Any, path: Sequence[str]) -> Any:
    """The instance value at a chain of property keys; None when a step is missing."""
    node = arguments
    for key in path:
        if not isinstance(node, Mapping) or key not in node:
            return None
        node = node[key]
    return node


def mirrored(arguments: Any, headers: Sequence[ParamHeader]) -> dict[str, str]:
    """`Mcp-Param-{Name}` to its text for each mirrored argument present in `arguments` (still to be encoded)."""
    texts = {header.header: header_text(value_at(arguments, header.path)) for header in headers}
    return {name: text for name, text in texts.items() if text is not None}
