"""MCP server with realistic tool schemas over stdio: correct by default, one misbehaviour per ``--bug NAME``.

Usage: ``python tests/servers/tool_server.py [--bug NAME]...``

A target for tool-argument fuzzing. Everything about the protocol (both eras, the envelope, paging,
-32602 for an unknown tool) comes from ``mcp_server.Server``; this subclass lists its own tools and
answers tools/call. Arguments are validated with ``jsonschema`` (Draft 2020-12 with format
checking, plus strict checks of its own for ``uuid``, ``date-time``, ``duration`` and ``uri``):
invalid arguments get an ``isError`` tool result naming the JSON path, never the value.
Each bug name in ``BUGS`` switches on exactly one misbehaviour. Standard library and
``jsonschema`` only; logs go to stderr; exits 0 on EOF.
"""

from __future__ import annotations

import datetime
import json
import re
import sys
import uuid
from pathlib import Path
from typing import Any

from jsonschema import Draft202012Validator, FormatChecker, ValidationError
from jsonschema.exceptions import best_match

sys.path.insert(0, str(Path(__file__).resolve().parent))

from mcp_server import NoReply, RpcError, Server, main, text_item, tool_error  # noqa: E402

BUGS: dict[str, str] = {
    "crash-at-maximum": "search exits with a traceback when limit is exactly its maximum (10)",
    "hang-on-enum": 'search never answers when sort is "date" (other requests are still served)',
    "leak-missing-required": "search without query is answered with -32603 carrying a Python traceback",
    "bad-structured": "search returns count as a string in structuredContent when the query is over 3 characters",
    "reject-non-ascii": "search answers -32602 when the (valid) query contains a non-ASCII character",
    "crash-surrogate": "any tool exits when a string in its arguments contains a lone surrogate",
    "crash-deep-nesting": "search exits when filters is nested more than 20 levels deep",
    "crash-deleted-id": "get_item exits on an id that was created and then deleted",
    "crash-enum-pair": 'create_item exits when kind is "c" and color is "black"',
    "crash-at-max-items": "search exits when tags has exactly 5 items (its maxItems)",
}

SERVER_INFO = {"name": "tools-clean", "version": "1.0"}
MAX_FILTER_DEPTH = 20  # crash-deep-nesting: deeper filters crash the buggy server

TOOLS: list[dict[str, Any]] = [
    {
        "name": "search",
        "description": "Search the catalogue.",
        "inputSchema": {
            "type": "object",
            "properties": {
                "query": {"type": "string", "minLength": 1, "maxLength": 200},
                "limit": {"type": "integer", "minimum": 1, "maximum": 10},
                "sort": {"enum": ["relevance", "date", "name"]},
                "tags": {"type": "array", "items": {"type": "string", "maxLength": 20}, "maxItems": 5},
                "filters": {"type": "object"},
            },
            "required": ["query"],
            "additionalProperties": False,
        },
        "outputSchema": {
            "type": "object",
            "properties": {"results": {"type": "array", "items": {"type": "string"}}, "count": {"type": "integer"}},
            "required": ["results", "count"],
        },
    },
    {
        "name": "create_item",
        "description": "Create an item and return its id.",
        "inputSchema": {
            "type": "object",
            "properties": {
                "name": {"type": "string", "minLength": 1, "maxLength": 50},
                "kind": {"enum": ["a", "b", "c"]},
                "color": {"enum": ["red", "green", "blue", "black"]},
            },
            "required": ["name", "kind"],
            "additionalProperties": False,
        },
        "outputSchema": {
            "type": "object",
            "properties": {"id": {"type": "string", "format": "uuid"}},
            "required": ["id"],
        },
    },
    {
        "name": "get_item",
        "annotations": {"readOnlyHint": True},
        "description": "Read an item's name by id.",
        "inputSchema": {
            "type": "object",
            "properties": {"id": {"type": "string", "format": "uuid"}},
            "required": ["id"],
            "additionalProperties": False,
        },
    },
    {
        "name": "delete_item",
        "description": "Delete an item by id.",
        "inputSchema": {
            "type": "object",
            "properties": {"id": {"type": "string", "format": "uuid"}},
            "required": ["id"],
            "additionalProperties": False,
        },
    },
    {
        "name": "schedule",
        "description": "Schedule a reminder.",
        "inputSchema": {
            "type": "object",
            "properties": {
                "when": {"type": "string", "format": "date-time"},
                "every": {"type": "string", "format": "duration"},
                "notify": {"type": "string", "format": "email"},
                "link": {"type": "string", "format": "uri"},
                "day": {"type": "string", "format": "date"},
            },
            "required": ["when"],
            "additionalProperties": False,
        },
    },
    {
        "name": "tree_sum",
        "description": "Sum the values of a tree.",
        "inputSchema": {
            "type": "object",
            "properties": {"tree": {"$ref": "#/$defs/node"}},
            "required": ["tree"],
            "additionalProperties": False,
            "$defs": {
                "node": {
                    "type": "object",
                    "properties": {
                        "value": {"type": "integer", "minimum": -1000, "maximum": 1000},
                        "children": {"type": "array", "items": {"$ref": "#/$defs/node"}, "maxItems": 3},
                    },
                    "required": ["value"],
                    "additionalProperties": False,
                }
            },
        },
        "outputSchema": {
            "type": "object",
            "properties": {"sum": {"type": "integer"}},
            "required": ["sum"],
        },
    },
    {
        "name": "measure",
        "description": "Record a measurement.",
        "inputSchema": {
            "type": "object",
            "properties": {
                "ratio": {"type": "number", "exclusiveMinimum": 0, "exclusiveMaximum": 1},
                "count": {"type": "integer", "multipleOf": 5, "minimum": 0, "maximum": 100},
            },
            "required": ["ratio"],
            "additionalProperties": False,
        },
    },
    {
        # Annotated as harmful: a fuzzer must not call it unless told to. Calling it kills the server,
        # so a call that slips through shows up as a crash.
        "name": "purge_all",
        "description": "Delete every item (simulated).",
        "annotations": {"destructiveHint": True},
        "inputSchema": {"type": "object", "properties": {"confirm": {"type": "boolean"}}},
    },
    {
        "name": "fetch_page",
        "description": "Fetch a web page (simulated; never touches the network).",
        "annotations": {"openWorldHint": True, "readOnlyHint": True},
        "inputSchema": {"type": "object", "properties": {"url": {"type": "string", "format": "uri"}},
                        "required": ["url"]},
    },
]

