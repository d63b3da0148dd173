"""Hostile stdio "servers" that test the fuzzer's own process handling, not the protocol oracles.

Usage: ``python tests/servers/hostile.py MODE`` with MODE one of:

- ``exit-at-once``: prints ``fatal: config file missing`` to stderr and exits 3 before reading.
- ``garbage``: answers every stdin line with ``this is not json`` on stdout; exits 0 on EOF.
- ``no-read``: never reads stdin and ignores SIGTERM, so only SIGKILL (of the group) ends it.
- ``silent``: reads stdin until EOF and never writes a byte; exits 0 on EOF.
- ``fork-child``: starts ``sleep 300`` in the same process group (writes ``child-pid=N`` to stderr),
  then answers ``initialize``, ``ping`` and ``tools/list`` like a minimal legacy server. The child
  inherits stdout and stderr, so a fuzzer that kills only the parent keeps a pipe open.
- ``setsid-child``: the same, but the ``sleep 300`` runs in a new session (its own process group).
- ``setsid-exit``: moves into a new session, as ``setsid CMD`` does (the process mcpfuzz started leads a
  session already and may not call ``setsid()``, so it forks and the child calls it), and exits 0 at once,
  before reading. The detached child writes ``detached-pid=N`` to stderr and keeps stdin, stdout and stderr
  open until its stdin is closed, then finishes for another second, as a server shutting down does.
- ``huge-bounds``: a minimal legacy server whose tool ``huge`` has ``"minimum": 10**400`` (400 digits,
  valid JSON) and whose tool ``plain`` takes one string; every call gets an empty result.
- ``many-tools``: the same server with 10,000 tools; ``huge-enum``: one tool whose integer property
  has an ``enum`` of 50,000 values; ``many-required``: one tool with 3,000 required properties.
- ``flood-requests``: the same minimal server that, once initialized, sends ``sampling/createMessage``
  requests to the client as fast as it can write, while answering what it is sent.
- ``double-init``: the minimal server answering ``initialize`` twice, the second 50 ms after the first.
- ``odd-numbers``: the minimal server whose tool results hold a 5,000-digit integer (valid JSON, past
  Python's default int-string limit) and whose ``ping`` result holds ``NaN`` (not JSON).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from typing import Any

LEGACY_VERSIONS = ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"]


def exit_at_once() -> int:
    """Fail the way a misconfigured server does: a message on stderr and a non-zero status."""
    sys.stderr.write("fatal: config file missing\n")
    return 3


def garbage() -> int:
    """Answer each line with text that is not JSON."""
    for _ in iter(sys.stdin.buffer.readline, b""):
        sys.stdout.write("this is not json\n")
        sys.stdout.flush()
    return 0


def no_read() -> int:
    """Never read, so the fuzzer's writes block once the pipe fills; survive SIGTERM."""
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    while True:
        time.sleep(3600)


def silent() -> int:
    """Consume input and never answer."""
    for _ in iter(sys.stdin.buffer.readline, b""):
        pass
    return 0


def reply(rid: Any, result: dict[str, Any] | None = None, error: dict[str, Any] | None = None) -> None:
    """Write one JSON-RPC response line."""
    msg: dict[str, Any] = {"jsonrpc": "2.0", "id": rid}
    if error is None:
        msg["result"] = result
    else:
        msg["error"] = error
    with WRITE_LOCK:
        sys.stdout.write(json.dumps(msg, separators=(",", ":")) + "\n")
        sys.stdout.flush()


def fork_child(new_session: bool = False) -> int:
    """A legacy server that leaves a grandchild behind in its process group (or, new_session, in a session of
    its own, out of reach of a group kill)."""
    # Popen keeps the parent's process group by default: that is the point of this mode.
    child = subprocess.Popen(["sleep", "300"], stdin=subprocess.DEVNULL, start_new_session=new_session)
    sys.stderr.write(f"child-pid={child.pid}\n")
    sys.stderr.flush()
    return serve("fork-child", [])


def setsid_exit() -> int:
    """Leave the session the fuzzer put us in: the parent exits 0 at once; the child, in its new session and
    out of reach of a kill of the fuzzer's process group, holds the pipes until its input ends, and a second
    more."""
    if os.fork() == 0:
        os.setsid()
        sys.stderr.write(f"detached-pid={os.getpid()}\n")
        sys.stderr.flush()
        for _ in iter(sys.stdin.buffer.readline, b""):
            pass
        time.sleep(1.0)
        os._exit(0)
    return 0


HUGE_TOOLS = [
    {"name": "huge", "inputSchema": {"type": "object", "properties": {"n": {"type": "integer", "minimum": 10**400}}}},
    {"name": "plain", "inputSchema": {"type": "object", "properties": {"s": {"type": "string"}}}},
]


def _tool(name: str, properties: dict[str, Any], required: list[str] | None = None) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "object", "properties": properties}
    if required:
        schema["required"] = required
    return {"name": name, "inputSchema": schema}


