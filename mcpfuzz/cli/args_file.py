"""`--args-file FILE`: argument objects the user knows to be valid, per target, read from JSON or TOML and checked.

The file maps a target to a list of argument objects: `{"tool/get_item": [{"id": "item-1"}]}` in JSON, or
`[["tool/get_item"]]` tables in TOML. A bare name is a tool's (`"get_item"` is `tool/get_item`). Anything else is
refused before the run starts, with where it is, why, and what would do (exit 2).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import click

from mcpfuzz.jsonrpc.target_kind import TargetKind

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on Python 3.10 only
    import tomli as tomllib

EXAMPLE_JSON = '{"tool/get_item": [{"id": "item-1"}, {"id": "item-2", "verbose": true}]}'
EXAMPLE_TOML = '[["tool/get_item"]]\nid = "item-1"'
MAX_OBJECTS = 1000  # per file: seeds, not a corpus


class ArgsFileError(click.UsageError):
    """An --args file that cannot be used: what is wrong, where, why, and a tip (exit status 2)."""

    def __init__(self, path: Path, where: str, why: str, tip: str) -> None:
        super().__init__(f"--args-file {path}: {where}: {why}\n  tip: {tip}")


def load_args_file(path: Path) -> dict[str, tuple[dict, ...]]:
    """The file's argument objects by target label (`tool/NAME`), in the file's order."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise ArgsFileError(path, "the file", f"cannot be read ({error})",
                            "give a UTF-8 JSON or TOML file that exists") from None
    data = _parse(path, text)
    if not isinstance(data, dict):
        raise ArgsFileError(path, "the top level", f"is a {_type(data)}, not an object of targets",
                            f"map each target to a list of argument objects, e.g. {EXAMPLE_JSON}")
    known: dict[str, tuple[dict, ...]] = {}
    total = 0
    for key, objects in data.items():
        label = _label(key)
        if not isinstance(objects, list):
            raise ArgsFileError(path, f"target {key!r}", f"holds a {_type(objects)}, not a list of argument objects",
                                f"write a list even for one object: {{{json.dumps(key)}: [{{...}}]}}")
        for number, arguments in enumerate(objects, 1):
            if not isinstance(arguments, dict):
                raise ArgsFileError(path, f"target {key!r}, item {number}", f"is a {_type(arguments)}, not an object",
                                    "each item is the `arguments` object of one call, e.g. {\"id\": \"item-1\"}")
        total += len(objects)
        if total > MAX_OBJECTS:
            raise ArgsFileError(path, f"target {key!r}", f"brings the file past {MAX_OBJECTS} argument objects",
                                "keep a few known-good calls per target; mcpfuzz varies them itself")
        if label in known:
            raise ArgsFileError(path, f"target {key!r}", f"names {label} a second time",
                                "merge the two lists under one name")
        known[label] = tuple(objects)
    return known


def _parse(path: Path, text: str) -> Any:
    """JSON for a .json file or text starting with `{`, else TOML."""
    if path.suffix.lower() == ".json" or text.lstrip().startswith("{"):
        try:
            return json.loads(text)
        except ValueError as error:
            where = f"line {error.lineno}, column {error.colno}" if isinstance(error, json.JSONDecodeError) \
                else "the file"
            raise ArgsFileError(path, where, f"is not valid JSON ({error.args[0].split(':')[0]})",
                                f"e.g. {EXAMPLE_JSON}") from None
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise ArgsFileError(path, "the file", f"is neither JSON nor valid TOML ({error})",
                            f"in TOML, one table per call: {EXAMPLE_TOML!r}; or write JSON: {EXAMPLE_JSON}") from None


def _label(key: str) -> str:
    """A key as a target label: `KIND/NAME` as it is, any other name as a tool's."""
    kind, slash, name = key.partition("/")
    if slash and name and kind in {member.value for member in TargetKind}:
        return key
    return TargetKind.TOOL.label(key)


def _type(value: Any) -> str:
    """A JSON type name for a parsed value."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    return {dict: "object", list: "list", str: "string", int: "number", float: "number"}.get(type(value), "value")
