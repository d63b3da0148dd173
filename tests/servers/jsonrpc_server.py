"""A plain JSON-RPC 2.0 server over stdio (no MCP): a memory store declared by ``jsonrpc_server.openrpc.json``.

Usage: ``python tests/servers/jsonrpc_server.py [--bug NAME]...``

Correct by default (a fuzzer must find nothing): params are checked against the OpenRPC document's schemas
(-32602 when they break one), an unknown id is the declared error -32001, ids of every JSON-RPC type come
back unchanged, batches follow JSON-RPC 2.0 section 6. Each bug in ``BUGS`` switches on one misbehaviour.
Standard library and ``jsonschema`` only; exits 0 on EOF.
"""

from __future__ import annotations

import argparse
import json
import sys
import uuid
from pathlib import Path
from typing import Any

from jsonschema import Draft202012Validator

DOCUMENT = Path(__file__).with_suffix(".openrpc.json")
BUGS = {
    "crash-at-max-importance": "store_memory exits with a traceback when importance is 10 (its maximum)",
    "params-code": "params that break the schema are answered -32603 instead of -32602",
    "id-coerce": 'string ids that look like integers ("1") are answered as integers',
    "crash-recall-forgotten": "recall_memory of a forgotten id exits (a stateful bug)",
    "string-sum": "add returns its sum as a string (the document says integer)",
    "undeclared-error": "recall_memory of an unknown id answers -32002 (the document declares -32001)",
}
ID_TYPES = (str, int, float, type(None))


def validators() -> dict[str, tuple[Draft202012Validator, list[str], str]]:
    """Per method: a validator of its params as an object, the param order, the param structure."""
    document = json.loads(DOCUMENT.read_text())
    defs = document["components"]["schemas"]
    table = {}
    for method in document["methods"]:
        names = [p["name"] for p in method["params"]]
        properties = {p["name"]: json.loads(json.dumps(p["schema"]).replace("#/components/schemas/", "#/$defs/"))
                      for p in method["params"]}
        schema = {"type": "object", "properties": properties, "additionalProperties": False, "$defs": defs,
                  "required": [p["name"] for p in method["params"] if p.get("required")]}
        table[method["name"]] = (Draft202012Validator(schema), names, method["paramStructure"])
    return table


class Server:
    """The store and the bugs switched on."""

    def __init__(self, bugs: set[str], *, discover: bool = True, answer_responses: bool = False) -> None:
        self.bugs = bugs
        self.discover = discover
        self.answer_responses = answer_responses
        self.methods = validators()
        self.memories: dict[str, dict[str, Any]] = {}
        self.forgotten: set[str] = set()

    def error(self, rid: Any, code: int, message: str) -> dict[str, Any]:
        return {"jsonrpc": "2.0", "id": self.wire_id(rid), "error": {"code": code, "message": message}}

    def wire_id(self, rid: Any) -> Any:
        if "id-coerce" in self.bugs and isinstance(rid, str) and rid.isdigit():
            return int(rid)
        return rid

    def handle(self, message: Any) -> dict[str, Any] | None:
        """The reply to one request object (None for a notification)."""
        if not isinstance(message, dict):
            return self.error(None, -32600, "invalid request")
        if "method" not in message and ("result" in message or "error" in message):
            if self.answer_responses:  # JSON-RPC 2.0: a server receives requests only, so this is not a valid one
                return self.error(message.get("id"), -32600, "invalid request: a response object")
            return None  # a response sent to us: this server sends no request, so there is nothing to match
        rid = message.get("id")
        if "id" in message and (not isinstance(rid, ID_TYPES) or isinstance(rid, bool)):
            return self.error(None, -32600, "invalid request: bad id")
        if message.get("jsonrpc") != "2.0" or not isinstance(message.get("method"), str):
            return self.error(rid, -32600, "invalid request")  # even without an id: the request is no notification
        params = message.get("params", {})
        if not isinstance(params, dict | list):
            return self.error(rid, -32602, "invalid params: params must be an object or an array") \
                if "id" in message else None
        reply = self.call(message["method"], params, rid)
        return reply if "id" in message else None

    def call(self, method: str, params: dict | list, rid: Any) -> dict[str, Any]:
        if method == "rpc.discover" and self.discover:  # OpenRPC service discovery: the server's own document
            return {"jsonrpc": "2.0", "id": self.wire_id(rid), "result": json.loads(DOCUMENT.read_text())}
        if method not in self.methods:
            return self.error(rid, -32601, "method not found")
        validator, names, structure = self.methods[method]
        if isinstance(params, list):
            if structure == "by-name" or len(params) > len(names):
                return self.invalid(rid, "params must be an object" if structure == "by-name" else "too many params")
            params = dict(zip(names[:len(params)], params, strict=True))
        elif structure == "by-position":
            return self.invalid(rid, "params must be an array")
        problem = next(iter(validator.iter_errors(params)), None)
        if problem is not None:
            return self.invalid(rid, problem.message[:100])
        try:
            result = getattr(self, method)(**params)
        except KeyError:
            return self.error(rid, -32002 if "undeclared-error" in self.bugs else -32001, "memory not found")
        return {"jsonrpc": "2.0", "id": self.wire_id(rid), "result": result}

    def invalid(self, rid: Any, why: str) -> dict[str, Any]:
        return self.error(rid, -32603 if "params-code" in self.bugs else -32602, f"invalid params: {why}")

    def store_memory(self, text: str, importance: int = 5) -> dict[str, Any]:
        if importance == 10 and "crash-at-max-importance" in self.bugs:
            raise SystemExit("crash-at-max-importance: importance 10")
        key = str(uuid.uuid4())
        self.memories[key] = {"text": text, "importance": importance}
        return {"id": key}

    def recall_memory(self, id: str) -> dict[str, Any]:  # noqa: A002 (the param's name in the document)
        if id in self.forgotten and "crash-recall-forgotten" in self.bugs:
            raise SystemExit("crash-recall-forgotten")
        return self.memories[id]

    def forget_memory(self, id: str) -> bool:  # noqa: A002
        if self.memories.pop(id, None) is None:
            return False
        self.forgotten.add(id)
        return True

    def add(self, a: int, b: int) -> int | str:
        total = int(a) + int(b)
        return str(total) if "string-sum" in self.bugs else total


def reply_to_line(server: Server, line: str) -> Any:
    """What to write for one input line (None: nothing)."""
    try:
        value = json.loads(line)
    except ValueError:
        return server.error(None, -32700, "parse error")
    if isinstance(value, list):
        if not value:
            return server.error(None, -32600, "invalid request: empty batch")
        replies = [reply for item in value if (reply := server.handle(item)) is not None]
        return replies or None
    return server.handle(value)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--bug", action="append", default=[], choices=sorted(BUGS))
    parser.add_argument("--no-discover", action="store_true", help="do not serve rpc.discover")
    parser.add_argument("--answer-responses", action="store_true",
                        help="not a bug: answer a response object sent to the server with -32600 (invalid request)")
    args = parser.parse_args()
    server = Server(set(args.bug), discover=not args.no_discover, answer_responses=args.answer_responses)
    for raw in sys.stdin.buffer:
        try:
            line = raw.decode("utf-8")
        except UnicodeDecodeError:
            out: Any = server.error(None, -32700, "parse error: invalid UTF-8")
        else:
            if not line.strip():
                continue
            out = reply_to_line(server, line)
        if out is not None:
            sys.stdout.write(json.dumps(out) + "\n")
            sys.stdout.flush()


if __name__ == "__main__":
    main()