def many_tools() -> int:
    """10,000 small tools: planning them all must not outlast the budget."""
    return serve("many-tools", [_tool(f"t{i}", {"n": {"type": "integer"}, "s": {"type": "string"}})
                                for i in range(10_000)])


def huge_enum() -> int:
    """One tool whose only property has an enum of 50,000 integers."""
    return serve("huge-enum", [_tool("pick", {"n": {"type": "integer", "enum": list(range(50_000))}}, ["n"])])


def many_required() -> int:
    """One tool with 3,000 required string properties."""
    names = [f"p{i}" for i in range(3_000)]
    return serve("many-required", [_tool("wide", {name: {"type": "string"} for name in names}, names)])


def huge_bounds() -> int:
    """A legacy server with a schema bound of 400 digits (valid JSON, beyond any double)."""
    return serve("huge-bounds", HUGE_TOOLS)


def flood_requests() -> int:
    """Once initialized, write server->client requests without pause (from a thread) while serving."""
    import threading

    def flood() -> None:
        line = '{"jsonrpc":"2.0","id":"s%d","method":"sampling/createMessage","params":{"messages":[],"maxTokens":1}}\n'
        number = 0
        while True:
            number += 1
            with WRITE_LOCK:
                sys.stdout.write(line % number)
                if number % 64 == 0:
                    sys.stdout.flush()

    return serve("flood-requests", [], on_initialized=lambda: threading.Thread(target=flood, daemon=True).start())


WRITE_LOCK = __import__("threading").Lock()


def double_init() -> int:
    """Answer initialize a second time, a moment later."""
    return serve("double-init", [_tool("plain", {"text": {"type": "string"}})], initialize_twice=True)


def odd_numbers() -> int:
    """Valid JSON integers longer than Python reads by default in results; NaN (not JSON) in ping's."""
    return serve("odd-numbers", [_tool("plain", {"text": {"type": "string"}})], odd_numbers=True)


def serve(name: str, tools: list[dict[str, Any]], on_initialized: Any = None, *, initialize_twice: bool = False,
          odd_numbers: bool = False) -> int:
    """A minimal legacy server: initialize, ping, tools/list and tools/call (an empty result)."""
    for raw in iter(sys.stdin.buffer.readline, b""):
        try:
            msg = json.loads(raw)
        except ValueError:
            reply(None, error={"code": -32700, "message": "parse error"})
            continue
        if isinstance(msg, dict) and msg.get("method") == "notifications/initialized" and on_initialized:
            on_initialized()
            on_initialized = None
        if not isinstance(msg, dict) or "id" not in msg or "method" not in msg:
            continue  # notifications, answers to our requests and oddities: process handling only
        method, params = msg.get("method"), msg.get("params")
        if method == "initialize":
            asked = params.get("protocolVersion") if isinstance(params, dict) else None
            version = asked if asked in LEGACY_VERSIONS else LEGACY_VERSIONS[-1]
            info = {"name": name, "version": "1.0"}
            reply(msg["id"], {"protocolVersion": version, "capabilities": {"tools": {}}, "serverInfo": info})
            if initialize_twice:
                time.sleep(0.05)
                reply(msg["id"], {"protocolVersion": version, "capabilities": {"tools": {}}, "serverInfo": info})
        elif method == "ping" and odd_numbers:
            sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": msg["id"], "result": {"load": float("nan")}}) + "\n")
            sys.stdout.flush()
        elif method == "ping":
            reply(msg["id"], {})
        elif method == "tools/list":
            reply(msg["id"], {"tools": tools})
        elif method == "tools/call" and odd_numbers:
            big = "9" * 5000
            sys.stdout.write(f'{{"jsonrpc":"2.0","id":{json.dumps(msg["id"])},"result":{{"content":[],'
                             f'"structuredContent":{{"n":{big}}}}}}}\n')
            sys.stdout.flush()
        elif method == "tools/call":
            reply(msg["id"], {"content": []})
        else:
            reply(msg["id"], error={"code": -32601, "message": "method not found"})
    return 0


MODES = {
    "exit-at-once": exit_at_once,
    "garbage": garbage,
    "no-read": no_read,
    "silent": silent,
    "fork-child": fork_child,
    "setsid-child": lambda: fork_child(new_session=True),
    "setsid-exit": setsid_exit,
    "huge-bounds": huge_bounds,
    "many-tools": many_tools,
    "huge-enum": huge_enum,
    "many-required": many_required,
    "flood-requests": flood_requests,
    "double-init": double_init,
    "odd-numbers": odd_numbers,
}


def main(argv: list[str]) -> int:
    """Run the mode named on the command line."""
    if len(argv) != 1 or argv[0] not in MODES:
        sys.stderr.write(f"usage: hostile.py {{{','.join(MODES)}}}\n")
        return 2
    return MODES[argv[0]]()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
