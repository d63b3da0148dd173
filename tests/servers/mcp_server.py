"""Configurable MCP server over stdio: spec-correct by default, one misbehaviour per ``--bug NAME``.

Usage: ``python tests/servers/mcp_server.py [--bug NAME]...``

Without ``--bug`` a strict fuzzer must find nothing. It serves both protocol eras at once:
modern (2026-07-28, a request whose ``params._meta`` names a protocol version) and legacy
(``initialize`` handshake, 2024-11-05 .. 2025-11-25). Each bug name in ``BUGS`` switches on exactly
one misbehaviour; ``modern-only`` and ``legacy-only`` are not bugs (the spec allows both).
Standard library only; logs go to stderr; exits 0 on EOF. Integers longer than 100,000 digits
are refused as a parse error (-32700): RFC 8259 lets a parser limit numbers.

Other test servers reuse this one by subclassing ``Server``: it takes its tool list, server info
and bug table from the class attributes ``TOOLS``, ``SERVER_INFO`` and ``BUGS``, and answers a
tools/call for a listed tool with ``call_tool(name, arguments)``; ``main(server_class=...)`` serves it.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import re
import sys
import threading
import time
from pathlib import Path
from typing import Any

BUGS: dict[str, str] = {
    "silent-parse": "no reply to unparseable lines",
    "parse-code": "unparseable input answered with -32603 instead of -32700",
    "invalid-request-code": "invalid requests answered with -32603 instead of -32600",
    "silent-invalid-request": "no reply at all to invalid requests",
    "method-not-found-code": "unknown methods answered with -32600 instead of -32601",
    "invalid-params-code": "protocol-level invalid params answered with -32603 instead of -32602",
    "id-coerce": 'string ids that look like integers ("1", "007") answered as integers',
    "id-float": "integer ids beyond 2**53 answered as floats",
    "crash-batch": "exits with a traceback on any JSON array",
    "no-batches": "a batch is refused as a whole (one -32600, id null) in 2025-03-26 too, the revision that has them",
    "crash-deep": "exits with a traceback on any frame nested more than 100 levels deep",
    "crash-pre-init": "legacy: exits on a request other than initialize/ping/discover before initialize",
    "crash-discover": "legacy-only; exits when server/discover is the first message",
    "crash-parse-usage": "exits 1 on unparseable input, its error then a 40-line usage text on stderr (a CLI "
                         "framework's way when the serve function returns an error)",
    "notify-reply": "unknown notifications get a -32601 reply with id null",
    "double-reply": "unknown methods get their -32601 reply twice",
    "stdout-noise": "writes a plain log line to stdout before answering tools/list",
    "hang-method": "never answers resources/list",
    "version-echo": "legacy initialize echoes any requested protocolVersion",
    "version-code": "modern unsupported version answered with -32004 instead of -32022",
    "bad-shape": "tools lack inputSchema; initialize result lacks serverInfo",
    "no-result-type": "modern results lack resultType",
    "id-null-invalid": "invalid requests whose id is readable answered -32600 with id null",
    "invalid-as-parse": "parseable invalid messages (params not an object too) answered -32700, as the "
                        "TypeScript SDK's streamable HTTP transport does",
    "drop-deep": "frames nested deeper than 200 levels dropped silently (as pydantic-core's parser does)",
    "drop-big-id": "requests whose id lies beyond 2**53 dropped silently",
    "modern-only": "not a bug: serves only the modern era",
    "legacy-only": "not a bug: serves only the legacy era",
    "unknown-tool-32601": "not a bug: an unknown tool is answered -32601 (any protocol error is right; the spec's "
                          "example uses -32602)",
    "unknown-tool-is-error": "an unknown tool is answered with an isError result (low: the open SEP-2145 would "
                             "allow it; MCP asks for a protocol error)",
    "error-without-id": "unparseable input (a lone surrogate escape too, refused as serde_json refuses it) answered "
                        "-32700 with no id member",
    "answer-notifications-without-id": 'every notification (notifications/initialized too) answered '
                                       '{"jsonrpc":"2.0","result":null}, with no id member, a moment later',
    "answer-anything-without-id": 'every message without an id, notifications and response objects alike (after '
                                  'the handshake), answered {"jsonrpc":"2.0","result":null}',
    "answer-responses-without-id": 'every response object sent to it answered {"jsonrpc":"2.0","result":null}',
    "answers-out-of-order": "not a bug: tools/list answered a moment later from another thread, after the answers "
                            "to what was sent behind it (as an async server's handlers may answer)",
}

MODERN_VERSION = "2026-07-28"
LEGACY_VERSIONS = ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"]
LATEST_LEGACY = "2025-11-25"
BATCH_VERSION = "2025-03-26"  # the only revision with JSON-RPC batches
META_VERSION = "io.modelcontextprotocol/protocolVersion"
META_CAPS = "io.modelcontextprotocol/clientCapabilities"
SERVER_INFO = {"name": "clean", "version": "1.0"}
# How long the answer to a notification takes: the next frame may have gone out before it is written.
NOTIFICATION_REPLY_DELAY = 0.2
# How long an answer written out of order (answers-out-of-order) waits, on a thread of its own.
OUT_OF_ORDER_DELAY = 0.1
KNOWN_NOTIFICATIONS = {
    "notifications/initialized",
    "notifications/cancelled",
    "notifications/progress",
    "notifications/roots/list_changed",
}
PRE_INIT_ALLOWED = {"initialize", "ping", "server/discover"}
NUMERIC_STRING = re.compile(r"-?[0-9]+")
NOTES = {"welcome": "Hello from the clean server."}

TOOLS: list[dict[str, Any]] = [
    {
        "name": "echo",
        "description": "Return the given text.",
        "inputSchema": {
            "type": "object",
            "properties": {"text": {"type": "string"}},
            "required": ["text"],
            "additionalProperties": False,
        },
    },
    {
        "name": "add",
        "description": "Add two integers.",
        "inputSchema": {
            "type": "object",
            "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
            "required": ["a", "b"],
            "additionalProperties": False,
        },
        "outputSchema": {
            "type": "object",
            "properties": {"sum": {"type": "integer"}},
            "required": ["sum"],
        },
    },
    {
        "name": "get_note",
        "description": "Read a note by id ('welcome' exists).",
        "inputSchema": {
            "type": "object",
            "properties": {"id": {"type": "string"}},
            "required": ["id"],
            "additionalProperties": False,
        },
    },
]
PAGE_SIZE = 2
NEXT_CURSOR = "page-2"

Id = str | int | None


def log(text: str) -> None:
    """Write a diagnostic line to stderr (stdout is reserved for protocol messages)."""
    sys.stderr.write(f"{Path(sys.argv[0]).stem}: {text}\n")
    sys.stderr.flush()


def is_valid_id(value: Any) -> bool:
    """MCP ids are strings or integers; bool is an int subclass in Python but not in JSON."""
    return isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool))


class InvalidParams(Exception):
    """Raised by a method handler for params that break its protocol-level contract (-32602)."""


class RpcError(Exception):
    """Raised by a method handler to answer with this JSON-RPC error, code and message as given."""

    def __init__(self, code: int, message: str) -> None:
        """Keep the code and message for the error response."""
        super().__init__(message)
        self.code = code
        self.message = message


class NoReply(Exception):
    """Raised by a method handler to leave the request unanswered (for hang bugs of subclasses)."""


def lone_surrogate(value: Any) -> bool:
    """Whether a string anywhere in the value holds a surrogate code point (an escape no UTF-8 text can carry)."""
    if isinstance(value, str):
        return any("\ud800" <= char <= "\udfff" for char in value)
    if isinstance(value, dict):
        return any(lone_surrogate(k) or lone_surrogate(v) for k, v in value.items())
    if isinstance(value, list):
        return any(lone_surrogate(item) for item in value)
    return False


def reject_constant(name: str) -> Any:
    """Refuse NaN and Infinity, which Python's json accepts but JSON does not."""
    raise ValueError(f"invalid JSON constant {name}")