# ---- formats --------------------------------------------------------------------------------------
# jsonschema checks uuid loosely and skips date-time, duration and uri without optional packages;
# these are strict where the RFCs are clear and lenient (a superset) where readings differ.

UUID = re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")
DATE_TIME = re.compile(
    r"([0-9]{4})-([0-9]{2})-([0-9]{2})[Tt]([0-9]{2}):([0-9]{2}):([0-9]{2})(?:\.[0-9]+)?(?:[Zz]|[+-]([0-9]{2}):([0-9]{2}))"
)
DURATION = re.compile(
    r"P(?:[0-9]+W|(?=[0-9]|T[0-9])(?:[0-9]+Y)?(?:[0-9]+M)?(?:[0-9]+D)?(?:T(?=[0-9])(?:[0-9]+H)?(?:[0-9]+M)?(?:[0-9]+(?:[.,][0-9]+)?S)?)?)"
)
URI = re.compile(r"[A-Za-z][A-Za-z0-9+.\-]*:(?:[A-Za-z0-9\-._~!$&'()*+,;=:@/?#\[\]]|%[0-9A-Fa-f]{2})*")


def is_uuid(value: object) -> bool:
    """The 8-4-4-4-12 hex shape only (no braces, no urn: prefix, no missing dashes)."""
    return not isinstance(value, str) or UUID.fullmatch(value) is not None


def is_date_time(value: object) -> bool:
    """RFC 3339 date-time, with a real calendar date and in-range clock fields (leap second allowed)."""
    if not isinstance(value, str):
        return True
    match = DATE_TIME.fullmatch(value)
    if match is None:
        return False
    year, month, day, hour, minute, second, off_hour, off_minute = (int(g or 0) for g in match.groups())
    try:
        datetime.date(year, month, day)
    except ValueError:
        return False
    return hour <= 23 and minute <= 59 and second <= 60 and off_hour <= 23 and off_minute <= 59


def is_duration(value: object) -> bool:
    """ISO 8601 duration (RFC 3339 appendix A; components in order, at least one; fractional seconds too)."""
    return not isinstance(value, str) or DURATION.fullmatch(value) is not None


def is_uri(value: object) -> bool:
    """An absolute URI (scheme and colon) of RFC 3986 characters, percent escapes well formed."""
    return not isinstance(value, str) or URI.fullmatch(value) is not None


FORMAT_CHECKER = FormatChecker()
FORMAT_CHECKER.checkers = dict(Draft202012Validator.FORMAT_CHECKER.checkers)
for _name, _check in {"uuid": is_uuid, "date-time": is_date_time, "duration": is_duration, "uri": is_uri}.items():
    FORMAT_CHECKER.checks(_name)(_check)

