"""MCP server over stdio whose declarations are clean by default; ``--break MODE`` breaks exactly one lint rule.

Usage: ``python tests/servers/lint_server.py [--break MODE]``

It serves both eras (a request whose ``params._meta`` names a protocol version is modern, 2026-07-28; else
the legacy ``initialize`` handshake) and declares tools, resources, resource templates and prompts. Each
mode in ``MODES`` changes one thing so that ``mcpfuzz lint`` reports the rule the mode is named after (a
suffix after ``/`` tells two modes of one rule apart), and nothing else. Standard library only; exits 0 on EOF.
"""

from __future__ import annotations

import argparse
import copy
import json
import sys
from typing import Any

MODERN = "2026-07-28"
LEGACY = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
META_VERSION = "io.modelcontextprotocol/protocolVersion"
MODES = {
    "PROTO-001": "the answer to an unknown method says jsonrpc 1.0",
    "PROTO-002": "legacy: initialize answers version 2025-13-01; modern: supportedVersions lists 2099-01-01",
    "PROTO-002/announced": "modern: supportedVersions lists 2025-06-18, but initialize answers 2025-11-25 to it",
    "PROTO-003": "legacy: initialize has no serverInfo; modern: the serverInfo in _meta has no version",
    "PROTO-004": "capabilities.logging is true instead of an object",
    "PROTO-005": "a tool without a name",
    "PROTO-006": "a resource without a name",
    "PROTO-007": "a prompt argument without a name",
    "PROTO-008": "prompts declared, prompts/list answers -32601",
    "PROTO-008/undeclared": "prompts served but not declared",
    "PROTO-011": "the unknown method is answered twice, the second time with an id never sent",
    "SCHEMA-001": "a minimum that is a string",
    "SCHEMA-002": "an inputSchema without type",
    "SCHEMA-003": "a nested object without properties",
    "SCHEMA-004": "required names a property that does not exist",
    "SCHEMA-005": "a tool without a description",
    "SCHEMA-006": 'a property of type "int"',
    "SCHEMA-007": "required: true on a property (draft 3)",
    "SCHEMA-008": "$schema names an unknown dialect",
    "SCHEMA-009": "a $ref to a missing $defs entry",
    "SCHEMA-010": "minLength above maxLength",
    "SCHEMA-011": "a pattern that is no regular expression",
    "SCHEMA-012": "a string property whose default is a number",
    "SEQ-001": "legacy: ping is refused",
    "SEQ-002": "unknown methods get -32600",
    "SEQ-003": "legacy: a request before initialize is refused with an error object without message",
    "SEQ-004": "never answers initialize or server/discover",
    "SEQ-005": "legacy: tools/list before initialize is served",
    "META-001": "a tool named with a space",
    "META-002": "two tools named echo",
    "META-003": "readOnlyHint is a string",
    "META-004": "a resource template with an unclosed expression",
    "META-005": "a prompt argument declared twice",
    "META-006": "a prompt without a description",
}

ECHO = {
    "name": "echo", "title": "Echo", "description": "Return the given text.",
    "inputSchema": {"type": "object", "properties": {
        "text": {"type": "string", "description": "What to echo.", "default": "hi", "pattern": "^[^\\n]*$",
                 "maxLength": 100},
        "times": {"type": "integer", "minimum": 1, "maximum": 3, "examples": [2]},
    }, "required": ["text"], "additionalProperties": False},
    "outputSchema": {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]},
    "annotations": {"readOnlyHint": True, "title": "Echo"},
}
NOARGS = {"name": "now", "description": "The time.", "inputSchema": {"type": "object", "additionalProperties": False}}
RESOURCE = {"uri": "note://welcome", "name": "welcome", "description": "A note.", "mimeType": "text/plain",
            "annotations": {"audience": ["user"], "priority": 0.5}}
TEMPLATE = {"uriTemplate": "note://{id}{?lang}", "name": "note", "description": "A note by id."}
PROMPT = {"name": "greet", "description": "Greet someone.", "arguments": [{"name": "who", "required": True}]}


