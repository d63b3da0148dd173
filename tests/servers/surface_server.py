"""MCP server over stdio with resources, a resource template, prompts and completions; one bug per ``--bug``.

Usage: ``python tests/servers/surface_server.py [--bug NAME]...``

Built on ``mcp_server.Server`` (both eras, its tools and its catalogue behaviour). Without ``--bug``
it gives zero findings in both eras. Resources: ``mem://notes/welcome`` and ``mem://notes/readme``
(resources/list in two pages); template ``mem://by-title/{title}``; prompt ``summarize`` (``topic``
required, ``style`` optional) and ``greet`` (no arguments); completions for both; ``logging/setLevel`` in
the legacy era.
"""

from __future__ import annotations

import argparse
import os
import sys
import threading
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))

from mcp_server import BUGS as BASE_BUGS  # noqa: E402
from mcp_server import (  # noqa: E402
    META_VERSION,
    MODERN_VERSION,
    InvalidParams,
    RpcError,
    Server,
    check_arguments,
    main,
    text_item,
    tool_error,
    write,
)
from mcp_server import TOOLS as BASE_TOOLS  # noqa: E402

IGNORED_AFTER = 1.5  # seconds after its cancel a cancel-ignored list request is answered: clearly after the probe
SURFACE_BUGS = {
    "list-refused": "declares prompts, but prompts/list answers -32601",
    "cursor-loop": "resources/list hands out the same cursor for ever",
    "unreadable-listed": "mem://notes/readme is listed but reading it answers -32002",
    "not-found-code": "a URI that does not exist is answered with -32603 instead of the era's not-found code",
    "template-crash": "reading the template with an empty title kills the process",
    "prompt-missing-arg": "prompts/get without the required `topic` answers -32603 instead of -32602",
    "completion-overflow": "completion/complete returns 150 values (at most 100 are allowed)",
    "subscribe-refused": "declares resources.subscribe, but resources/subscribe answers -32601",
    "log-level-code": "logging/setLevel with an unknown level answers -32603 instead of -32602",
    "swap-reads": "a read right after another read gets the earlier read's answer (a shared buffer)",
    "late-progress": "not a bug: a request with a progressToken is answered after the next request, unless "
                     "cancelled first",
    "cancel-ignored": "late-progress, but a list request waits for its cancel and is answered anyway, "
                      f"{IGNORED_AFTER}s later",
    "crash-linked": "reading a URI that archive_note linked to (mem://archive/N) kills the process",
    "swap-at-once": "tool calls that arrive in one read get each other's results (rotated)",
    "reverse-at-once": "not a bug: requests that arrive in one read are answered in reverse order",
    "listen-cancel-crash": "cancelling an open subscriptions/listen kills the process",
    "listen-refused": "declares resources.subscribe, but subscriptions/listen answers -32601",
}
ARCHIVE = "mem://archive/"
# A tool whose result links to a resource (a `resource_link`): sequences read what it links to.
ARCHIVE_TOOL = {
    "name": "archive_note", "description": "Archive a note; the result links to its archived copy.",
    "inputSchema": {"type": "object", "properties": {"id": {"type": "string"}}, "required": ["id"],
                    "additionalProperties": False},
}
# Tools annotated read-only: a concurrency case calls them at once.
READ_ONLY_TOOLS = [
    {"name": "count_notes", "description": "How many notes there are.", "annotations": {"readOnlyHint": True},
     "inputSchema": {"type": "object", "properties": {}, "required": [], "additionalProperties": False}},
    {"name": "find_notes", "description": "The notes whose key starts with a prefix.",
     "annotations": {"readOnlyHint": True},
     "inputSchema": {"type": "object", "properties": {"prefix": {"type": "string"}}, "required": ["prefix"],
                     "additionalProperties": False}},
]
NOTES = {"welcome": "Hello.", "readme": "Read me first."}
RESOURCES = [{"uri": f"mem://notes/{key}", "name": key, "mimeType": "text/plain"} for key in NOTES]
TEMPLATE = "mem://by-title/{title}"
PROMPTS = [
    {"name": "summarize", "description": "Summarize the notes on a topic.",
     "arguments": [{"name": "topic", "required": True}, {"name": "style", "required": False}]},
    {"name": "greet", "description": "A greeting."},
]
STYLES = ["brief", "detailed", "bullet points"]
LEVELS = ["debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"]


