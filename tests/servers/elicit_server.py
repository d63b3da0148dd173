"""MCP server with a tool, a prompt and a resource that ask the client for input: the tool by elicitation in the
legacy era, all three by a multi round-trip request (`input_required`) in 2026-07-28.

Usage: ``python tests/servers/elicit_server.py [--answer-delay SECONDS] [--bug NAME]...``

``greet`` (no arguments) asks for a ``name`` and answers ``GREETING, NAME``. Legacy: an ``elicitation/create``
request, sent only when the client declared elicitation; the call is answered when the client's answer comes, pings
meanwhile answered; a decline, cancel or malformed answer is a tool error (for the prompt and the card, -32602).
2026-07-28: ``input_required`` with the
request under the key ``name`` and a ``requestState`` holding the greeting, signed with an HMAC; a retry whose state
fails the check is refused (-32602); a client that declared no elicitation gets -32021. The prompt ``introduce``
(no arguments) and the resource ``greeting://card`` ask the same way in both eras (legacy: without elicitation
declared they answer with the name ``friend``): the prompt's message and the card's text are the greeting and the
name.
Bugs: ``trusts-answer`` reads the answer's ``content.name`` unchecked (a decline or a number crashes it);
``blocks-on-answer`` reads nothing else until the answer comes (no answer: it stops answering pings);
``drops-on-error`` never answers a call whose elicitation got an error instead of a result; ``unsigned-state``
trusts an unsigned state; ``ignores-capabilities`` asks for input the client did not declare;
``crashes-without-responses`` exits on a retry that carries a requestState but no inputResponses.
Without a bug it gives no finding. ``--answer-delay`` is no bug: a call whose elicitation was accepted (legacy) with
a name of up to 100 characters is answered that many seconds later, from a thread, pings meanwhile answered (a slow
tool; the thread does not stop on notifications/cancelled).
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import sys
import threading
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from mcp_server import (  # noqa: E402
    META_CAPS,
    InvalidParams,
    RpcError,
    Server,
    log,
    main,
    text_item,
    tool_error,
    write,
)

TOOLS: list[dict[str, Any]] = [
    {"name": "greet", "description": "Greet the user by the name they give.",
     "inputSchema": {"type": "object", "properties": {}, "required": [], "additionalProperties": False}},
]
ASK = {"message": "What is your name?", "requestedSchema": {
    "type": "object", "properties": {"name": {"type": "string", "minLength": 1}}, "required": ["name"]}}
KEY = b"elicit-server-test-key"
ANSWER_DELAY = 0.0  # --answer-delay: seconds before an accepted elicitation's call is answered
MISSING_CAPABILITY = -32021
PROMPT = {"name": "introduce", "description": "A message introducing the user by the name they give."}
CARD = {"uri": "greeting://card", "name": "card", "description": "A greeting card for the user by the name they give.",
        "mimeType": "text/plain"}


def _sign(payload: bytes) -> str:
    return hmac.new(KEY, payload, hashlib.sha256).hexdigest()[:16]


class ElicitServer(Server):
    """`greet` asks for a name in the era's way."""

    TOOLS = TOOLS
    SERVER_INFO = {"name": "elicit", "version": "1.0"}
    CAPABILITIES = {"tools": {}, "prompts": {}, "resources": {}}
    BUGS = {"trusts-answer": "the elicitation answer's content.name is read unchecked",
            "blocks-on-answer": "nothing else is read until the elicitation answer comes",
            "unsigned-state": "requestState is trusted without an integrity check",
            "ignores-capabilities": "asks for elicitation whatever the client declared",
            "drops-on-error": "an error instead of an elicitation result leaves the call unanswered",
            "crashes-without-responses": "a retry with a requestState and no inputResponses crashes the server"}

    def __init__(self, bugs: set[str]) -> None:
        super().__init__(bugs)
        self.client_capabilities: dict[str, Any] = {}
        self.pending: dict[str, tuple[Any, str]] = {}  # our request id -> the asking request's id and method
        self.next_request = 0

    def initialize(self, rid: Any, params: dict[str, Any]) -> list[Any]:
        capabilities = params.get("capabilities")
        self.client_capabilities = capabilities if isinstance(capabilities, dict) else {}
        return super().initialize(rid, params)

    def handle_message(self, msg: Any, *, first: bool) -> list[dict[str, Any]]:
        # Our requests' ids are strings: any other id (an object, a list) is no answer of ours, and unhashable.
        if isinstance(msg, dict) and "method" not in msg and isinstance(msg.get("id"), str) \
                and msg["id"] in self.pending:
            return self.finish(*self.pending.pop(msg["id"]), msg)
        return super().handle_message(msg, first=first)

    def asks(self, method: str, params: dict[str, Any]) -> bool:
        """A greet call with its (empty) arguments right (the base class judges any other arguments), a get of the
        prompt without arguments, or a read of the card."""
        if method == "tools/call":
            return params.get("name") == "greet" and params.get("arguments", {}) == {}
        if method == "prompts/get":
            return params.get("name") == PROMPT["name"] and params.get("arguments") in ({}, None)
        return method == "resources/read" and params.get("uri") == CARD["uri"]

    def serve_method(self, method: str, params: dict[str, Any], *, modern: bool) -> dict[str, Any] | None:
        """The prompt and the resource: listed, and served without asking (a request that asks is not routed here)."""
        hints = {"ttlMs": 0, "cacheScope": "private"} if modern else {}
        if method == "prompts/list":
            return {"prompts": [PROMPT], **hints}
        if method == "resources/list":
            return {"resources": [CARD], **hints}
        if method == "resources/templates/list":
            return {"resourceTemplates": [], **hints}
        if method == "prompts/get":
            if params.get("name") != PROMPT["name"]:
                raise InvalidParams("unknown prompt")
            if params.get("arguments") not in ({}, None):
                raise InvalidParams("introduce takes no arguments")
            return self.completed(method, "Hello", "friend")
        if method == "resources/read":
            if params.get("uri") != CARD["uri"]:
                raise RpcError(-32602 if modern else -32002, "resource not found")
            return {**self.completed(method, "Hello", "friend"), **hints}
        return None

    def completed(self, method: str, greeting: str, name: str) -> dict[str, Any]:
        """The final result of an asking request once the name is known."""
        text = f"{greeting}, {name[:100]}"
        if method == "prompts/get":
            return {"messages": [{"role": "user", "content": text_item(text)}]}
        if method == "resources/read":
            return {"contents": [{"uri": CARD["uri"], "mimeType": "text/plain", "text": text}]}
        return {"content": [text_item(text)], "isError": False}

    def handle_legacy(self, rid: Any, method: str, params: dict[str, Any]) -> list[Any]:
        if not self.asks(method, params) or self.legacy_version is None:
            return super().handle_legacy(rid, method, params)
        if "elicitation" not in self.client_capabilities and "ignores-capabilities" not in self.bugs:
            if method != "tools/call":  # the prompt and the card do without a name
                return super().handle_legacy(rid, method, params)
            return self.result(rid, tool_error("this tool needs a client that supports elicitation"))
        self.next_request += 1
        ask_id = f"elicit-{self.next_request}"
        request = {"jsonrpc": "2.0", "id": ask_id, "method": "elicitation/create", "params": ASK}
        if "blocks-on-answer" in self.bugs:
            write([request])
            for raw in iter(sys.stdin.buffer.readline, b""):
                try:
                    answer = json.loads(raw)
                except ValueError:
                    continue
                if isinstance(answer, dict) and answer.get("id") == ask_id and "method" not in answer:
                    return self.finish(rid, method, answer)
                log("blocks-on-answer: a line dropped while waiting")
            return []
        self.pending[ask_id] = (rid, method)
        return [request]

    def finish(self, rid: Any, method: str, answer: dict[str, Any]) -> list[dict[str, Any]]:
        """The asking request's answer, once the client's answer to our request is in."""
        result = answer.get("result")
        if "drops-on-error" in self.bugs and "error" in answer:
            log("drops-on-error: the client's error is not handled")
            return []
        if "trusts-answer" in self.bugs:
            name = result["content"]["name"].strip()  # a decline has no content; a number has no strip
            return self.result(rid, self.completed(method, "Hello", name))
        content = result.get("content") if isinstance(result, dict) and result.get("action") == "accept" else None
        name = content.get("name") if isinstance(content, dict) else None
        if not isinstance(name, str) or not name:
            if method != "tools/call":
                return self.invalid_params(rid, "no name was given")
            return self.result(rid, tool_error("no name was given"))
        if ANSWER_DELAY and len(name) <= 100:
            answer = self.result(rid, self.completed(method, "Hello", name))
            answer_later = threading.Timer(ANSWER_DELAY, write, [answer])
            answer_later.daemon = True
            answer_later.start()
            return []
        return self.result(rid, self.completed(method, "Hello", name))

    def handle_modern(self, rid: Any, method: str, params: dict[str, Any], meta: dict[str, Any]) -> list[Any]:
        if not self.asks(method, params):
            return super().handle_modern(rid, method, params, meta)
        declared = meta.get(META_CAPS)
        if not (isinstance(declared, dict) and "elicitation" in declared) and "ignores-capabilities" not in self.bugs:
            return self.error(rid, MISSING_CAPABILITY, "this request needs the elicitation capability",
                              {"requiredCapabilities": {"elicitation": {}}})
        responses, state = params.get("inputResponses"), params.get("requestState")
        if "crashes-without-responses" in self.bugs and state is not None and responses is None:
            raise RuntimeError(f"crashes-without-responses: a {method} retry without inputResponses")
        if state is None or not isinstance(responses, dict) or "name" not in responses:
            payload = json.dumps({"greeting": "Hello"}, separators=(",", ":")).encode()
            token = base64.urlsafe_b64encode(payload).decode().rstrip("=")
            if "unsigned-state" not in self.bugs:
                token += "." + _sign(payload)
            return self.result(rid, {"resultType": "input_required", "requestState": token,
                                     "inputRequests": {"name": {"method": "elicitation/create", "params": ASK}}})
        greeting = self.read_state(state)
        answer = responses["name"]
        content = answer.get("content") if isinstance(answer, dict) and answer.get("action") == "accept" else None
        name = content.get("name") if isinstance(content, dict) else None
        if not isinstance(name, str) or not name:
            if method != "tools/call":
                raise InvalidParams("no name was given")
            return self.result(rid, {**tool_error("no name was given"), "resultType": "complete"})
        hints = {"ttlMs": 0, "cacheScope": "private"} if method == "resources/read" else {}
        return self.result(rid, {**self.completed(method, greeting, name), **hints, "resultType": "complete"})

    def read_state(self, state: Any) -> str:
        """The greeting a requestState holds; -32602 when it is not one this server wrote."""
        if not isinstance(state, str):
            raise RpcError(-32602, "invalid requestState")
        body, _, signature = state.partition(".")
        try:
            payload = base64.urlsafe_b64decode(body + "=" * (-len(body) % 4))
            greeting = json.loads(payload)["greeting"]
        except (ValueError, KeyError, TypeError):
            raise RpcError(-32602, "invalid requestState") from None
        if "unsigned-state" not in self.bugs and not hmac.compare_digest(signature, _sign(payload)):
            raise RpcError(-32602, "invalid requestState")
        if not isinstance(greeting, str):
            raise RpcError(-32602, "invalid requestState")
        return greeting[:40]


if __name__ == "__main__":
    if "--answer-delay" in sys.argv:
        at = sys.argv.index("--answer-delay")
        ANSWER_DELAY = float(sys.argv[at + 1])
        del sys.argv[at:at + 2]
    sys.exit(main(server_class=ElicitServer))
