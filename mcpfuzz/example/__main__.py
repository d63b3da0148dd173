"""A small "notes" MCP server over stdio, with known bugs, for a first mcpfuzz run.

Run it:   python -m mcpfuzz.example
Fuzz it:  mcpfuzz run -- python -m mcpfuzz.example

Legacy protocol era only (``initialize`` handshake, answers protocol version 2025-11-25; a
``server/discover`` probe gets an error, so clients fall back to ``initialize``). Tools:
``add_note {title, body}`` returns the new note's id, ``get_note {id}``, and
``search {query, limit: integer 1..50}``. At most 100 notes are kept (oldest dropped first).
Resources: ``notes://about``, and the template ``notes://note/{id}`` (a note by its id). Prompt:
``summarize_note {id, length?}``.

Known bugs, left in on purpose so that mcpfuzz has something to find:

1. String ids that look numeric (``"1"``, ``"007"``) are answered as integers (``1``, ``7``).
   Oracle: ``id-preserved``.
2. A JSON array (a batch) kills the process with a traceback on stderr. Oracle: ``no-crash``.
3. ``tools/list`` prints a debug line to stdout. Oracle: ``stdout-clean``.
4. Invalid requests such as ``{}`` are answered with -32603 instead of -32600.
   Oracle: ``invalid-request``. (Unparseable input gets no reply at all; the official SDKs do
   the same, so ``parse-error`` reports it at low severity only.)
5. ``tools/call`` of an unknown tool is answered with -32603 and a Python traceback in the
   message, instead of -32602. Oracles: ``invalid-params`` and ``no-internal-leak``.
6. ``search`` refuses ``limit: 50`` with -32602, although its schema allows 1..50 (an off-by-one
   range check). Oracle: ``valid-input-accepted``.
7. ``add_note`` with an empty body returns the note id as a number in ``structuredContent``,
   against its outputSchema. Oracle: ``output-schema``.
8. Reading ``notes://note/{id}`` with an empty id kills the process (notes are sharded by the
   id's first character). Oracle: ``no-crash``, target ``template/notes://note/{id}``.
9. ``summarize_note`` puts its instructions in a ``system`` message; MCP prompt messages are
   ``user`` or ``assistant``. Oracle: ``response-schema``, target ``prompt/summarize_note``.

Everything else follows the spec. Standard library only.
"""

from __future__ import annotations

import json
import sys
import traceback
from typing import Any
from urllib.parse import unquote

PROTOCOL_VERSION = "2025-11-25"
MAX_NOTES = 100  # bounded, so a long fuzz run does not turn into a memory-growth finding

TOOLS: list[dict[str, Any]] = [
    {
        "name": "add_note",
        "description": "Store a note and return its id.",
        "inputSchema": {
            "type": "object",
            "properties": {
                "title": {"type": "string", "minLength": 1, "maxLength": 200},
                "body": {"type": "string", "maxLength": 10000},
            },
            "required": ["title", "body"],
            "additionalProperties": False,
        },
        "outputSchema": {"type": "object", "properties": {"id": {"type": "string"}}, "required": ["id"]},
    },
    {
        "name": "get_note",
        "description": "Read a note by the id that add_note returned.",
        "inputSchema": {
            "type": "object",
            "properties": {"id": {"type": "string"}},
            "required": ["id"],
            "additionalProperties": False,
        },
    },
    {
        "name": "search",
        "description": "Find notes whose title or body contains the query (case-insensitive).",
        "inputSchema": {
            "type": "object",
            "properties": {
                "query": {"type": "string", "maxLength": 200},
                "limit": {"type": "integer", "minimum": 1, "maximum": 50, "default": 10},
            },
            "required": ["query"],
            "additionalProperties": False,
        },
    },
]


ABOUT_URI = "notes://about"
NOTE_TEMPLATE = "notes://note/{id}"
RESOURCES = [{"uri": ABOUT_URI, "name": "about", "description": "What this server is and what it stores.",
              "mimeType": "text/plain"}]
TEMPLATES = [{"uriTemplate": NOTE_TEMPLATE, "name": "note", "description": "One note, by the id add_note returned.",
              "mimeType": "text/plain"}]
PROMPTS = [
    {
        "name": "summarize_note",
        "description": "Ask the model to summarize one note.",
        "arguments": [
            {"name": "id", "description": "the note's id", "required": True},
            {"name": "length", "description": "short or long", "required": False},
        ],
    }
]
RESOURCE_NOT_FOUND = -32002  # MCP up to 2025-11-25


def text_result(
    text: str, *, is_error: bool = False, structured: dict[str, Any] | None = None
) -> dict[str, Any]:
    """A tool result with one text item."""
    result: dict[str, Any] = {"content": [{"type": "text", "text": text}], "isError": is_error}
    if structured is not None:
        result["structuredContent"] = structured
    return result