class Server:
    """State of one stdio session plus the set of enabled bugs."""

    TOOLS: list[dict[str, Any]] = TOOLS
    SERVER_INFO: dict[str, str] = SERVER_INFO
    BUGS: dict[str, str] = BUGS
    CAPABILITIES: dict[str, Any] = {"tools": {}}

    def __init__(self, bugs: set[str]) -> None:
        """Start uninitialised, with no negotiated legacy version."""
        self.bugs = bugs
        self.legacy_version: str | None = None
        self.first_message = True

    # ---- output -------------------------------------------------------------------------------

    def wire_id(self, rid: Id) -> Any:
        """The id as written back; the id bugs change it here, once for every response."""
        if "id-coerce" in self.bugs and isinstance(rid, str) and NUMERIC_STRING.fullmatch(rid):
            return int(rid)
        if "id-float" in self.bugs and isinstance(rid, int) and abs(rid) > 2**53:
            try:
                return float(rid)
            except OverflowError:
                return sys.float_info.max
        return rid

    def result(self, rid: Id, result: dict[str, Any]) -> list[dict[str, Any]]:
        """One success response."""
        return [{"jsonrpc": "2.0", "id": self.wire_id(rid), "result": result}]

    def error(self, rid: Id, code: int, message: str, data: Any = None) -> list[dict[str, Any]]:
        """One error response."""
        err: dict[str, Any] = {"code": code, "message": message}
        if data is not None:
            err["data"] = data
        return [{"jsonrpc": "2.0", "id": self.wire_id(rid), "error": err}]

    def parse_error(self, message: str) -> list[dict[str, Any]]:
        """Answer for bytes that are not a JSON value."""
        if "silent-parse" in self.bugs:
            return []
        code = -32603 if "parse-code" in self.bugs else -32700
        if "error-without-id" in self.bugs:
            return [{"jsonrpc": "2.0", "error": {"code": code, "message": message}}]
        return self.error(None, code, message)

    def invalid_request(self, rid: Id, message: str) -> list[dict[str, Any]]:
        """Answer for a parseable value that is not a valid request."""
        if "silent-invalid-request" in self.bugs:
            return []
        if "invalid-as-parse" in self.bugs:
            return self.error(rid, -32700, "parse error: invalid JSON-RPC message")
        code = -32603 if "invalid-request-code" in self.bugs else -32600
        return self.error(None if "id-null-invalid" in self.bugs else rid, code, message)

    def invalid_params(self, rid: Id, message: str) -> list[dict[str, Any]]:
        """Answer for params that break the method's protocol-level contract."""
        code = -32603 if "invalid-params-code" in self.bugs else -32602
        return self.error(rid, code, message)

    def method_not_found(self, rid: Id) -> list[dict[str, Any]]:
        """Answer for a method this server does not serve (in this era)."""
        code = -32600 if "method-not-found-code" in self.bugs else -32601
        reply = self.error(rid, code, "method not found")
        return reply * 2 if "double-reply" in self.bugs else reply

    # ---- input --------------------------------------------------------------------------------

    def handle_line(self, raw: bytes) -> list[Any]:
        """Turn one input line into the JSON values to write (possibly none)."""
        line = raw.rstrip(b"\n")
        if line.startswith(b"\xef\xbb\xbf"):
            line = line[3:]
        if not line.strip(b" \t\r"):  # JSON whitespace only: ignore, as blank lines carry nothing
            return []
        first, self.first_message = self.first_message, False
        try:
            text = line.decode("utf-8")
        except UnicodeDecodeError:
            return self.parse_error("parse error: invalid UTF-8")
        try:
            value = json.loads(text, parse_constant=reject_constant)
            if "error-without-id" in self.bugs and lone_surrogate(value):
                return self.parse_error("parse error: lone surrogate in a string escape")
            if "drop-deep" in self.bugs and nesting(value) > DROP_DEPTH:
                log("drop-deep: frame too deep, dropped")
                return []
            if "crash-deep" in self.bugs and nesting(value) > CRASH_DEPTH:
                raise RuntimeError("crash-deep: cannot handle a frame this deep")
        except RecursionError:
            return self.parse_error("parse error: nesting too deep")
        except ValueError:  # JSONDecodeError, NaN, and integers beyond the digit limit
            if "crash-parse-usage" in self.bugs:  # in the words of Go's encoding/json, as the Go SDK returns them
                usage = "".join(f"      --flag-{n} string   what flag {n} sets\n" for n in range(40))
                sys.stderr.write("Error: invalid character 'x' looking for beginning of value\nUsage:\n"
                                 f"  mcp_server [flags]\n\nFlags:\n{usage}")
                sys.stderr.flush()
                sys.exit(1)
            return self.parse_error("parse error: invalid JSON")
        if isinstance(value, list):
            if "crash-batch" in self.bugs:
                raise RuntimeError("crash-batch: cannot handle a JSON array")
            if not value:
                return self.invalid_request(None, "invalid request: empty batch")
            if self.legacy_version != BATCH_VERSION or "no-batches" in self.bugs:
                return self.invalid_request(None, "invalid request: batches are not supported")
            replies = [reply for item in value for reply in self.handle_message(item, first=False)]
            return [replies] if replies else []
        return self.handle_message(value, first=first)

    def handle_message(self, msg: Any, *, first: bool) -> list[dict[str, Any]]:
        """Validate the JSON-RPC envelope of one message, then dispatch it."""
        if not isinstance(msg, dict):
            return self.invalid_request(None, "invalid request: not an object")
        if "method" not in msg and ("result" in msg or "error" in msg):
            if self.bugs & {"answer-anything-without-id", "answer-responses-without-id"}:
                return [{"jsonrpc": "2.0", "result": None}]
            return []  # a response from the client; this server never sends requests, so drop it
        method = msg.get("method")
        if "id" not in msg:
            if msg.get("jsonrpc") == "2.0" and isinstance(method, str):
                return self.handle_notification(method)
            return self.invalid_request(None, "invalid request")
        rid = msg["id"]
        if "drop-big-id" in self.bugs and isinstance(rid, int) and abs(rid) > 2**53:
            log("drop-big-id: id too big, dropped")
            return []
        if not is_valid_id(rid):
            return self.invalid_request(None, "invalid request: id must be a string or an integer")
        if msg.get("jsonrpc") != "2.0":
            return self.invalid_request(rid, 'invalid request: jsonrpc must be "2.0"')
        if not isinstance(method, str):
            return self.invalid_request(rid, "invalid request: method must be a string")
        if "params" in msg and not isinstance(msg["params"], dict):
            if "invalid-as-parse" in self.bugs:
                return self.invalid_request(rid, "invalid request: params must be an object")
            return self.invalid_params(rid, "invalid params: params must be an object")
        try:
            return self.handle_request(rid, method, msg.get("params", {}), first=first)
        except InvalidParams as exc:
            return self.invalid_params(rid, f"invalid params: {exc}")
        except RpcError as exc:
            return self.error(rid, exc.code, exc.message)
        except NoReply:
            return []

    def handle_notification(self, method: str) -> list[dict[str, Any]]:
        """Notifications are never answered (cancellation has nothing in flight to stop)."""
        if "answer-notifications-without-id" in self.bugs:
            time.sleep(NOTIFICATION_REPLY_DELAY)  # a reply written a while later, as a server busy elsewhere writes it
            return [{"jsonrpc": "2.0", "result": None}]
        if "answer-anything-without-id" in self.bugs and method != "notifications/initialized":
            return [{"jsonrpc": "2.0", "result": None}]
        if "notify-reply" in self.bugs and method not in KNOWN_NOTIFICATIONS:
            return self.error(None, -32601, "method not found")
        return []

    def handle_request(self, rid: Id, method: str, params: dict[str, Any], *, first: bool) -> list[Any]:
        """Route a well-formed request to its era."""
        if "hang-method" in self.bugs and method == "resources/list":
            log("hang-method: dropping resources/list")
            return []
        meta = params.get("_meta")
        if "_meta" in params and not isinstance(meta, dict):
            raise InvalidParams("_meta must be an object")
        legacy_only = "legacy-only" in self.bugs or "crash-discover" in self.bugs
        if isinstance(meta, dict) and META_VERSION in meta and not legacy_only:
            return self.handle_modern(rid, method, params, meta)
        if "modern-only" in self.bugs:
            return self.error(rid, -32600, "invalid request: this server serves the modern era only")
        if method == "server/discover" and "crash-discover" in self.bugs and first:
            raise RuntimeError("crash-discover: server/discover before initialize")
        return self.handle_legacy(rid, method, params)

    # ---- modern era ---------------------------------------------------------------------------

    def handle_modern(self, rid: Id, method: str, params: dict[str, Any], meta: dict[str, Any]) -> list[Any]:
        """Stateless requests of the 2026-07-28 revision."""
        version = meta[META_VERSION]
        if not isinstance(version, str) or not isinstance(meta.get(META_CAPS), dict):
            raise InvalidParams("_meta needs a string protocol version and an object of client capabilities")
        if version != MODERN_VERSION:
            code = -32004 if "version-code" in self.bugs else -32022
            data = {"supported": [MODERN_VERSION], "requested": version}
            return self.error(rid, code, "unsupported protocol version", data)
        if method == "server/discover":
            result: dict[str, Any] = {
                "supportedVersions": [MODERN_VERSION],
                "capabilities": self.CAPABILITIES,
                "ttlMs": 0,
                "cacheScope": "private",
                "_meta": {"io.modelcontextprotocol/serverInfo": self.SERVER_INFO},
            }
        elif method == "tools/list":
            result = {**self.tools_list(params), "ttlMs": 0, "cacheScope": "private"}
        elif method == "tools/call":
            result = self.tools_call(params)
        else:  # ping and initialize are gone from this era
            other = self.serve_method(method, params, modern=True)
            if other is None:
                return self.method_not_found(rid)
            result = other
        if "no-result-type" not in self.bugs:
            result["resultType"] = "complete"
        return self.result(rid, result)

    # ---- legacy era ---------------------------------------------------------------------------

    def handle_legacy(self, rid: Id, method: str, params: dict[str, Any]) -> list[Any]:
        """Session requests of the 2024-11-05 .. 2025-11-25 revisions."""
        if method == "ping":
            return self.result(rid, {})
        if method == "server/discover":
            # A legacy client probing: any error makes it fall back to initialize. Kept free of the
            # method-not-found bugs so that they show up in the catalogue, not in era negotiation.
            return self.error(rid, -32601, "method not found")
        if method == "initialize":
            return self.initialize(rid, params)
        if self.legacy_version is None:
            if "crash-pre-init" in self.bugs:
                raise RuntimeError(f"crash-pre-init: {method} before initialize")
            return self.error(rid, -32600, "not initialized: send initialize first")
        if method == "tools/list":
            return self.result(rid, self.tools_list(params))
        if method == "tools/call":
            return self.result(rid, self.tools_call(params))
        other = self.serve_method(method, params, modern=False)
        return self.method_not_found(rid) if other is None else self.result(rid, other)

    def initialize(self, rid: Id, params: dict[str, Any]) -> list[Any]:
        """The legacy handshake; an unknown version is answered with our latest, not an error."""
        if self.legacy_version is not None:
            return self.error(rid, -32600, "invalid request: already initialized")
        requested = params.get("protocolVersion")
        if not isinstance(requested, str):
            raise InvalidParams("protocolVersion must be a string")
        known = requested in LEGACY_VERSIONS or "version-echo" in self.bugs
        self.legacy_version = requested if known else LATEST_LEGACY
        result: dict[str, Any] = {"protocolVersion": self.legacy_version, "capabilities": self.CAPABILITIES}
        if "bad-shape" not in self.bugs:
            result["serverInfo"] = self.SERVER_INFO
        return self.result(rid, result)

    def serve_method(self, method: str, params: dict[str, Any], *, modern: bool) -> dict[str, Any] | None:
        """A subclass's other methods (resources, prompts, ...): the result, or None for an unknown method."""
        return None

    # ---- tools (both eras) --------------------------------------------------------------------

    def tools_list(self, params: dict[str, Any]) -> dict[str, Any]:
        """Two pages: the first PAGE_SIZE tools with a cursor, then the rest."""
        cursor = params.get("cursor")
        if cursor is None:  # absent, or null from a lenient client: the first page
            tools, next_cursor = self.TOOLS[:PAGE_SIZE], NEXT_CURSOR
        elif cursor == NEXT_CURSOR:
            tools, next_cursor = self.TOOLS[PAGE_SIZE:], None
        else:
            raise InvalidParams("unknown cursor")
        if "bad-shape" in self.bugs:
            tools = [{k: v for k, v in tool.items() if k != "inputSchema"} for tool in tools]
        result: dict[str, Any] = {"tools": tools}
        if next_cursor is not None:
            result["nextCursor"] = next_cursor
        if "stdout-noise" in self.bugs:
            sys.stdout.buffer.write(b"INFO handling request\n")  # the misbehaviour: a log line on stdout
        return result

    def tools_call(self, params: dict[str, Any]) -> dict[str, Any]:
        """Protocol errors are -32602; bad arguments are an isError result the model can read."""
        name = params.get("name")
        if not isinstance(name, str):
            raise InvalidParams("name must be a string")
        if not any(t["name"] == name for t in self.TOOLS):
            if "unknown-tool-32601" in self.bugs:
                raise RpcError(-32601, "unknown tool")
            if "unknown-tool-is-error" in self.bugs:
                return tool_error("unknown tool")
            raise InvalidParams("unknown tool")  # fixed text: never echo input that may look like a path
        arguments = params.get("arguments", {})
        if not isinstance(arguments, dict):
            raise InvalidParams("arguments must be an object")
        return self.call_tool(name, arguments)

    def call_tool(self, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        """Run a listed tool; may raise InvalidParams, RpcError or NoReply (or crash, for a bug)."""
        tool = next(t for t in self.TOOLS if t["name"] == name)
        problem = check_arguments(tool["inputSchema"], arguments)
        if problem is not None:
            return tool_error(f"invalid arguments: {problem}")
        if name == "echo":
            return {"content": [text_item(arguments["text"])], "isError": False}
        if name == "add":
            total = int(arguments["a"]) + int(arguments["b"])
            return {"content": [text_item(str(total))], "structuredContent": {"sum": total}, "isError": False}
        note = NOTES.get(arguments["id"])
        if note is None:
            return tool_error("note not found")  # a domain error, not a protocol one
        return {"content": [text_item(note)], "isError": False}


DROP_DEPTH = 200
CRASH_DEPTH = 100


class RemembersCancels(Server):
    """A server that notes the request ids a `notifications/cancelled` names, so their answers can be dropped."""

    def __init__(self, bugs: set[str]) -> None:
        super().__init__(bugs)
        self.cancelled: set[Any] = set()

    def handle_message(self, msg: Any, *, first: bool) -> list[dict[str, Any]]:
        """A cancel marks its request and is never answered; the rest as the base server."""
        if isinstance(msg, dict) and msg.get("method") == "notifications/cancelled" and "id" not in msg:
            params = msg.get("params") if isinstance(msg.get("params"), dict) else {}
            if isinstance(params.get("requestId"), int | str):
                self.cancelled.add(params["requestId"])
            return []
        return super().handle_message(msg, first=first)


def nesting(value: Any) -> int:
    """How deep objects and arrays nest in a decoded value."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        node, level = stack.pop()
        if isinstance(node, dict | list):
            deepest = max(deepest, level)
            stack.extend((child, level + 1) for child in (node.values() if isinstance(node, dict) else node))
    return deepest


def text_item(text: str) -> dict[str, str]:
    """A text content item."""
    return {"type": "text", "text": text}


def tool_error(message: str) -> dict[str, Any]:
    """A tool result that reports failure to the model."""
    return {"content": [text_item(message)], "isError": True}


def check_arguments(schema: dict[str, Any], arguments: dict[str, Any]) -> str | None:
    """Check the flat schemas above; messages name only our own properties, never echo input."""
    properties: dict[str, Any] = schema["properties"]
    for key in schema["required"]:
        if key not in arguments:
            return f"missing required property '{key}'"
    if any(key not in properties for key in arguments):
        return "unexpected property (additionalProperties is false)"
    for key, value in arguments.items():
        expected = properties[key]["type"]
        if expected == "string" and not isinstance(value, str):
            return f"property '{key}' must be a string"
        if expected == "integer" and not is_integer(value):
            return f"property '{key}' must be an integer"
    return None


def is_integer(value: Any) -> bool:
    """JSON Schema integers include 1.0 (2020-12 compares values), but not true or 1.5."""
    if isinstance(value, bool):
        return False
    return isinstance(value, int) or (isinstance(value, float) and value.is_integer())


WRITING = threading.Lock()  # answers written out of order come from another thread


def write(values: list[Any]) -> None:
    """One compact JSON line per value; ASCII escapes keep lone surrogates writable."""
    out = sys.stdout.buffer
    with WRITING:
        for value in values:
            out.write(json.dumps(value, separators=(",", ":")).encode("ascii") + b"\n")
        out.flush()


def write_later(values: list[Any]) -> None:
    """Write the answers a moment later, from another thread, after whatever is answered meanwhile."""
    def late() -> None:
        time.sleep(OUT_OF_ORDER_DELAY)
        with contextlib.suppress(BrokenPipeError):
            write(values)

    threading.Thread(target=late, daemon=True).start()


def main(argv: list[str] | None = None, server_class: type[Server] = Server) -> int:
    """Serve stdin until EOF."""
    parser = argparse.ArgumentParser(description="MCP test server over stdio, correct unless --bug is given.")
    parser.add_argument("--bug", action="append", default=[], choices=sorted(server_class.BUGS), help="turn one bug on")
    args = parser.parse_args(argv)
    # Ids and arguments may be big integers; allow them well past Python's 4300-digit default, but
    # keep a cap because str<->int conversion is quadratic (RFC 8259 lets parsers limit numbers).
    if hasattr(sys, "set_int_max_str_digits"):
        sys.set_int_max_str_digits(100_000)
    server = server_class(set(args.bug))
    log(f"ready, bugs={sorted(server.bugs) or 'none'}")
    try:
        for raw in iter(sys.stdin.buffer.readline, b""):
            if "answers-out-of-order" in server.bugs and b'"tools/list"' in raw:
                write_later(server.handle_line(raw))
            else:
                write(server.handle_line(raw))
    except BrokenPipeError:
        return 0  # the client went away; nothing left to answer
    return 0


if __name__ == "__main__":
    sys.exit(main())
