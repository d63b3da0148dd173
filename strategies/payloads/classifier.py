"""Which payload families fit a property: read from its name, its description and its format."""

from __future__ import annotations

import re
from typing import Any

from mcpfuzz.strategies.payloads.family import Family

# Words (of a name split at case changes and separators, or of a description) that say what a string holds.
WORDS: dict[Family, frozenset[str]] = {
    Family.PATH: frozenset({"path", "paths", "file", "files", "filename", "filepath", "dir", "directory", "folder",
                            "filenames", "dirname"}),
    Family.EXPRESSION: frozenset({"expression", "expr", "formula", "equation", "calculation", "calc", "math",
                                  "arithmetic", "eval"}),
    Family.COMMAND: frozenset({"command", "cmd", "shell", "exec", "script", "query", "sql", "statement"}),
    Family.REGEX: frozenset({"regex", "regexp", "pattern", "glob"}),
    Family.URL: frozenset({"url", "uri", "link", "href", "endpoint", "website", "webpage"}),
}
FORMATS: dict[str, Family] = {"uri": Family.URL, "url": Family.URL, "iri": Family.URL, "uri-reference": Family.URL,
                              "iri-reference": Family.URL, "regex": Family.REGEX}
_WORD = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])")


def words_of(text: str) -> set[str]:
    """Lower-case words of a name or sentence: `filePath` -> {file, path}, `base_dir` -> {base, dir}."""
    return {word.lower() for word in _WORD.findall(text)}


def families_of(name: str, schema: Any) -> tuple[Family, ...]:
    """The families a string property named `name` with this schema fits, in Family order (none: a plain string).

    A string schema with an enum or const holds fixed values: nothing to break by meaning.
    """
    if not isinstance(schema, dict) or "enum" in schema or "const" in schema:
        return ()
    declared = schema.get("type")
    if declared is not None and declared != "string" and not (isinstance(declared, list) and "string" in declared):
        return ()
    words = words_of(name)
    for key in ("description", "title"):
        if isinstance(schema.get(key), str):
            words |= words_of(schema[key])
    found = {family for family, known in WORDS.items() if words & known}
    by_format = FORMATS.get(schema.get("format", "")) if isinstance(schema.get("format"), str) else None
    if by_format is not None:
        found.add(by_format)
    return tuple(family for family in Family if family in found)


def is_string_site(schema: Any) -> bool:
    """A property that may hold a free string (any string: no enum, no const)."""
    if not isinstance(schema, dict) or "enum" in schema or "const" in schema:
        return False
    declared = schema.get("type")
    return declared == "string" or (isinstance(declared, list) and "string" in declared)