class SurfaceServer(Server):
    """Resources, a template, prompts and completions on top of the base server."""

    BUGS = {**BASE_BUGS, **SURFACE_BUGS}
    TOOLS = [*BASE_TOOLS, ARCHIVE_TOOL, *READ_ONLY_TOOLS]
    CAPABILITIES = {"tools": {}, "resources": {"subscribe": True}, "prompts": {}, "completions": {}, "logging": {}}

    def __init__(self, bugs: set[str]) -> None:
        """The base server's state, and the answers of requests still "in the background"."""
        super().__init__(bugs)
        self.archive: list[str] = []
        self.modern = False
        self.background = bool({"late-progress", "cancel-ignored"} & bugs)
        self.queued: list[tuple[Any, list[Any]]] = []
        self.last_method = ""
        self.last_read: dict[str, Any] | None = None
        self.tool_calls: set[Any] = set()  # ids of the tools/call requests of the current read
        self.listening: set[Any] = set()  # ids of the open subscriptions/listen requests
        self.cancelled_now: set[Any] = set()  # ids cancelled in the current read

    def handle_line(self, raw: bytes) -> list[Any]:
        """Background answers go out right after the next answer: work done while that request ran."""
        out = super().handle_line(raw)
        held = [(rid, replies) for rid, replies in self.queued if self.holds(replies)]
        if out and len(held) < len(self.queued):
            out += [reply for rid, replies in self.queued if (rid, replies) not in held for reply in replies]
            self.queued = held
        return out

    def holds(self, replies: list[Any]) -> bool:
        """cancel-ignored: a list answer waits for its cancel (then comes anyway, clearly after the probe)."""
        return "cancel-ignored" in self.bugs and any(isinstance(r, dict) and "tools" in r.get("result", {})
                                                     for r in replies)

    def handle_message(self, msg: Any, *, first: bool) -> list[Any]:
        """A cancel drops the cancelled request's background answer (unless the cancel-ignored bug is on), or
        ends an open subscriptions/listen (with no answer: the client ended it)."""
        if isinstance(msg, dict) and msg.get("method") == "notifications/cancelled" and "id" not in msg \
                and isinstance(msg.get("params"), dict):
            cancelled = msg["params"].get("requestId")
            self.cancelled_now.add(cancelled)
            if cancelled in self.listening:
                if "listen-cancel-crash" in self.bugs:
                    raise SystemExit("listen-cancel-crash: a subscription ended by the client")
                self.listening.discard(cancelled)
            ignored = [replies for rid, replies in self.queued if rid == cancelled and self.holds(replies)]
            self.queued = [(rid, replies) for rid, replies in self.queued if rid != cancelled]
            for replies in ignored:
                threading.Timer(IGNORED_AFTER, write, [replies]).start()
        return super().handle_message(msg, first=first)

    def handle_modern(self, rid: Any, method: str, params: dict[str, Any], meta: dict[str, Any]) -> list[Any]:
        """subscriptions/listen (2026-07-28): acknowledged at once, answered only when the subscription ends."""
        if method != "subscriptions/listen" or meta.get(META_VERSION) != MODERN_VERSION:
            return super().handle_modern(rid, method, params, meta)
        if "listen-refused" in self.bugs:
            return self.method_not_found(rid)
        wanted = params.get("notifications")
        if not isinstance(wanted, dict):
            raise InvalidParams("notifications must be an object")
        self.listening.add(rid)
        agreed = {key: wanted[key] for key in ("resourceSubscriptions", "resourcesListChanged") if key in wanted}
        return [{"jsonrpc": "2.0", "method": "notifications/subscriptions/acknowledged",
                 "params": {"notifications": agreed, "_meta": {"io.modelcontextprotocol/subscriptionId": rid}}}]

    def handle_request(self, rid: Any, method: str, params: dict[str, Any], *, first: bool) -> list[Any]:
        """In the background modes, a request carrying a progressToken is answered later."""
        try:
            replies = super().handle_request(rid, method, params, first=first)
        finally:
            self.last_method = method
            if method == "tools/call":
                self.tool_calls.add(rid)
        meta = params.get("_meta")
        if self.background and replies and isinstance(meta, dict) and "progressToken" in meta:
            self.queued.append((rid, replies))
            return []
        return replies

    def serve_method(self, method: str, params: dict[str, Any], *, modern: bool) -> dict[str, Any] | None:
        """Route the surface methods; cacheable results carry the 2026-07-28 cache hints."""
        handlers = {"resources/list": self.resources_list, "resources/templates/list": self.templates_list,
                    "resources/read": self.read, "prompts/list": self.prompts_list, "prompts/get": self.get_prompt,
                    "completion/complete": self.complete}
        if not modern:  # gone from 2026-07-28
            handlers.update({"logging/setLevel": self.set_level, "resources/subscribe": self.subscribe,
                             "resources/unsubscribe": self.subscribe})
        handler = handlers.get(method)
        if handler is None:
            return None
        self.modern = modern
        result = handler(params)
        if modern and method not in ("prompts/get", "completion/complete"):
            result.update(ttlMs=0, cacheScope="private")
        return result

    def subscribe(self, params: dict[str, Any]) -> dict[str, Any]:
        """Subscriptions change nothing here (no resource ever changes)."""
        if not isinstance(params.get("uri"), str):
            raise InvalidParams("uri must be a string")
        if "subscribe-refused" in self.bugs:
            raise RpcError(-32601, "method not found")
        return {}

    def set_level(self, params: dict[str, Any]) -> dict[str, Any]:
        """Accept the RFC 5424 levels (this server sends no log messages)."""
        if params.get("level") not in LEVELS:
            if "log-level-code" in self.bugs:
                raise RpcError(-32603, "internal error")
            raise InvalidParams("unknown level")
        return {}

    def not_found(self) -> RpcError:
        """The era's resource-not-found error (SEP-2164 moved it to -32602 in 2026-07-28)."""
        if "not-found-code" in self.bugs:
            return RpcError(-32603, "internal error")
        return RpcError(-32602 if self.modern else -32002, "resource not found")

    def resources_list(self, params: dict[str, Any]) -> dict[str, Any]:
        """Two pages of one resource each."""
        cursor = params.get("cursor")
        if "cursor-loop" in self.bugs:
            return {"resources": RESOURCES[:1], "nextCursor": "again"}
        if cursor is None:
            return {"resources": RESOURCES[:1], "nextCursor": "2"}
        if cursor == "2":
            return {"resources": RESOURCES[1:]}
        raise InvalidParams("unknown cursor")

    def templates_list(self, params: dict[str, Any]) -> dict[str, Any]:
        """One template."""
        return {"resourceTemplates": [{"uriTemplate": TEMPLATE, "name": "note by title"}]}

    def call_tool(self, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        """archive_note links to the archived copy; the base server's tools as they are."""
        read_only = next((tool for tool in READ_ONLY_TOOLS if tool["name"] == name), None)
        problem = check_arguments(read_only["inputSchema"], arguments) if read_only is not None else None
        if problem is not None:
            return tool_error(f"invalid arguments: {problem}")
        if name == "count_notes":
            return {"content": [text_item(f"{len(NOTES)} notes")], "isError": False}
        if name == "find_notes":
            found = [key for key in NOTES if key.startswith(arguments["prefix"])]
            return {"content": [text_item(", ".join(found) or "no note")], "isError": False}
        if name != ARCHIVE_TOOL["name"]:
            return super().call_tool(name, arguments)
        problem = check_arguments(ARCHIVE_TOOL["inputSchema"], arguments)
        if problem is not None:
            return tool_error(f"invalid arguments: {problem}")
        self.archive.append(str(arguments["id"])[:100])
        uri = f"{ARCHIVE}{len(self.archive)}"
        return {"content": [text_item("archived"), {"type": "resource_link", "uri": uri, "name": "archived note"}],
                "isError": False}

    def read(self, params: dict[str, Any]) -> dict[str, Any]:
        """A listed note, or a note by title through the template."""
        uri = params.get("uri")
        if not isinstance(uri, str):
            raise InvalidParams("uri must be a string")
        key = None
        if uri.startswith(ARCHIVE):
            if "crash-linked" in self.bugs:
                raise SystemExit("crash-linked: reading an archived note")
            number = uri.removeprefix(ARCHIVE)
            if not number.isdigit() or int(number) > len(self.archive):
                raise self.not_found()
            return {"contents": [{"uri": uri, "mimeType": "text/plain", "text": self.archive[int(number) - 1]}]}
        if uri.startswith("mem://notes/"):
            key = uri.removeprefix("mem://notes/")
            if key == "readme" and "unreadable-listed" in self.bugs:
                raise RpcError(-32002, "resource not found")
        elif uri.startswith("mem://by-title/"):
            key = uri.removeprefix("mem://by-title/")
            if key == "" and "template-crash" in self.bugs:
                raise SystemExit("template-crash: empty title")
        if key not in NOTES:
            raise self.not_found()
        if "swap-reads" in self.bugs and self.last_method == "resources/read" and self.last_read is not None:
            return self.last_read
        self.last_read = {"contents": [{"uri": uri, "mimeType": "text/plain", "text": NOTES[key]}]}
        return dict(self.last_read)

    def prompts_list(self, params: dict[str, Any]) -> dict[str, Any]:
        """Both prompts on one page."""
        if "list-refused" in self.bugs:
            raise RpcError(-32601, "method not found")
        return {"prompts": PROMPTS}

    def get_prompt(self, params: dict[str, Any]) -> dict[str, Any]:
        """A listed prompt with string arguments; a missing required one is -32602."""
        name = params.get("name")
        prompt = next((p for p in PROMPTS if p["name"] == name), None)
        if prompt is None:
            raise InvalidParams("unknown prompt")
        arguments = params.get("arguments") or {}
        if not isinstance(arguments, dict) or not all(isinstance(v, str) for v in arguments.values()):
            raise InvalidParams("arguments must be an object of strings")
        for argument in prompt.get("arguments", []):
            if argument["required"] and argument["name"] not in arguments:
                if "prompt-missing-arg" in self.bugs:
                    raise RpcError(-32603, "internal error")
                raise InvalidParams("missing required argument")
        text = f"Summarize the notes on {arguments.get('topic', '')}" if name == "summarize" else "Hello!"
        return {"messages": [{"role": "user", "content": {"type": "text", "text": text}}]}

    def complete(self, params: dict[str, Any]) -> dict[str, Any]:
        """Completions for `style` and for a note title; nothing for other arguments."""
        ref, argument = params.get("ref"), params.get("argument")
        if not isinstance(ref, dict) or not isinstance(argument, dict) or not isinstance(argument.get("name"), str) \
                or not isinstance(argument.get("value"), str):
            raise InvalidParams("ref and argument {name, value} are required")
        if ref.get("type") == "ref/prompt" and not any(p["name"] == ref.get("name") for p in PROMPTS):
            raise InvalidParams("unknown prompt")
        if ref.get("type") == "ref/resource" and ref.get("uri") != TEMPLATE:
            raise InvalidParams("unknown resource template")
        choices = {"style": STYLES, "title": list(NOTES)}.get(argument["name"], [])
        values = [c for c in choices if c.startswith(argument["value"])]
        if "completion-overflow" in self.bugs:
            values = [f"v{n}" for n in range(150)]
        return {"completion": {"values": values, "total": len(values), "hasMore": False}}


    def handle_chunk(self, lines: list[bytes]) -> list[Any]:
        """The lines of one read from stdin: requests that arrived together (the at-once modes act on them)."""
        self.tool_calls, self.cancelled_now = set(), set()
        out = [reply for line in lines for reply in self.handle_line(line)]
        if "swap-at-once" in self.bugs:
            mine = [i for i, reply in enumerate(out) if isinstance(reply, dict) and "result" in reply
                    and reply.get("id") in self.tool_calls]
            results = [out[i]["result"] for i in mine]
            for i, result in zip(mine, results[-1:] + results[:-1], strict=True):
                out[i] = {**out[i], "result": result}
        if "reverse-at-once" in self.bugs:
            # Answered later than the requests after them: a cancel read meanwhile drops the answer.
            out = [reply for reply in out[::-1] if not (isinstance(reply, dict) and "method" not in reply
                                                        and reply.get("id") in self.cancelled_now)]
        return out


def serve_chunks(argv: list[str] | None = None) -> int:
    """Serve stdin read by read (not line by line), so the lines of one write are handled as one group."""
    parser = argparse.ArgumentParser(description="MCP surface test server over stdio.")
    parser.add_argument("--bug", action="append", default=[], choices=sorted(SurfaceServer.BUGS))
    server = SurfaceServer(set(parser.parse_args(argv).bug))
    pending = b""
    try:
        while chunk := os.read(0, 1 << 20):
            *lines, pending = (pending + chunk).split(b"\n")
            write(server.handle_chunk([line + b"\n" for line in lines]))
    except BrokenPipeError:
        return 0
    return 0


if __name__ == "__main__":
    at_once = {"swap-at-once", "reverse-at-once"} & set(sys.argv)
    sys.exit(serve_chunks() if at_once else main(server_class=SurfaceServer))