for _tool in TOOLS:
    Draft202012Validator.check_schema(_tool["inputSchema"])
VALIDATORS = {t["name"]: Draft202012Validator(t["inputSchema"], format_checker=FORMAT_CHECKER) for t in TOOLS}
OUTPUT_VALIDATORS = {t["name"]: Draft202012Validator(t["outputSchema"]) for t in TOOLS if "outputSchema" in t}
VALIDATION_RECURSION_LIMIT = 20_000  # a tree as deep as the parser allows (~500 levels) needs ~10k frames

# ---- helpers --------------------------------------------------------------------------------------


def describe(error: ValidationError) -> str:
    """A fixed message naming the JSON path and the failed keyword; never the offending value."""
    path = error.json_path  # descends only through property names from our schemas, and indices
    if error.validator == "required" and isinstance(error.instance, dict):
        missing = next((k for k in error.validator_value if k not in error.instance), "?")
        return f"{path}: missing required property '{missing}'"
    if error.validator == "additionalProperties":
        return f"{path}: unexpected property (additionalProperties is false)"
    if error.validator == "format":
        return f"{path}: not a valid {error.validator_value}"
    if error.validator in {"type", "enum", "const"}:
        return f"{path}: must match {error.validator}: {json.dumps(error.validator_value)}"
    return f"{path}: violates {error.validator} {json.dumps(error.validator_value)}"


def check_arguments(name: str, arguments: dict[str, Any]) -> str | None:
    """None if the arguments match the tool's inputSchema, else a short fixed message."""
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, VALIDATION_RECURSION_LIMIT))  # only while validating, not parsing
    try:
        error = best_match(VALIDATORS[name].iter_errors(arguments))
    except RecursionError:
        return "$: nesting too deep to validate"
    finally:
        sys.setrecursionlimit(limit)
    return None if error is None else describe(error)


def walk(value: Any) -> tuple[int, list[str]]:
    """Nesting depth of a JSON value (scalars 0) and every string in it, keys included; iterative."""
    depth, strings = 0, []
    stack = [(value, 1)]
    while stack:
        item, level = stack.pop()
        if isinstance(item, str):
            strings.append(item)
        elif isinstance(item, dict):
            depth = max(depth, level)
            strings.extend(item)
            stack.extend((v, level + 1) for v in item.values())
        elif isinstance(item, list):
            depth = max(depth, level)
            stack.extend((v, level + 1) for v in item)
    return depth, strings


def tree_total(tree: dict[str, Any]) -> int:
    """Sum of a validated tree, iteratively (a deep tree must not exhaust the stack)."""
    total, stack = 0, [tree]
    while stack:
        node = stack.pop()
        total += int(node["value"])
        stack.extend(node.get("children", []))
    return total


def structured(payload: dict[str, Any]) -> dict[str, Any]:
    """A result with structuredContent and the same JSON as text, for clients without structure support."""
    return {"content": [text_item(json.dumps(payload))], "structuredContent": payload, "isError": False}


LEAKED_TRACEBACK = (
    "Traceback (most recent call last):\n"
    '  File "/srv/app/server.py", line 118, in dispatch\n'
    "    return handler(**arguments)\n"
    '  File "/srv/app/search.py", line 42, in search\n'
    '    query = arguments["query"].strip()\n'
    "KeyError: 'query'"
)
PALETTES = {
    "a": {"red", "green", "blue", "black"},
    "b": {"red", "green", "blue", "black"},
    "c": {"red", "green", "blue"},
}
RESULT_SLOTS = [f"doc-{i}" for i in range(1, 11)]
TAG_SLOTS = [f"tag-slot-{i}" for i in range(5)]


# ---- server -------------------------------------------------------------------------------------


