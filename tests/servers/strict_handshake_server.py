"""A stdio MCP server as strict about the handshake as some SDK releases are, and as fragile on malformed input.

Usage: ``python tests/servers/strict_handshake_server.py [--die-when-initialized]``. Behaves like a server built
on an SDK whose handshake reads exactly `initialize`, answers it, then reads exactly `notifications/initialized`:

- the first message must be an `initialize` request with params, else it exits 1 ("expected initialize request");
- the message after its initialize answer must be `notifications/initialized`, else it exits 1 (a `ping`
  sent before it ends the process, as a client that pings too early finds);
- once initialized, any line it cannot take as a JSON-RPC message (not JSON, `{}`, a truncated object, params
  that are not an object) ends the process with a panic on stderr, exit 101;
- otherwise it is a correct server with two tools, `echo` (a string) and `add` (two integers).

With ``--die-when-initialized`` it exits 2 on `notifications/initialized` itself, after answering initialize: no
client can complete a handshake with it.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from typing import Any, NoReturn

VERSIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
TOOLS = [
    {"name": "echo", "description": "Echo a text.",
     "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}},
    {"name": "add", "description": "Add two integers.",
     "inputSchema": {"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
                     "required": ["a", "b"]}},
]


def write(message: dict[str, Any]) -> None:
    """One JSON-RPC message on stdout."""
    sys.stdout.write(json.dumps(message, separators=(",", ":")) + "\n")
    sys.stdout.flush()


def die(status: int, why: str) -> NoReturn:
    """End the process the way the SDK's serve loop does: a line on stderr and a non-zero status."""
    sys.stderr.write(why + "\n")
    sys.stderr.flush()
    sys.exit(status)


def parse(line: bytes) -> dict[str, Any]:
    """A JSON-RPC message, or the process ends (the transport's decode error is fatal)."""
    try:
        message = json.loads(line)
    except ValueError as error:
        die(101, f"thread 'main' panicked at src/transport.rs:42:18: called `Result::unwrap()` on an `Err` value: "
                 f"Json(Error(\"{error}\"))")
    if not isinstance(message, dict) or message.get("jsonrpc") != "2.0" or \
            not isinstance(message.get("method", message.get("result", message.get("error"))), (str, dict)):
        die(101, "thread 'main' panicked at src/transport.rs:57:9: data did not match any variant of untagged "
                 "enum JsonRpcMessage")
    if "params" in message and not isinstance(message["params"], dict):
        die(101, "thread 'main' panicked at src/model.rs:88:14: invalid type: expected struct Params")
    return message


def answer(message: dict[str, Any]) -> None:
    """An initialized server's answer to one message (none to a notification or a response)."""
    if "id" not in message or "method" not in message:
        return
    rid, method, params = message["id"], message["method"], message.get("params") or {}
    if method == "ping":
        write({"jsonrpc": "2.0", "id": rid, "result": {}})
    elif method == "tools/list":
        write({"jsonrpc": "2.0", "id": rid, "result": {"tools": TOOLS}})
    elif method == "tools/call":
        write({"jsonrpc": "2.0", "id": rid, "result": call(params.get("name"), params.get("arguments"))})
    elif method == "initialize":
        write({"jsonrpc": "2.0", "id": rid, "error": {"code": -32600, "message": "already initialized"}})
    else:
        write({"jsonrpc": "2.0", "id": rid, "error": {"code": -32601, "message": f"method not found: {method}"}})


def call(name: Any, arguments: Any) -> dict[str, Any]:
    """A tool's result (errors in the result, as MCP says for a tool's own failures)."""
    arguments = arguments if isinstance(arguments, dict) else {}
    if name == "echo" and isinstance(arguments.get("text"), str):
        return {"content": [{"type": "text", "text": arguments["text"]}]}
    a, b = arguments.get("a"), arguments.get("b")
    if name == "add" and type(a) is int and type(b) is int:
        return {"content": [{"type": "text", "text": str(a + b)}]}
    return {"content": [{"type": "text", "text": f"bad call of {name!r}"}], "isError": True}


def next_message(lines: Iterator[bytes], expected: str) -> dict[str, Any]:
    """The next message of the handshake; the process ends when stdin does."""
    line = next(lines, b"")
    if not line:
        die(1, f"Error: connection closed: {expected}")
    return parse(line)


def main() -> int:
    lines = iter(sys.stdin.buffer.readline, b"")
    first = next_message(lines, "initialize request")
    if first.get("method") != "initialize" or "id" not in first:
        die(1, "Error: expected initialize request")
    if not isinstance(first.get("params"), dict):
        die(1, "Error: initialize request without params")
    requested = (first.get("params") or {}).get("protocolVersion")
    write({"jsonrpc": "2.0", "id": first["id"], "result": {
        "protocolVersion": requested if requested in VERSIONS else VERSIONS[-1],
        "capabilities": {"tools": {}}, "serverInfo": {"name": "strict-handshake", "version": "0.16.0"}}})
    second = next_message(lines, "initialized notification")
    if second.get("method") != "notifications/initialized" or "id" in second:
        die(1, "Error: expected initialized notification")
    if "--die-when-initialized" in sys.argv[1:]:
        die(2, "Error: failed to start the tool router")
    for line in lines:
        if line.strip():
            answer(parse(line))
    return 0


if __name__ == "__main__":
    sys.exit(main())
