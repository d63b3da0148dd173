"""Results checked against the MCP specification's own JSON schema of the negotiated revision (data files)."""

from __future__ import annotations

import json
from functools import lru_cache
from importlib import resources
from typing import Any

from jsonschema import Draft7Validator, Draft202012Validator
from jsonschema.exceptions import best_match

# The result definition of each method whose shape the schema decides (the tool methods keep their own checks).
RESULT_DEFINITIONS = {
    "resources/list": "ListResourcesResult",
    "resources/templates/list": "ListResourceTemplatesResult",
    "resources/read": "ReadResourceResult",
    "prompts/list": "ListPromptsResult",
    "prompts/get": "GetPromptResult",
    "completion/complete": "CompleteResult",
}
SCHEMA_VERSIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25", "2026-07-28")
MAX_COMPLETION_VALUES = 100  # MCP utilities/completion: "Must not exceed 100 items" (every revision)


@lru_cache(maxsize=len(SCHEMA_VERSIONS))
def _document(version: str) -> dict:
    return json.loads(resources.files("mcpfuzz.oracles").joinpath(f"mcp_schema/{version}.json").read_text("utf-8"))


@lru_cache(maxsize=64)
def _validator(version: str, definition: str) -> Any:
    document = _document(version)
    modern = "$defs" in document
    # The whole document with a root $ref, so the definition's own $refs resolve inside it.
    schema = {**document, "$ref": f"#/{'$defs' if modern else 'definitions'}/{definition}"}
    return (Draft202012Validator if modern else Draft7Validator)(schema)


def spec_result_problems(method: str, version: str, result: Any) -> list[str]:
    """What in `result` breaks the specification's schema for `method` in `version` (empty when unknown)."""
    definition = RESULT_DEFINITIONS.get(method)
    if definition is None or version not in SCHEMA_VERSIONS:
        return []
    problems = []
    for error in sorted(_validator(version, definition).iter_errors(result), key=lambda e: list(e.absolute_path)):
        if error.context:  # anyOf/oneOf: say what the closest alternative misses, not "valid under none"
            error = best_match(error.context)
        where = "/".join(str(part) for part in error.absolute_path) or "the result"
        problems.append(f"{where}: {error.message[:160]} ({definition}, MCP {version})")
        if len(problems) == 4:
            break
    if method == "completion/complete" and isinstance(result, dict) and isinstance(result.get("completion"), dict):
        values = result["completion"].get("values")
        if isinstance(values, list) and len(values) > MAX_COMPLETION_VALUES:
            problems.append(f"completion.values holds {len(values)} values; at most {MAX_COMPLETION_VALUES} "
                            "are allowed")
    return problems
