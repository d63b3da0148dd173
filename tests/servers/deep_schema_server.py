"""A clean MCP server over stdio whose query tools declare deep schemas, as database servers do.

Usage: ``python tests/servers/deep_schema_server.py``

Three tools have small flat schemas. ``explain_query`` and ``export_query`` take a pipeline: an array whose items
are a ``oneOf`` of stage objects, each stage a free-form object (``additionalProperties: {}``), one of them
nesting another pipeline. Such a schema is not drawn exactly (``oneOf`` is left to filtering) and its drawn values
run to kilobytes each, so checking it by drawing takes seconds where a flat schema takes milliseconds. A run
must call every tool, the deep ones too. The tools check only their required database (beside that they answer
what they were given); everything else comes from ``mcp_server.Server``.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from mcp_server import Server, main, text_item, tool_error  # noqa: E402


def stage(name: str, inner: dict[str, Any] | None = None) -> dict[str, Any]:
    """A pipeline stage: an object of one member `name`, itself a free-form object (with `inner` properties)."""
    body = {"type": "object", "properties": inner or {}, "additionalProperties": {}}
    return {"type": "object", "properties": {name: body}, "required": [name], "additionalProperties": False}


PIPELINE: dict[str, Any] = {"type": "array", "items": {"oneOf": [
    stage("$match"), stage("$project"), stage("$sort"),
    stage("$group", {"_id": {}, "total": {"type": "object", "additionalProperties": {}}}),
    stage("$lookup", {"from": {"type": "string"},
                      "pipeline": {"type": "array", "items": {"type": "object", "additionalProperties": {}}}})]}}


def query_tool(name: str, description: str) -> dict[str, Any]:
    """A tool that takes a database, a collection and a pipeline."""
    return {"name": name, "description": description, "annotations": {"readOnlyHint": True}, "inputSchema": {
        "type": "object", "properties": {"database": {"type": "string"}, "collection": {"type": "string"},
                                         "pipeline": PIPELINE},
        "required": ["database", "collection", "pipeline"]}}


def flat_tool(name: str, description: str) -> dict[str, Any]:
    """A tool that takes a database name and an optional limit."""
    return {"name": name, "description": description, "annotations": {"readOnlyHint": True}, "inputSchema": {
        "type": "object", "properties": {"database": {"type": "string"}, "limit": {"type": "integer"}},
        "required": ["database"], "additionalProperties": False}}


class DeepSchemaServer(Server):
    """Two query tools of deep schemas (listed first) and three flat ones; every tool answers what it was given."""

    TOOLS: list[dict[str, Any]] = [
        query_tool("explain_query", "Explain how a pipeline would run."),
        query_tool("export_query", "Export the documents a pipeline returns."),
        flat_tool("list_collections", "List the collections of a database."),
        flat_tool("db_stats", "Statistics of a database."),
        flat_tool("list_databases", "List the databases."),
    ]

    def call_tool(self, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        """Arguments without the required database are an isError result; others are counted."""
        if not isinstance(arguments.get("database"), str):
            return tool_error("database: a string is required")
        return {"content": [text_item(f"{name}: {len(arguments)} arguments")], "isError": False}


if __name__ == "__main__":
    main(server_class=DeepSchemaServer)
