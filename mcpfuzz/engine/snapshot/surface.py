"""The surface a server declares, normalised: keyed by name, keys sorted, so a file changes only when the server does.

A snapshot holds what a client caches from a server: its info and capabilities, its tools (input and output
schemas, annotations), prompts (arguments), resources and resource templates, and the protocol era it spoke.
Descriptions and titles are kept for a person to review, and compared apart from the rest (cosmetic changes).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

FORMAT = "mcpfuzz-snapshot"
FORMAT_VERSION = 1
# The sections of a snapshot that hold declarations, with the key that names each item in its list method.
SECTIONS = {"tools": "name", "prompts": "name", "resources": "uri", "resourceTemplates": "uriTemplate"}
# The target kinds of the probe, by section (mcpfuzz.jsonrpc.target_kind.TargetKind values).
KIND_OF_SECTION = {"tools": "tool", "prompts": "prompt", "resources": "resource", "resourceTemplates": "template"}
# Lists whose order means nothing in JSON Schema: sorted so a reordering never shows as a change.
UNORDERED = ("required", "type", "enum")


class SnapshotError(ValueError):
    """A file that is not a snapshot mcpfuzz can read (what is wrong, for a usage error)."""


def build_surface(*, era: str, version: str, server_info: Mapping[str, Any], capabilities: Mapping[str, Any],
                  declared: Mapping[str, list[dict]]) -> dict[str, Any]:
    """The normalised snapshot of what a probe read; `declared` maps a section name to its listed items."""
    surface: dict[str, Any] = {
        "format": FORMAT, "formatVersion": FORMAT_VERSION,
        "protocol": {"era": era, "version": version},
        "server": normalise(dict(server_info)),
        "capabilities": normalise(dict(capabilities)),
    }
    for section, key in SECTIONS.items():
        items: dict[str, Any] = {}
        for item in declared.get(section, []):
            name = item.get(key)
            if isinstance(name, str):
                items[name] = _item(section, item, key)
        surface[section] = dict(sorted(items.items()))
    return surface


def _item(section: str, item: dict, key: str) -> dict[str, Any]:
    """One declaration without its naming key; a prompt's arguments keyed by name."""
    body = {name: value for name, value in item.items() if name != key}
    if section == "prompts" and isinstance(body.get("arguments"), list):
        body["arguments"] = {arg["name"]: {k: v for k, v in arg.items() if k != "name"}
                             for arg in body["arguments"] if isinstance(arg, dict) and isinstance(arg.get("name"), str)}
    return normalise(body)


def normalise(value: Any) -> Any:
    """Keys sorted, the unordered lists of JSON Schema sorted; everything else as declared."""
    if isinstance(value, dict):
        out = {}
        for key in sorted(value):
            item = normalise(value[key])
            if key in UNORDERED and isinstance(item, list):
                item = sorted(item, key=lambda entry: json.dumps(entry, sort_keys=True))
            out[key] = item
        return out
    if isinstance(value, list):
        return [normalise(item) for item in value]
    return value


def dumps(surface: Mapping[str, Any]) -> str:
    """The file's text: two-space indents, keys sorted, one trailing newline (a stable diff in review)."""
    return json.dumps(surface, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def loads(text: str, source: str) -> dict[str, Any]:
    """A snapshot file read back; SnapshotError says why it cannot be compared."""
    try:
        surface = json.loads(text)
    except ValueError as error:
        raise SnapshotError(f"{source} is not JSON: {error}") from None
    if not isinstance(surface, dict) or surface.get("format") != FORMAT:
        raise SnapshotError(f"{source} is not an mcpfuzz snapshot (no \"format\": \"{FORMAT}\"); write one with "
                            "`mcpfuzz snapshot --output FILE -- CMD`")
    if surface.get("formatVersion") != FORMAT_VERSION:
        raise SnapshotError(f"{source} has snapshot format {surface.get('formatVersion')!r}; this mcpfuzz reads "
                            f"{FORMAT_VERSION} (write it again with --update)")
    for section in SECTIONS:
        if not isinstance(surface.get(section, {}), dict):
            raise SnapshotError(f"{source}: {section} must be an object keyed by name")
    return surface
