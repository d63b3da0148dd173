"""MCP metadata rules: names, duplicates, annotations, URI templates, prompt arguments, descriptions."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from mcpfuzz.lint.declarations import NAMING, PROMPTS, RESOURCES, TEMPLATES, TOOLS, Item, listed, short
from mcpfuzz.lint.model import Category, Declared, Found, LintSeverity
from mcpfuzz.lint.registry import rule
from mcpfuzz.lint.uri_template import template_problem

M, ERROR, WARNING, INFO = Category.METADATA, LintSeverity.ERROR, LintSeverity.WARNING, LintSeverity.INFO
# server/tools "Tool names" (2025-11-25, SEP-986): 1 to 128 characters of A-Z a-z 0-9 _ - . (a SHOULD).
TOOL_NAME = re.compile(r"[A-Za-z0-9_.\-]{1,128}")
TOOL_NAME_SINCE = "2025-11-25"
TOOL_HINTS = ("readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint")
AUDIENCE = frozenset({"user", "assistant"})


@rule("META-001", "tool-name", M, WARNING)
def tool_name(declared: Declared) -> Iterator[Found]:
    """From 2025-11-25, tool names are 1 to 128 characters of A-Z, a-z, 0-9, `_`, `-` and `.`."""
    if declared.version < TOOL_NAME_SINCE:
        return
    for item in listed(declared, TOOLS):
        if item.name is not None and not TOOL_NAME.fullmatch(item.name):
            what = f"{len(item.name)} characters long" if len(item.name) > 128 else \
                f"has {', '.join(repr(c) for c in sorted(set(re.sub(r'[A-Za-z0-9_.-]', '', item.name))))}"
            yield Found(f"{item.location}.name", f"the tool name {short(item.name, 60)} {what}", "use 1 to 128 "
                        "characters of A-Z, a-z, 0-9, _, - and . (no spaces): clients may refuse other names",
                        item.target)


@rule("META-002", "duplicate-name", M, ERROR)
def duplicate_name(declared: Declared) -> Iterator[Found]:
    """Names are unique: no two tools or prompts share a name, no two resources a URI, no two templates a template."""
    for method in (TOOLS, PROMPTS, RESOURCES, TEMPLATES):
        key, prefix, _ = NAMING[method]
        outcome = declared.lists.get(method)
        # Pages listed again through a repeated cursor repeat their names: that is the cursor loop, which
        # declared-served reports in `run`, not two entries with one name.
        looped = "declared-served" if outcome is not None and outcome.looped else None
        seen: dict[str, int] = {}
        for item in listed(declared, method):
            if item.name is None:
                continue
            seen[item.name] = seen.get(item.name, 0) + 1
            if seen[item.name] == 2:
                yield Found(item.location, f"{prefix} lists {key} {item.name!r} more than once", f"give each entry "
                            f"its own {key}: a client calls the first or the last, unpredictably", item.target,
                            covered_by=looped)


def _annotations(item: Item) -> Any:
    return item.value.get("annotations") if isinstance(item.value, dict) else None


@rule("META-003", "annotation-types", M, ERROR)
def annotation_types(declared: Declared) -> Iterator[Found]:
    """Annotations have their types: tool hints booleans, `title` text; `audience` user/assistant, `priority` 0-1."""
    for item in listed(declared, TOOLS):
        annotations = _annotations(item)
        if annotations is None:
            continue
        where = f"{item.location}.annotations"
        if not isinstance(annotations, dict):
            yield Found(where, f"`annotations` is {short(annotations)}, not an object", "write an object of hints",
                        item.target)
            continue
        for hint in TOOL_HINTS:
            if hint in annotations and not isinstance(annotations[hint], bool):
                yield Found(f"{where}.{hint}", f"`{hint}` is {short(annotations[hint])}, not a boolean",
                            f"write true or false: a client reads {short(annotations[hint])} its own way",
                            item.target)
        if "title" in annotations and not isinstance(annotations["title"], str):
            yield Found(f"{where}.title", "`title` is not a string", "write the title as text", item.target)
    for method in (RESOURCES, TEMPLATES):
        for item in listed(declared, method):
            annotations = _annotations(item)
            if annotations is not None:
                yield from _resource_annotations(item, annotations)


def _resource_annotations(item: Item, annotations: Any) -> Iterator[Found]:
    where = f"{item.location}.annotations"
    if not isinstance(annotations, dict):
        yield Found(where, f"`annotations` is {short(annotations)}, not an object", "write an object", item.target)
        return
    audience = annotations.get("audience")
    if audience is not None and (not isinstance(audience, list) or any(a not in AUDIENCE for a in audience)):
        yield Found(f"{where}.audience", f"`audience` is {short(audience)}", 'list roles: `["user", "assistant"]`',
                    item.target)
    priority = annotations.get("priority")
    if priority is not None and (isinstance(priority, bool) or not isinstance(priority, int | float)
                                 or not 0 <= priority <= 1):
        yield Found(f"{where}.priority", f"`priority` is {short(priority)}", "give a number from 0 to 1",
                    item.target)
    if "lastModified" in annotations and not isinstance(annotations["lastModified"], str):
        yield Found(f"{where}.lastModified", "`lastModified` is not an ISO 8601 string", "write e.g. "
                    '"2025-01-12T15:00:58Z"', item.target)


@rule("META-004", "uri-template", M, ERROR)
def uri_template(declared: Declared) -> Iterator[Found]:
    """Every resource template's `uriTemplate` is a valid RFC 6570 URI template."""
    for item in listed(declared, TEMPLATES):
        if item.name is not None:
            problem = template_problem(item.name)
            if problem is not None:
                yield Found(f"{item.location}.uriTemplate", f"{item.name!r} is not an RFC 6570 URI template: "
                            f"{problem}", "write variables as {name} (operators + # . / ; ? &), literals "
                            "percent-encoded", item.target)


@rule("META-005", "prompt-argument-twice", M, ERROR)
def prompt_argument_twice(declared: Declared) -> Iterator[Found]:
    """A prompt declares each argument once."""
    for item in listed(declared, PROMPTS):
        arguments = item.value.get("arguments") if isinstance(item.value, dict) else None
        if not isinstance(arguments, list):
            continue
        names: list[str] = [a["name"] for a in arguments if isinstance(a, dict) and isinstance(a.get("name"), str)]
        for name in sorted({n for n in names if names.count(n) > 1}):
            yield Found(f"{item.location}.arguments", f"the argument {name!r} is declared {names.count(name)} times",
                        "declare each argument once", item.target)


@rule("META-006", "description", M, INFO)
def description(declared: Declared) -> Iterator[Found]:
    """Prompts, resources and resource templates have a description (clients show it to people and models)."""
    for method in (PROMPTS, RESOURCES, TEMPLATES):
        for item in listed(declared, method):
            value = item.value
            if isinstance(value, dict) and item.name and not (isinstance(value.get("description"), str)
                                                              and value["description"].strip()):
                yield Found(f"{item.location}.description", "no description", "say what it is and when to use it",
                            item.target)
