"""Whether the official Python SDK's client can talk to a server: its handshake, then tools/list. One JSON line out.

Run with an interpreter that has the `mcp` package (the census uses .venv-mcp1, mcp 1.x), inside the census's
sandbox. The request is one JSON argument: {"argv": [...], "env": [[name, value], ...], "url": "" or a URL with
{port}, "cwd": folder}. A URL means streamable HTTP: the argv (with {port}) is launched first and the client
connects once the port accepts connections. Prints {"ok": true, "protocol": ..., "server": ..., "tools": N} or
{"ok": false, "error": ...}; the census reads it to tell "mcpfuzz could not test it" from "nobody can".
"""

from __future__ import annotations

import asyncio
import json
import os
import socket
import subprocess
import sys
import time
import urllib.parse
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import field  # noqa: E402

DEADLINE = 60.0  # seconds for the whole probe: start, handshake, tools/list


async def talk_stdio(argv: list[str], env: dict[str, str], cwd: str) -> dict[str, Any]:
    """Handshake and list tools over stdio with the SDK's own client."""
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    params = StdioServerParameters(command=argv[0], args=argv[1:], env=env, cwd=cwd)
    with open(os.devnull, "w") as quiet:
        async with stdio_client(params, errlog=quiet) as (read, write), ClientSession(read, write) as session:
            return await handshake(session)


async def talk_http(url: str) -> dict[str, Any]:
    """Handshake and list tools over streamable HTTP with the SDK's own client."""
    from mcp import ClientSession
    from mcp.client.streamable_http import streamablehttp_client

    async with streamablehttp_client(url) as (read, write, _), ClientSession(read, write) as session:
        return await handshake(session)


async def handshake(session: Any) -> dict[str, Any]:
    """initialize, then tools/list when the server declares tools."""
    init = await session.initialize()
    tools = len((await session.list_tools()).tools) if init.capabilities.tools is not None else 0
    return {"ok": True, "protocol": init.protocolVersion, "server": init.serverInfo.name, "tools": tools}


def wait_for_port(port: int, server: subprocess.Popen[bytes], deadline: float) -> None:
    """Until the launched server accepts connections on the port (or exits, or the deadline passes)."""
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise RuntimeError(f"the server exited with status {server.returncode} before listening")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            time.sleep(0.1)
    raise TimeoutError("the server never listened")


async def probe(request: dict[str, Any]) -> dict[str, Any]:
    """One probe as the request says."""
    env = {**os.environ, **dict(request["env"])}
    if not request["url"]:
        return await talk_stdio(list(request["argv"]), env, request["cwd"])
    fixed = urllib.parse.urlsplit(request["url"]).port if "{port}" not in request["url"] else None
    port = fixed or field.free_port()  # a server that listens on a port of its own choosing is asked there
    launch = [part.replace("{port}", str(port)) for part in request["argv"]]
    server = field.start(launch, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env, cwd=request["cwd"])
    try:
        wait_for_port(port, server, time.monotonic() + DEADLINE / 2)
        return await talk_http(request["url"].replace("{port}", str(port)))
    finally:
        field.end(server)


def main(request_json: str) -> int:
    """Print the probe's answer; any failure is the answer, not a crash."""
    try:
        answer = asyncio.run(asyncio.wait_for(probe(json.loads(request_json)), DEADLINE))
    except BaseException as error:  # an ExceptionGroup from the SDK's task groups too
        answer = {"ok": False, "error": describe(error)}
    finally:
        field.end_all()
    print(json.dumps(answer), flush=True)
    return 0


def describe(error: BaseException) -> str:
    """The innermost error of a (possibly nested) exception group, as `Type: message`."""
    while getattr(error, "exceptions", None):
        error = error.exceptions[0]  # type: ignore[attr-defined]
    if isinstance(error, TimeoutError | asyncio.TimeoutError):
        return f"no answer within {DEADLINE:.0f} s"
    return f"{type(error).__name__}: {error}"[:300]


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