def schema_problem(schema: dict[str, Any], args: dict[str, Any]) -> str | None:
    """Check arguments against the flat schemas above; None when they conform."""
    props: dict[str, Any] = schema["properties"]
    for key in schema.get("required", []):
        if key not in args:
            return f"missing required argument '{key}'"
    for key, value in args.items():
        if key not in props:
            return "unexpected argument"  # the name is not echoed: it is untrusted input
        rule = props[key]
        if rule["type"] == "string":
            if not isinstance(value, str):
                return f"'{key}' must be a string"
            if not rule.get("minLength", 0) <= len(value) <= rule.get("maxLength", len(value)):
                return f"'{key}' has the wrong length"
        elif rule["type"] == "integer":
            # JSON Schema counts 2.0 as an integer; bool is an int in Python only.
            if isinstance(value, bool) or not (
                isinstance(value, int) or (isinstance(value, float) and value.is_integer())
            ):
                return f"'{key}' must be an integer"
            if not rule["minimum"] <= value <= rule["maximum"]:
                return f"'{key}' must be between {rule['minimum']} and {rule['maximum']}"
    return None


class NotesServer:
    """One stdio session: handshake state and the notes."""

    def __init__(self) -> None:
        """Start before the handshake with no notes."""
        self.initialized = False
        self.notes: dict[str, dict[str, str]] = {}
        self.counter = 0

    def send(self, rid: Any, *, result: Any = None, error: dict[str, Any] | None = None) -> None:
        """Write one response line to stdout."""
        # BUG 1 (documented): ids are "normalised", so "007" goes back as 7.
        if isinstance(rid, str) and rid.isascii() and rid.isdigit():
            rid = int(rid)
        msg: dict[str, Any] = {"jsonrpc": "2.0", "id": rid}
        if error is None:
            msg["result"] = result
        else:
            msg["error"] = error
        sys.stdout.write(json.dumps(msg, separators=(",", ":")) + "\n")
        sys.stdout.flush()

    def fail(self, rid: Any, code: int, message: str) -> None:
        """Write one error response."""
        self.send(rid, error={"code": code, "message": message})

    def handle(self, msg: Any) -> None:
        """Check the JSON-RPC envelope, then dispatch."""
        if type(msg) not in (dict, list):  # (a type test mypy does not narrow: `msg.get` on a list is BUG 2)
            self.fail(None, -32603, "internal error: not a request")  # BUG 4: should be -32600
            return
        # BUG 2 (documented): batches were never finished; for a list, msg.get raises and the
        # exception escapes the main loop.
        method = msg.get("method")
        if method is None and ("result" in msg or "error" in msg):
            return  # a response from the client; we never send requests
        rid = msg.get("id")
        valid_id = isinstance(rid, str) or (isinstance(rid, int) and not isinstance(rid, bool))
        if "id" not in msg:
            if msg.get("jsonrpc") != "2.0" or not isinstance(method, str):
                self.fail(None, -32603, "internal error: malformed message")  # BUG 4
            return  # notifications are never answered
        if not valid_id:
            self.fail(None, -32603, "internal error: bad id")  # BUG 4
            return
        if msg.get("jsonrpc") != "2.0" or not isinstance(method, str):
            self.fail(rid, -32603, "internal error: malformed request")  # BUG 4
            return
        params = msg.get("params", {})
        if not isinstance(params, dict):
            self.fail(rid, -32602, "invalid params: params must be an object")
            return
        self.dispatch(rid, method, params)

    def dispatch(self, rid: Any, method: str, params: dict[str, Any]) -> None:
        """Route a well-formed request."""
        if method == "ping":
            self.send(rid, result={})
        elif method == "initialize":
            if self.initialized:
                self.fail(rid, -32600, "already initialized")
            elif not isinstance(params.get("protocolVersion"), str):
                self.fail(rid, -32602, "invalid params: protocolVersion must be a string")
            else:
                self.initialized = True  # any requested version gets the one we speak
                info = {"name": "mcpfuzz-example-notes", "version": "0.1.0"}
                caps: dict[str, Any] = {"tools": {}, "resources": {}, "prompts": {}}
                self.send(
                    rid,
                    result={"protocolVersion": PROTOCOL_VERSION, "capabilities": caps, "serverInfo": info},
                )
        elif not self.initialized:
            self.fail(rid, -32600, "not initialized: send initialize first")
        elif method == "tools/list":
            sys.stdout.write(f"debug: listing {len(TOOLS)} tools\n")  # BUG 3: stdout is for protocol only
            self.send(rid, result={"tools": TOOLS})
        elif method == "tools/call":
            self.call_tool(rid, params)
        elif method == "resources/list":
            self.send(rid, result={"resources": RESOURCES})
        elif method == "resources/templates/list":
            self.send(rid, result={"resourceTemplates": TEMPLATES})
        elif method == "resources/read":
            self.read_resource(rid, params)
        elif method == "prompts/list":
            self.send(rid, result={"prompts": PROMPTS})
        elif method == "prompts/get":
            self.get_prompt(rid, params)
        else:
            self.fail(rid, -32601, "method not found")

    def read_resource(self, rid: Any, params: dict[str, Any]) -> None:
        """The about text, or one note by id through the template."""
        uri = params.get("uri")
        if not isinstance(uri, str):
            self.fail(rid, -32602, "invalid params: uri must be a string")
            return
        if uri == ABOUT_URI:
            text = f"A notes server with {len(self.notes)} notes."
        elif uri.startswith("notes://note/"):
            note_id = unquote(uri.removeprefix("notes://note/"))
            # BUG 8 (documented): notes are sharded by the id's first character, and an empty id
            # (`notes://note/`) raises IndexError, which escapes the main loop.
            shard = note_id[0]
            note = self.notes.get(note_id) if shard.isascii() else None
            if note is None:
                self.fail(rid, RESOURCE_NOT_FOUND, "resource not found")
                return
            text = f"{note['title']}\n\n{note['body']}"
        else:
            self.fail(rid, RESOURCE_NOT_FOUND, "resource not found")
            return
        self.send(rid, result={"contents": [{"uri": uri, "mimeType": "text/plain", "text": text}]})

    def get_prompt(self, rid: Any, params: dict[str, Any]) -> None:
        """Messages that ask for a summary of one note."""
        arguments = params.get("arguments") or {}
        if params.get("name") != "summarize_note":
            self.fail(rid, -32602, "invalid params: unknown prompt")
            return
        if not isinstance(arguments, dict) or not isinstance(arguments.get("id"), str) \
                or not all(isinstance(value, str) for value in arguments.values()):
            self.fail(rid, -32602, "invalid params: `id` is required, and every argument is a string")
            return
        note = self.notes.get(arguments["id"])
        body = note["body"] if note is not None else "(no such note)"
        length = "in one line" if arguments.get("length") != "long" else "in a few paragraphs"
        # BUG 9 (documented): the instructions go in a "system" message, a role MCP prompts do not have.
        messages = [
            {"role": "system", "content": {"type": "text", "text": f"Summarize {length}."}},
            {"role": "user", "content": {"type": "text", "text": body}},
        ]
        self.send(rid, result={"description": "summarize a note", "messages": messages})

    def call_tool(self, rid: Any, params: dict[str, Any]) -> None:
        """Run one tool; bad arguments are an isError result the model can read."""
        name, args = params.get("name"), params.get("arguments", {})
        if not isinstance(name, str):
            self.fail(rid, -32602, "invalid params: name must be a string")
            return
        if not isinstance(args, dict):
            self.fail(rid, -32602, "invalid params: arguments must be an object")
            return
        if name == "search" and args.get("limit") == 50:
            # BUG 6 (documented): an off-by-one range check refuses the schema's own maximum.
            self.fail(rid, -32602, "invalid params: limit must be below 50")
            return
        try:
            tool = next(t for t in TOOLS if t["name"] == name)
            problem = schema_problem(tool["inputSchema"], args)
            if problem is not None:
                result = text_result(f"invalid arguments: {problem}", is_error=True)
            else:
                result = getattr(self, f"tool_{name}")(args)
        except Exception:
            # BUG 5 (documented): an unknown tool raises StopIteration above, and this catch-all
            # sends the traceback to the client with -32603 instead of -32602.
            self.fail(rid, -32603, "internal error:\n" + traceback.format_exc())
            return
        self.send(rid, result=result)

    def tool_add_note(self, args: dict[str, Any]) -> dict[str, Any]:
        """Store a note, dropping the oldest beyond MAX_NOTES."""
        self.counter += 1
        note_id = f"note-{self.counter}"
        self.notes[note_id] = {"title": args["title"], "body": args["body"]}
        if len(self.notes) > MAX_NOTES:
            del self.notes[next(iter(self.notes))]
        # BUG 7 (documented): an empty body takes a shortcut that returns the bare counter.
        return text_result(note_id, structured={"id": self.counter if not args["body"] else note_id})

    def tool_get_note(self, args: dict[str, Any]) -> dict[str, Any]:
        """Return a note's title and body."""
        note = self.notes.get(args["id"])
        if note is None:
            return text_result("note not found", is_error=True)  # a domain error, not a protocol one
        return text_result(f"{note['title']}\n\n{note['body']}")

    def tool_search(self, args: dict[str, Any]) -> dict[str, Any]:
        """List the ids and titles of matching notes."""
        query, limit = args["query"].casefold(), int(args.get("limit", 10))
        hits = [
            f"{note_id}: {note['title']}"
            for note_id, note in self.notes.items()
            if query in note["title"].casefold() or query in note["body"].casefold()
        ]
        return text_result("\n".join(hits[:limit]) or "no notes match")


def reject_constant(name: str) -> Any:
    """Refuse NaN and Infinity, which are not JSON."""
    raise ValueError(name)


def main() -> int:
    """Serve stdin until EOF."""
    server = NotesServer()
    sys.stderr.write("mcpfuzz example notes server: ready (JSON-RPC on stdin/stdout)\n")
    for raw in iter(sys.stdin.buffer.readline, b""):
        if not raw.strip():
            continue
        try:
            msg = json.loads(raw.decode("utf-8"), parse_constant=reject_constant)
        except (UnicodeDecodeError, ValueError, RecursionError):
            continue  # unparseable: no reply, as the official SDKs do on stdio
        server.handle(msg)
    return 0


if __name__ == "__main__":
    sys.exit(main())
