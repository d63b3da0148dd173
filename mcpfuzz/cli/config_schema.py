"""The JSON Schema of the config file, derived from the click commands (`python -m mcpfuzz.cli.config_schema`)."""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from typing import Any

import click

from mcpfuzz.cli.config_file import (
    COMMAND_KEY,
    COMMANDS,
    SERVER_PARAM,
    TABLE_JOINERS,
    TARGET_KEYS,
    TARGETS_KEY,
    URL_KEY,
    option_keys,
)
from mcpfuzz.cli.durations import PATTERN as DURATION_PATTERN
from mcpfuzz.cli.durations import Seconds

SCHEMA_ID = "https://json-schema.org/draft/2020-12/schema"
TARGET_LABEL = r"^[a-z]+/.+$"


def config_schema(commands: Mapping[str, click.Command]) -> dict[str, Any]:
    """The schema of `[tool.mcpfuzz]` / mcpfuzz.toml for these commands (every option, every command's table)."""
    shared: dict[str, Any] = {}
    tables: dict[str, Any] = {}
    for name in COMMANDS:
        command = commands[name]
        properties = {key: option_schema(param) for key, param in option_keys(command).items()}
        if any(param.name == SERVER_PARAM for param in command.params):
            properties.update(server_schemas())
        for key, schema in properties.items():
            shared.setdefault(key, schema)
        tables[name] = {"type": "object", "description": f"Options of `mcpfuzz {name}` only.",
                        "properties": dict(sorted(properties.items())), "additionalProperties": False}
    shared[TARGETS_KEY] = targets_schema()
    return {
        "$schema": SCHEMA_ID,
        "title": "mcpfuzz configuration ([tool.mcpfuzz] in pyproject.toml, or mcpfuzz.toml)",
        "description": "Keys are the long option names of `mcpfuzz run`, `soak` and `replay` without `--`; "
                       "the command line overrides them. Strings may use ${VAR} and ${VAR:-default}.",
        "type": "object",
        "properties": {**dict(sorted(shared.items())), **tables},
        "additionalProperties": False,
    }


def option_schema(param: click.Option) -> dict[str, Any]:
    """One option's schema: its type, range or choices, help and default; a list for a repeatable option."""
    item = type_schema(param.type, param.is_flag)
    schema: dict[str, Any]
    if param.multiple:
        schema = {"anyOf": [item, {"type": "array", "items": item}]}
        if param.name in TABLE_JOINERS:
            schema["anyOf"].append({"type": "object", "additionalProperties": {"type": "string"}})
    else:
        schema = dict(item)
    if param.help:
        schema["description"] = param.help
    default = param.default
    if not param.multiple and isinstance(default, (str, int, float, bool)) and not callable(default):
        schema["default"] = default
    return schema


def type_schema(kind: click.ParamType, is_flag: bool) -> dict[str, Any]:
    """The JSON type of a click parameter type."""
    if is_flag or isinstance(kind, click.types.BoolParamType):
        return {"type": "boolean"}
    if isinstance(kind, click.Choice):
        return {"enum": list(kind.choices)}
    if isinstance(kind, (click.IntRange, click.FloatRange)):
        schema: dict[str, Any] = {"type": "integer" if isinstance(kind, click.IntRange) else "number"}
        for bound, is_open, closed_key, open_key in ((kind.min, kind.min_open, "minimum", "exclusiveMinimum"),
                                                     (kind.max, kind.max_open, "maximum", "exclusiveMaximum")):
            if bound is not None and math.isfinite(bound):
                schema[open_key if is_open else closed_key] = bound
        if isinstance(kind, Seconds):  # seconds, or a duration with units: "30s", "2m"
            return {"anyOf": [schema, {"type": "string", "pattern": DURATION_PATTERN}]}
        return schema
    if isinstance(kind, click.types.IntParamType):
        return {"type": "integer"}
    if isinstance(kind, click.types.FloatParamType):
        return {"type": "number"}
    return {"type": "string"}


def server_schemas() -> dict[str, Any]:
    """`command` and `url`: the server when none is given on the command line."""
    return {
        COMMAND_KEY: {"description": "The stdio server's command, used when no server is given on the command line.",
                      "anyOf": [{"type": "string"}, {"type": "array", "items": {"type": "string"}, "minItems": 1}]},
        URL_KEY: {"type": "string", "description": "The HTTP server's URL, used when no server is given."},
    }


def targets_schema() -> dict[str, Any]:
    """`[targets."KIND/NAME"]`: per-target include and exclude."""
    properties: dict[str, Any] = {key: {"type": "boolean"} for key in TARGET_KEYS}
    properties["timeout"] = {"anyOf": [{"type": "number", "exclusiveMinimum": 0},
                                       {"type": "string", "pattern": DURATION_PATTERN}],
                             "description": "How long each call of this target may take (seconds, or e.g. "
                                            "\"500ms\"), instead of --timeout."}
    setting = {"type": "object", "additionalProperties": False, "properties": properties}
    return {"type": "object", "description": "Per-target settings by label, e.g. [tool.mcpfuzz.targets.\"tool/x\"]: "
                                             "include = true calls a risky target, exclude = true never calls it, "
                                             "timeout = SECONDS for each of its calls.",
            "patternProperties": {TARGET_LABEL: setting}, "additionalProperties": False}


def schema_text() -> str:
    """The schema as the published file holds it."""
    from mcpfuzz.cli.main import main

    return json.dumps(config_schema(main.commands), indent=2) + "\n"


if __name__ == "__main__":
    click.echo(schema_text(), nl=False)