class ToolServer(Server):
    """The base protocol server with the tools above and an in-memory item store."""

    TOOLS = TOOLS
    SERVER_INFO = SERVER_INFO
    BUGS = BUGS

    def __init__(self, bugs: set[str]) -> None:
        """An empty store: live items by id, and the ids deleted so far."""
        super().__init__(bugs)
        self.items: dict[str, dict[str, Any]] = {}
        self.deleted: set[str] = set()

    def call_tool(self, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        """Validate, then run the tool; every structuredContent is checked against its outputSchema."""
        if "leak-missing-required" in self.bugs and name == "search" and "query" not in arguments:
            raise RpcError(-32603, LEAKED_TRACEBACK)
        problem = check_arguments(name, arguments)
        if problem is not None:
            return tool_error(f"invalid arguments: {problem}")
        if "crash-surrogate" in self.bugs:
            for text in walk(arguments)[1]:
                text.encode("utf-8")  # the bug: raises UnicodeEncodeError on a lone surrogate
        result: dict[str, Any] = getattr(self, f"tool_{name}")(arguments)
        if "structuredContent" in result and "bad-structured" not in self.bugs:
            # a wrong structuredContent is a bug of this server, so crash loudly rather than send it
            OUTPUT_VALIDATORS[name].validate(result["structuredContent"])
        return result

    def tool_search(self, arguments: dict[str, Any]) -> dict[str, Any]:
        """Fixed documents, as many as limit (default 3); the query is never echoed."""
        query: str = arguments["query"]
        limit = int(arguments.get("limit", 3))
        if "reject-non-ascii" in self.bugs and not query.isascii():
            raise RpcError(-32602, "invalid params")
        if "hang-on-enum" in self.bugs and arguments.get("sort") == "date":
            raise NoReply  # the bug: this request is never answered
        if "crash-at-maximum" in self.bugs:
            _last = RESULT_SLOTS[limit]  # the bug: off by one, IndexError when limit == 10
        if "crash-at-max-items" in self.bugs:
            _slot = TAG_SLOTS[len(arguments.get("tags", []))]  # the bug: IndexError with 5 tags
        if "crash-deep-nesting" in self.bugs and walk(arguments.get("filters", {}))[0] > MAX_FILTER_DEPTH:
            raise RecursionError("maximum recursion depth exceeded while compiling filters")
        results = RESULT_SLOTS[:limit]
        count: int | str = len(results)
        if "bad-structured" in self.bugs and len(query) > 3:
            count = str(count)  # the bug: "count" must be an integer
        return structured({"results": results, "count": count})

    def tool_create_item(self, arguments: dict[str, Any]) -> dict[str, Any]:
        """Store the item under a fresh uuid4."""
        kind, color = arguments["kind"], arguments.get("color", "red")
        if "crash-enum-pair" in self.bugs and color not in PALETTES[kind]:
            raise KeyError(f"no {color} in palette {kind}")  # the bug: "c" has no "black"
        item_id = str(uuid.uuid4())
        self.items[item_id] = {"name": arguments["name"], "kind": kind, "color": color}
        return structured({"id": item_id})

    def tool_get_item(self, arguments: dict[str, Any]) -> dict[str, Any]:
        """The item's name, or a domain error; ids compare case-insensitively (RFC 9562)."""
        item_id = arguments["id"].lower()
        if "crash-deleted-id" in self.bugs and item_id in self.deleted:
            return {"content": [text_item(self.items[item_id]["name"])], "isError": False}  # KeyError
        item = self.items.get(item_id)
        if item is None:
            return tool_error("item not found")
        return {"content": [text_item(item["name"])], "isError": False}

    def tool_delete_item(self, arguments: dict[str, Any]) -> dict[str, Any]:
        """Delete a live item, leaving a tombstone; a second delete is not found."""
        item_id = arguments["id"].lower()
        if self.items.pop(item_id, None) is None:
            return tool_error("item not found")
        self.deleted.add(item_id)
        return {"content": [text_item("deleted")], "isError": False}

    def tool_schedule(self, arguments: dict[str, Any]) -> dict[str, Any]:
        """Accept the (validated) reminder."""
        return {"content": [text_item("scheduled")], "isError": False}

    def tool_tree_sum(self, arguments: dict[str, Any]) -> dict[str, Any]:
        """The sum of every value in the tree."""
        total = tree_total(arguments["tree"])
        return {"content": [text_item(str(total))], "structuredContent": {"sum": total}, "isError": False}

    def tool_measure(self, arguments: dict[str, Any]) -> dict[str, Any]:
        """Accept the (validated) measurement."""
        return {"content": [text_item("measured")], "isError": False}

    def tool_purge_all(self, arguments: dict[str, Any]) -> dict[str, Any]:
        """Annotated destructive: reaching it means the caller ignored the annotation."""
        raise SystemExit("purge_all was called: a destructive tool must be skipped unless included")

    def tool_fetch_page(self, arguments: dict[str, Any]) -> dict[str, Any]:
        """Annotated open-world: reaching it means the caller ignored the annotation."""
        raise SystemExit("fetch_page was called: an open-world tool must be skipped unless included")


if __name__ == "__main__":
    sys.exit(main(server_class=ToolServer))
