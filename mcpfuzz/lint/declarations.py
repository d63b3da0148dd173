"""Walk what a server listed: each tool, resource, template and prompt with its location and target label."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from mcpfuzz.lint.model import Declared

TOOLS, RESOURCES, TEMPLATES, PROMPTS = "tools/list", "resources/list", "resources/templates/list", "prompts/list"
# list method -> (the member naming an item, the location prefix, the target kind)
NAMING = {
    TOOLS: ("name", "tools", "tool"),
    RESOURCES: ("uri", "resources", "resource"),
    TEMPLATES: ("uriTemplate", "resourceTemplates", "resource"),
    PROMPTS: ("name", "prompts", "prompt"),
}


@dataclass(frozen=True)
class Item:
    """One listed declaration: where it is (`tools[search]`), the target it is, and the declaration itself."""

    location: str
    target: str | None
    name: str | None
    value: Any


def listed(declared: Declared, method: str) -> Iterator[Item]:
    """Each item a list method returned, named by its name (or URI) when it has a usable one, else its index."""
    key, prefix, kind = NAMING[method]
    for index, value in enumerate(declared.items(method)):
        name = value.get(key) if isinstance(value, dict) else None
        if isinstance(name, str) and name:
            yield Item(f"{prefix}[{name}]", f"{kind}/{name}", name, value)
        else:
            yield Item(f"{prefix}[{index}]", None, None, value)


def short(value: Any, limit: int = 120) -> str:
    """A value as compact JSON for a message."""
    import json

    try:
        text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    except (TypeError, ValueError):
        text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."