def alike(count: int) -> list[dict[str, Any]]:
    """`count` tools sharing one schema flaw, as a framework writes `Optional[str] = None`: a `default` of null on
    a property typed `string` (and one typed `integer`), and one more tool whose `default` is outside its `enum`
    (another flaw of the same rule)."""
    tools = [{"name": f"lookup_{n}", "description": f"Look up thing {n}.", "inputSchema": {
        "type": "object", "properties": {"query": {"type": "string", "default": None},
                                         "limit": {"type": "integer", "default": None}},
        "additionalProperties": False}} for n in range(count)]
    if count:
        tools.append({"name": "pick", "description": "Pick a colour.", "inputSchema": {
            "type": "object", "properties": {"colour": {"type": "string", "enum": ["red"], "default": "blue"}},
            "additionalProperties": False}})
    return tools


def declarations(mode: str, many: int = 0) -> dict[str, Any]:
    """Tools, resources, templates and prompts with the mode's one change (and `many` tools sharing a flaw)."""
    echo = copy.deepcopy(ECHO)
    props = echo["inputSchema"]["properties"]
    tools, resources, templates, prompts = [echo, copy.deepcopy(NOARGS), *alike(many)], [dict(RESOURCE)], \
        [dict(TEMPLATE)], [copy.deepcopy(PROMPT)]
    changes = {
        "PROTO-005": lambda: tools.append({"description": "nameless", "inputSchema": {"type": "object",
                                                                                       "properties": {}}}),
        "PROTO-006": lambda: resources[0].pop("name"),
        "PROTO-007": lambda: prompts[0]["arguments"].append({"required": False}),
        "SCHEMA-001": lambda: props["times"].update(minimum="one"),
        "SCHEMA-002": lambda: tools[1]["inputSchema"].pop("type"),
        "SCHEMA-003": lambda: props.update(options={"type": "object", "description": "free"}),
        "SCHEMA-004": lambda: echo["inputSchema"]["required"].append("missing"),
        "SCHEMA-005": lambda: tools[1].pop("description"),
        "SCHEMA-006": lambda: props["times"].update(type="int"),
        "SCHEMA-007": lambda: props["text"].update(required=True),
        "SCHEMA-008": lambda: echo["inputSchema"].update({"$schema": "https://example.com/my-dialect"}),
        "SCHEMA-009": lambda: props.update(ref={"$ref": "#/$defs/missing"}),
        "SCHEMA-010": lambda: props.update(code={"type": "string", "minLength": 5, "maxLength": 2}),
        "SCHEMA-011": lambda: props["text"].update(pattern="^(unclosed$"),
        "SCHEMA-012": lambda: props["text"].update(default=5),
        "META-001": lambda: tools[1].update(name="what time"),
        "META-002": lambda: tools.append(copy.deepcopy(ECHO)),
        "META-003": lambda: echo["annotations"].update(readOnlyHint="yes"),
        "META-004": lambda: templates[0].update(uriTemplate="note://{id"),
        "META-005": lambda: prompts[0]["arguments"].append({"name": "who"}),
        "META-006": lambda: prompts[0].pop("description"),
    }
    if mode in changes:
        changes[mode]()
    return {"tools/list": ("tools", tools), "resources/list": ("resources", resources),
            "resources/templates/list": ("resourceTemplates", templates), "prompts/list": ("prompts", prompts)}


