"""A stdio JSON-RPC server that misbehaves as a behaviour plan says: what mcpfuzz must survive without an error
of its own (tests/test_adversarial.py draws the plans with Hypothesis).

Usage: ``python tests/servers/adversarial.py [--port N] PLAN`` (or the plan in the environment variable
``ADVERSARIAL_PLAN``; with ``--port``, the same plan over streamable HTTP on 127.0.0.1, each POST answered with
what the server writes for it: one JSON body, several as server-sent events, nothing as 202; a closed stdout
drops the connection), PLAN being a JSON object:

- ``seed``: the server's own random choices (which message gets which misbehaviour) follow it.
- ``handshake``: how ``initialize`` is answered: ``ok``; ``never`` (silence); ``garbage`` (a line that is not
  JSON); ``error`` (a JSON-RPC error); ``wrong-id`` (the result under another id); ``no-id`` (the result
  without an id member); ``exit`` (the process exits before answering); ``plain`` (an error -32601, as a plain
  JSON-RPC server that knows no MCP answers).
- ``version``: the protocol version the handshake answers with (default ``2025-06-18``).
- ``tools``: whether one tool (``echo``, one string property) is declared; ``methods``: plain methods
  (``add``, ``echo``) answered besides MCP's, for ``run --jsonrpc``.
- ``misbehaviours``: ``{NAME: PROBABILITY}``; for each message after the handshake the first NAME (in
  MISBEHAVIOURS' order) whose draw falls under its probability decides what happens instead of a correct
  answer. The names are MISBEHAVIOURS' keys.
- ``grace``: the first that many messages of each process are answered correctly (misbehaviours start after).
- ``exit_after``: the process exits (status 3) after that many messages; ``close_stdout_after``: it closes
  its stdout after that many messages and keeps reading until its input ends.

Every line it writes is flushed; a partial line is completed by the next write (or never, at exit).
"""

from __future__ import annotations

import json
import os
import random
import sys
import time
from typing import Any

