"""MCP server over stdio with a small note store whose tools carry annotations, each bug breaking one of them.

Usage: ``python tests/servers/annotated_server.py [--bug NAME]... [--no-annotations] [--now]``

Notes are kept by the name the client gives them (as a memory server keeps entities), so a replay on a fresh server
makes the same note again. Read-only tools: ``list_notes``, ``get_note(name)``, ``get_tags``, ``lookup(query)``,
``stats`` (how many notes there are and how many lookups were counted). ``add_note(name, text)`` creates or
replaces a note and returns its name; ``set_tag(tag)`` (idempotent) sets the one tag; ``delete_note(name)``
(destructive) removes a note.

Bugs: ``readonly-counter`` (``lookup``, read-only, counts every call in ``stats``), ``idempotent-append``
(``set_tag`` appends the tag instead of setting it), ``delete-noop`` (``delete_note`` answers success and
keeps the note). ``--no-annotations`` lists the same tools without annotations (nothing says what to expect).
``--all-risky`` annotates every tool ``openWorldHint: true``.
``--now`` adds a read-only ``now`` tool that returns the time of day to the second: state that changes by itself.
Everything else comes from ``mcp_server.Server``.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from mcp_server import Server, check_arguments, main, text_item, tool_error  # noqa: E402

READ_ONLY = {"readOnlyHint": True}
WRITES = {"readOnlyHint": False, "destructiveHint": False, "idempotentHint": False}
IDEMPOTENT = {"readOnlyHint": False, "destructiveHint": False, "idempotentHint": True}
DELETES = {"readOnlyHint": False, "destructiveHint": True, "idempotentHint": True}
NO_ARGUMENTS = {"type": "object", "additionalProperties": False, "required": [], "properties": {}}


def _takes(*names: str) -> dict[str, Any]:
    return {"type": "object", "additionalProperties": False, "required": list(names),
            "properties": {name: {"type": "string", "minLength": 1, "maxLength": 40} for name in names}}


TOOLS: list[dict[str, Any]] = [
    {"name": "list_notes", "description": "The names of every note.", "inputSchema": NO_ARGUMENTS,
     "annotations": READ_ONLY},
    {"name": "get_note", "description": "One note's text.", "inputSchema": _takes("name"), "annotations": READ_ONLY},
    {"name": "get_tags", "description": "The tag set on the store.", "inputSchema": NO_ARGUMENTS,
     "annotations": READ_ONLY},
    {"name": "lookup", "description": "Find the notes whose text holds a word.", "inputSchema": _takes("query"),
     "annotations": READ_ONLY},
    {"name": "stats", "description": "How many notes there are, and lookups counted.", "inputSchema": NO_ARGUMENTS,
     "annotations": READ_ONLY},
    {"name": "add_note", "description": "Add a note (or replace the note of that name); returns its name.",
     "inputSchema": _takes("name", "text"),
     "annotations": WRITES},
    {"name": "set_tag", "description": "Set the store's tag (replaces the one set before).",
     "inputSchema": _takes("tag"), "annotations": IDEMPOTENT},
    {"name": "delete_note", "description": "Delete a note by its name.", "inputSchema": _takes("name"),
     "annotations": DELETES},
]
NOW = {"name": "now", "description": "The server's time of day.", "inputSchema": NO_ARGUMENTS,
       "annotations": READ_ONLY}
BUGS = {
    "readonly-counter": "lookup (readOnlyHint) counts every call, and stats shows the count",
    "idempotent-append": "set_tag (idempotentHint) appends the tag instead of setting it",
    "delete-noop": "delete_note answers success and keeps the note",
}


def _answer(value: Any) -> dict[str, Any]:
    """A result with the value as JSON text and as structured content (an object)."""
    structured = value if isinstance(value, dict) else {"value": value}
    return {"content": [text_item(json.dumps(value))], "structuredContent": structured, "isError": False}


class AnnotatedServer(Server):
    """The note store; its tools' annotations hold unless a bug is on."""

    TOOLS = TOOLS
    BUGS = BUGS

    def __init__(self, bugs: set[str]) -> None:
        """Two notes to start with, no tag, no lookups."""
        super().__init__(bugs)
        self.notes = {"n1": "first note", "n2": "second note"}
        self.tags: list[str] = []
        self.lookups = 0

    def call_tool(self, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        """Run one tool on the store."""
        tool = next(t for t in self.TOOLS if t["name"] == name)
        problem = check_arguments(tool["inputSchema"], arguments)
        if problem is not None:
            return tool_error(f"invalid arguments: {problem}")
        if name == "list_notes":
            return _answer({"names": sorted(self.notes)})
        if name == "get_note":
            text = self.notes.get(arguments["name"])
            return tool_error("no such note") if text is None else _answer({"name": arguments["name"], "text": text})
        if name == "get_tags":
            return _answer({"tags": list(self.tags)})
        if name == "lookup":
            if "readonly-counter" in self.bugs:
                self.lookups += 1
            return _answer({"names": sorted(n for n, text in self.notes.items() if arguments["query"] in text)})
        if name == "stats":
            return _answer({"notes": len(self.notes), "lookups": self.lookups})
        if name == "now":
            return {"content": [text_item(time.strftime("%H:%M:%S"))], "isError": False}
        if name == "add_note":
            self.notes[arguments["name"]] = arguments["text"]
            return _answer({"name": arguments["name"]})
        if name == "set_tag":
            self.tags = [*self.tags, arguments["tag"]] if "idempotent-append" in self.bugs else [arguments["tag"]]
            return _answer({"tag": arguments["tag"]})
        if arguments["name"] not in self.notes:
            return tool_error("no such note")
        if "delete-noop" not in self.bugs:
            del self.notes[arguments["name"]]
        return _answer({"deleted": arguments["name"]})


if __name__ == "__main__":
    if "--no-annotations" in sys.argv:
        sys.argv.remove("--no-annotations")
        AnnotatedServer.TOOLS = [{k: v for k, v in tool.items() if k != "annotations"} for tool in TOOLS]
    if "--all-risky" in sys.argv:  # every tool reaches the open world: mcpfuzz calls none unless told to
        sys.argv.remove("--all-risky")
        AnnotatedServer.TOOLS = [{**tool, "annotations": {**tool.get("annotations", {}), "openWorldHint": True}}
                                 for tool in AnnotatedServer.TOOLS]
    if "--now" in sys.argv:
        sys.argv.remove("--now")
        AnnotatedServer.TOOLS = [*AnnotatedServer.TOOLS, NOW]
    sys.exit(main(server_class=AnnotatedServer))