class Server:
    """One stdio session."""

    def __init__(self, mode: str, many: int = 0) -> None:
        self.mode = mode
        self.initialized = False
        self.lists = declarations(mode, many)

    def capabilities(self) -> dict[str, Any]:
        caps: dict[str, Any] = {"tools": {}, "resources": {}, "prompts": {}}
        if self.mode == "PROTO-004":
            caps["logging"] = True
        if self.mode == "PROTO-008/undeclared":
            del caps["prompts"]
        return caps

    def handle(self, message: Any) -> list[dict[str, Any]]:
        """The replies to one message (none for notifications)."""
        if not isinstance(message, dict) or "id" not in message or not isinstance(message.get("method"), str):
            return []
        rid, method, params = message["id"], message["method"], message.get("params") or {}
        meta = params.get("_meta") if isinstance(params, dict) else None
        modern = isinstance(meta, dict) and META_VERSION in meta
        if self.mode == "SEQ-004" and method in ("initialize", "server/discover"):
            return []
        if modern:
            return self.modern(rid, method, params)
        return self.legacy(rid, method, params)

    def error(self, rid: Any, code: int, text: str) -> list[dict[str, Any]]:
        return [{"jsonrpc": "2.0", "id": rid, "error": {"code": code, "message": text}}]

    def unknown(self, rid: Any) -> list[dict[str, Any]]:
        reply = self.error(rid, -32600 if self.mode == "SEQ-002" else -32601, "method not found")
        if self.mode == "PROTO-001":
            reply[0]["jsonrpc"] = "1.0"
        if self.mode == "PROTO-011":
            reply.append({"jsonrpc": "2.0", "id": "ghost", "error": {"code": -32601, "message": "again"}})
        return reply

    def listing(self, rid: Any, method: str, extra: dict[str, Any]) -> list[dict[str, Any]] | None:
        if method not in self.lists:
            return None
        if method == "prompts/list" and self.mode == "PROTO-008":
            return self.error(rid, -32601, "method not found")
        key, items = self.lists[method]
        return [{"jsonrpc": "2.0", "id": rid, "result": {key: items, **extra}}]

    def modern(self, rid: Any, method: str, params: dict[str, Any]) -> list[dict[str, Any]]:
        if params["_meta"][META_VERSION] != MODERN:
            return [{"jsonrpc": "2.0", "id": rid, "error": {"code": -32022, "message": "unsupported version",
                                                            "data": {"supported": [MODERN],
                                                                     "requested": params["_meta"][META_VERSION]}}}]
        extra = {"resultType": "complete", "ttlMs": 0, "cacheScope": "private"}
        if method == "server/discover":
            info = {"name": "lint-server"} if self.mode == "PROTO-003" else {"name": "lint-server", "version": "1"}
            versions = {"PROTO-002": [MODERN, "2099-01-01"], "PROTO-002/announced": [MODERN, "2025-06-18"]}.get(
                self.mode, [MODERN, *LEGACY])
            result = {"supportedVersions": versions, "capabilities": self.capabilities(),
                      "_meta": {"io.modelcontextprotocol/serverInfo": info}, **extra}
            return [{"jsonrpc": "2.0", "id": rid, "result": result}]
        return self.listing(rid, method, extra) or self.unknown(rid)

    def legacy(self, rid: Any, method: str, params: dict[str, Any]) -> list[dict[str, Any]]:
        if method == "ping":
            return self.error(rid, -32601, "no ping") if self.mode == "SEQ-001" else \
                [{"jsonrpc": "2.0", "id": rid, "result": {}}]
        if method == "server/discover":
            return self.error(rid, -32601, "method not found")
        if method == "initialize":
            asked = params.get("protocolVersion")
            version = asked if asked in LEGACY and self.mode != "PROTO-002/announced" else LEGACY[-1]
            result: dict[str, Any] = {"protocolVersion": "2025-13-01" if self.mode == "PROTO-002" else version,
                                      "capabilities": self.capabilities()}
            if self.mode != "PROTO-003":
                result["serverInfo"] = {"name": "lint-server", "version": "1"}
            self.initialized = True
            return [{"jsonrpc": "2.0", "id": rid, "result": result}]
        if not self.initialized and self.mode != "SEQ-005":
            if self.mode == "SEQ-003":
                return [{"jsonrpc": "2.0", "id": rid, "error": {"code": -32600}}]
            return self.error(rid, -32600, "not initialized")
        return self.listing(rid, method, {}) or self.unknown(rid)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--break", dest="mode", default="", choices=["", *MODES])
    parser.add_argument("--many", type=int, default=0, help="add this many tools sharing one schema flaw")
    arguments = parser.parse_args()
    server = Server(arguments.mode, arguments.many)
    for line in sys.stdin:
        try:
            message = json.loads(line)
        except ValueError:
            out = [{"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "parse error"}}]
        else:
            out = server.handle(message)
        for reply in out:
            sys.stdout.write(json.dumps(reply) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
