"""Sequence rules: what the server does with the handshake, a liveness request and an unknown method."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from mcpfuzz.lint.declarations import short
from mcpfuzz.lint.model import Category, Declared, Found, LintSeverity
from mcpfuzz.lint.registry import rule

Q, ERROR, WARNING, INFO = Category.SEQUENCE, LintSeverity.ERROR, LintSeverity.WARNING, LintSeverity.INFO


@rule("SEQ-001", "liveness", Q, ERROR, covered_by="no-hang")
def liveness(declared: Declared) -> Iterator[Found]:
    """The server answers the era's cheapest request: `ping` (legacy) or `server/discover` (2026-07-28)."""
    if not declared.handshake_answered:
        return
    reply = declared.liveness_reply
    method = declared.liveness_method
    if reply is None:
        yield Found(method, f"{method} got no answer", f"answer {method} (with {{}} for ping): clients use it to "
                    "tell a live server from a stuck one")
    elif isinstance(reply, dict) and "result" not in reply:
        yield Found(method, f"{method} was refused: {short(reply)}", f"answer {method} with a result", value=reply)


@rule("SEQ-002", "unknown-method", Q, ERROR, covered_by="method-not-found")
def unknown_method(declared: Declared) -> Iterator[Found]:
    """A method the server does not serve is answered with the error -32601 (method not found)."""
    if not declared.handshake_answered:
        return
    reply = declared.unknown_method_reply
    if reply is None:
        yield Found("unknown method", "a request for an unknown method got no answer; a client waits forever",
                    "answer every request; an unknown method with -32601 (JSON-RPC 2.0 section 5.1)")
        return
    code = reply.get("error", {}).get("code") if isinstance(reply, dict) and isinstance(reply.get("error"),
                                                                                      dict) else None
    if code != -32601:
        yield Found("unknown method", f"an unknown method was answered {short(reply)}", "answer it with the error "
                    "-32601 (method not found)", value=reply)


@rule("SEQ-003", "error-format", Q, ERROR, covered_by="response-schema")
def error_format(declared: Declared) -> Iterator[Found]:
    """An error response's `error` is an object with an integer `code` and a string `message`."""
    for number, message in enumerate(declared.responses, 1):
        if not isinstance(message, dict) or "error" not in message:
            continue
        error: Any = message["error"]
        code = error.get("code") if isinstance(error, dict) else None
        if not isinstance(error, dict) or not isinstance(code, int) or isinstance(code, bool) \
                or not isinstance(error.get("message"), str):
            yield Found(f"responses[{number}].error", f"a malformed error object: {short(error)}",
                        'write `"error": {"code": <integer>, "message": "<text>"}` (JSON-RPC 2.0 section 5.1)',
                        value=message)


@rule("SEQ-004", "handshake-answered", Q, ERROR)
def handshake_answered(declared: Declared) -> Iterator[Found]:
    """The server answers the handshake: `server/discover` (2026-07-28) or `initialize` (earlier revisions)."""
    if not declared.handshake_answered:
        yield Found("initialize", "neither server/discover nor initialize got an answer", "answer initialize (or "
                    "server/discover) at once; nothing else works until the server does")


# Info, never a finding of `run`: the lifecycle's SHOULD NOT binds the client (it should send only pings before the
# handshake); nothing requires a server to refuse such a request.
@rule("SEQ-005", "answered-before-initialize", Q, INFO)
def answered_before_initialize(declared: Declared) -> Iterator[Found]:
    """Before `initialize` (legacy revisions) the server refuses requests other than ping instead of serving them."""
    reply = declared.pre_init_reply
    if isinstance(reply, dict) and "result" in reply:
        yield Found("tools/list before initialize", "a request sent before initialize was served as if the session "
                    "were open", "answer requests before initialize with an error (e.g. -32600 \"not initialized\")"
                    ": version and capabilities are not agreed yet", value=reply)