PLAN_VARIABLE = "ADVERSARIAL_PLAN"
HANDSHAKES = ("ok", "never", "garbage", "error", "wrong-id", "no-id", "exit", "plain")
# Each misbehaviour in words (the order is the order they are tried in).
MISBEHAVIOURS = {
    "exit": "the process exits with status 3 instead of answering",
    "close-stdout": "stdout is closed; the process keeps reading until its input ends",
    "silence": "no answer",
    "delay": "the answer comes after a pause of up to 1.5 s",
    "partial": "half of the answer's line now, the rest with the next write",
    "binary": "a line of invalid UTF-8 bytes before the answer",
    "garbage": "a line of text that is not JSON before the answer",
    "nan": "NaN, Infinity or -Infinity in the answer's result",
    "huge-number": "an integer of 5,000 digits in the result, or as the id",
    "huge-id": "the answer's id is an integer of 5,000 digits",
    "deep": "the result nested 5,000 arrays deep (past most readers' limits)",
    "deep-id": "the answer's id nested 900 arrays deep",
    "wrong-id": "the answer carries another id (a number off by one, its text, null, or an object)",
    "no-id": "the answer carries no id member",
    "duplicate": "the answer is written twice",
    "out-of-order": "the answer is held back and written after the next one",
    "server-request": "a request of the server (ping, roots/list, sampling, elicitation) before the answer, its id "
                      "a string, an integer, one of 5,000 digits, an array, null, a fraction or NaN",
    "nan-id": "the answer's id is NaN or Infinity",
    "notification": "a notification of the server before the answer",
    "answer-notification": "a notification is answered, as if it were a request",
    "batch": "the answer comes inside an array",
    "empty-line": "an empty line and a line of spaces before the answer",
}
HUGE_MARK = '"huge-number-of-5000-digits"'
HUGE = json.loads(HUGE_MARK)  # a placeholder, written out as 5,000 nines (past what Python's json writes)
TOOL = {"name": "echo", "description": "Echo text.",
        "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}}


class Adversary:
    """The server: reads lines, answers each one as the plan says."""

    def __init__(self, plan: dict[str, Any]) -> None:
        self.plan = plan
        self.random = random.Random(plan.get("seed", 0))
        self.misbehaviours: dict[str, float] = plan.get("misbehaviours", {})
        self.handshake = plan.get("handshake", "ok")
        self.version = plan.get("version", "2025-06-18")
        self.messages = 0
        self.held: list[bytes] = []  # answers held back (out-of-order)
        self.partial = b""  # the rest of a partial line, written with the next write
        self.closed = False

    def write(self, data: bytes) -> None:
        """One line out (after the rest of a partial one), flushed; nothing once stdout is closed."""
        if self.closed:
            return
        out = sys.stdout.buffer
        try:
            out.write(self.partial + data + b"\n")
            out.flush()
        except (BrokenPipeError, ValueError, OSError):
            self.closed = True
        self.partial = b""

    def send(self, message: Any) -> None:
        """A message as one JSON line (NaN written as Python writes it, HUGE as its 5,000 digits)."""
        self.write(json.dumps(message).replace(HUGE_MARK, "9" * 5000).encode())

    def serve(self) -> int:
        """Answer each line until the input ends (or the plan ends the process)."""
        for line in iter(sys.stdin.buffer.readline, b""):
            self.messages += 1
            if self.messages == self.plan.get("exit_after"):
                return 3
            if self.messages == self.plan.get("close_stdout_after"):
                self.close_stdout()
            try:
                message = json.loads(line)
            except (ValueError, RecursionError):
                self.send({"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "Parse error"}})
                continue
            outcome = self.answer(message)
            if outcome is not None:
                return outcome
        return 0

    def close_stdout(self) -> None:
        """Close stdout for good (the process lives on)."""
        self.closed = True
        sys.stdout.flush()
        os.close(1)

    def answer(self, message: Any) -> int | None:
        """Answer one decoded message; an exit status ends the process."""
        if isinstance(message, list):
            for element in message[:16]:
                outcome = self.answer(element)
                if outcome is not None:
                    return outcome
            return None
        if not isinstance(message, dict):
            self.send({"jsonrpc": "2.0", "id": None, "error": {"code": -32600, "message": "Invalid Request"}})
            return None
        method, rid = message.get("method"), message.get("id")
        if method == "initialize":
            return self.initialize(message)
        if "id" not in message:
            if self.messages > self.plan.get("grace", 0) and self.chance("answer-notification"):
                self.send({"jsonrpc": "2.0", "id": 0, "result": {}})
            return None
        if not isinstance(method, str):
            if "result" in message or "error" in message:
                return None  # a response to us
            self.send({"jsonrpc": "2.0", "id": rid, "error": {"code": -32600, "message": "Invalid Request"}})
            return None
        return self.respond(rid, self.result_of(method, message.get("params")))

    def initialize(self, message: dict[str, Any]) -> int | None:
        """The handshake, as the plan says."""
        rid = message.get("id")
        result = {"protocolVersion": self.version, "serverInfo": {"name": "adversary", "version": "1"},
                  "capabilities": {"tools": {}} if self.plan.get("tools") else {}}
        handshake = self.handshake
        if handshake == "never":
            return None
        if handshake == "exit":
            return 4
        if handshake == "garbage":
            self.write(b"hello, I am not JSON-RPC")
        elif handshake == "error":
            self.send({"jsonrpc": "2.0", "id": rid, "error": {"code": -32603, "message": "no"}})
        elif handshake == "plain":
            self.send({"jsonrpc": "2.0", "id": rid, "error": {"code": -32601, "message": "Method not found"}})
        elif handshake == "wrong-id":
            self.send({"jsonrpc": "2.0", "id": [rid], "result": result})
        elif handshake == "no-id":
            self.send({"jsonrpc": "2.0", "result": result})
        else:
            self.send({"jsonrpc": "2.0", "id": rid, "result": result})
        return None

    def result_of(self, method: str, params: Any) -> dict[str, Any]:
        """The correct outcome of a request: {"result": ...} or {"error": ...}."""
        if method in ("ping", "server/discover"):
            return {"result": {}}
        if method == "tools/list" and self.plan.get("tools"):
            return {"result": {"tools": [TOOL]}}
        if method == "tools/call" and self.plan.get("tools"):
            arguments = params.get("arguments") if isinstance(params, dict) else None
            text = arguments.get("text") if isinstance(arguments, dict) else None
            if not isinstance(text, str):
                return {"error": {"code": -32602, "message": "text is required"}}
            return {"result": {"content": [{"type": "text", "text": text[:100]}], "isError": False}}
        if method == "add" and self.plan.get("methods"):
            if isinstance(params, list) and len(params) == 2 and all(isinstance(p, int) for p in params):
                return {"result": params[0] + params[1]}
            return {"error": {"code": -32602, "message": "two integers"}}
        if method == "echo" and self.plan.get("methods"):
            return {"result": params}
        return {"error": {"code": -32601, "message": "Method not found"}}

    def chance(self, name: str) -> bool:
        """Whether misbehaviour `name` happens this time."""
        return self.random.random() < self.misbehaviours.get(name, 0.0)

    def respond(self, rid: Any, outcome: dict[str, Any]) -> int | None:
        """The answer to a request, after (or instead of) the first misbehaviour drawn."""
        answer: dict[str, Any] = {"jsonrpc": "2.0", "id": rid, **outcome}
        graced = self.messages <= self.plan.get("grace", 0)
        chosen = "" if graced else next((name for name in MISBEHAVIOURS
                                         if name in self.misbehaviours and self.chance(name)), "")
        if chosen == "exit":
            return 3
        if chosen == "close-stdout":
            self.close_stdout()
            return None
        if chosen == "silence":
            return None
        if chosen == "delay":
            time.sleep(self.random.uniform(0.0, 1.5))
        elif chosen == "partial":
            data = json.dumps(answer).replace(HUGE_MARK, "9" * 5000).encode()
            half = len(data) // 2
            self.flush_held()
            if not self.closed:
                sys.stdout.buffer.write(self.partial + data[:half])
                sys.stdout.buffer.flush()
            self.partial = data[half:]
            return None
        elif chosen == "binary":
            self.write(b"\xff\xfe\x80 not utf-8 \xc3\x28")
        elif chosen == "garbage":
            self.write(b"Traceback? no: just a log line on stdout")
        elif chosen == "nan" and "result" in answer:
            answer["result"] = {"value": self.random.choice([float("nan"), float("inf"), float("-inf")])}
        elif chosen == "huge-number" and "result" in answer:
            answer["result"] = {"n": HUGE}
        elif chosen == "huge-id":
            answer["id"] = HUGE
        elif chosen == "deep":
            self.write(b'{"jsonrpc":"2.0","id":' + json.dumps(rid).encode() + b',"result":' + b"[" * 5000
                       + b"]" * 5000 + b"}")
            return None
        elif chosen == "deep-id":
            self.write(b'{"jsonrpc":"2.0","id":' + b"[" * 900 + b"1" + b"]" * 900 + b',"result":{}}')
            return None
        elif chosen == "wrong-id":
            answer["id"] = self.random.choice([rid + 1 if isinstance(rid, int) and not isinstance(rid, bool) else 7,
                                               str(rid), None, {"id": rid}])
        elif chosen == "no-id":
            del answer["id"]
        elif chosen == "duplicate":
            self.send(answer)
        elif chosen == "out-of-order":
            self.held.append(json.dumps(answer).replace(HUGE_MARK, "9" * 5000).encode())
            return None
        elif chosen == "server-request":
            method = self.random.choice(["ping", "roots/list", "sampling/createMessage", "elicitation/create"])
            sid = self.random.choice([f"adv-{self.messages}", self.messages, HUGE, [self.messages], None, 0.5,
                                      float("nan")])
            self.send({"jsonrpc": "2.0", "id": sid, "method": method, "params": {}})
        elif chosen == "nan-id":
            answer["id"] = self.random.choice([float("nan"), float("inf")])
        elif chosen == "notification":
            self.send({"jsonrpc": "2.0", "method": "notifications/message",
                       "params": {"level": "info", "data": "adversary"}})
        elif chosen == "batch":
            self.send([answer])
            self.flush_held()
            return None
        elif chosen == "empty-line":
            self.write(b"")
            self.write(b"   ")
        self.send(answer)
        self.flush_held()
        return None

    def flush_held(self) -> None:
        """Answers held back go out now, after a later one."""
        held, self.held = self.held, []
        for data in held:
            self.write(data)


class Captured(Adversary):
    """The same plan over streamable HTTP: what one POST makes the server write is that POST's answer."""

    def __init__(self, plan: dict[str, Any]) -> None:
        super().__init__(plan)
        self.lines: list[bytes] = []

    def write(self, data: bytes) -> None:
        """Kept for the answer of the POST being served (the rest of a partial line stays half written)."""
        self.lines.append(self.partial + data)
        self.partial = b""

    def close_stdout(self) -> None:
        """Over HTTP: the connection is dropped without an answer."""
        self.closed = True


def serve_http(plan: dict[str, Any], port: int) -> int:
    """Serve the plan on 127.0.0.1:`port`, one POST at a time: one JSON body, several as server-sent events."""
    from http.server import BaseHTTPRequestHandler, HTTPServer

    adversary = Captured(plan)

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802 (the http.server name)
            body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            adversary.lines, adversary.closed = [], False
            adversary.messages += 1
            try:
                message: Any = json.loads(body)
            except (ValueError, RecursionError):
                message = None
                adversary.send({"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "Parse error"}})
            status = adversary.answer(message) if message is not None else None
            if status is not None or adversary.messages == plan.get("exit_after"):
                os._exit(status or 3)
            after = plan.get("close_stdout_after")
            if adversary.closed or (after is not None and adversary.messages >= after):
                self.close_connection = True  # no answer from now on: each connection dropped
                return
            lines = adversary.lines
            if not lines:
                self.send_response(202)
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
            events = len(lines) > 1
            payload = b"".join(b"event: message\ndata: " + line + b"\n\n" for line in lines) if events else lines[0]
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream" if events else "application/json")
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

        def do_GET(self) -> None:  # noqa: N802
            self.send_response(405)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, *args: Any) -> None:
            """Quiet."""

    HTTPServer(("127.0.0.1", port), Handler).serve_forever()
    return 0


def read_plan(argv: list[str]) -> dict[str, Any]:
    """The plan from the first argument, else from the environment; no plan is a correct server."""
    text = argv[0] if argv else os.environ.get(PLAN_VARIABLE, "{}")
    plan = json.loads(text)
    if not isinstance(plan, dict):
        raise SystemExit("the plan must be a JSON object")
    unknown = set(plan.get("misbehaviours", {})) - set(MISBEHAVIOURS)
    if unknown:
        raise SystemExit(f"unknown misbehaviours: {sorted(unknown)}")
    return plan


def main(argv: list[str]) -> int:
    """Serve until the input ends or the plan says to stop (`--port N` first: over streamable HTTP)."""
    if argv[:1] == ["--port"]:
        return serve_http(read_plan(argv[2:]), int(argv[1]))
    return Adversary(read_plan(argv)).serve()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
