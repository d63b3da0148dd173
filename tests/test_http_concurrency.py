"""Several POSTs in flight at once on one HTTP connection object: each its own reply, one session between them."""

from __future__ import annotations

import json
from typing import Any

import anyio
import pytest

from mcpfuzz.jsonrpc.http_reply import HttpReply
from mcpfuzz.jsonrpc.transport_kind import TransportKind
from mcpfuzz.transport.base import ConnectionCallbacks, ConnectionOptions, ServerConnection
from mcpfuzz.transport.http_target import HttpTarget
from mcpfuzz.transport.legacy_sse import LegacySseServer
from mcpfuzz.transport.streamable_http import StreamableHttpServer
from tests.http_servers import run_http_server

pytestmark = pytest.mark.process

IN_FLIGHT = 4
MODERN_META = {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
               "io.modelcontextprotocol/clientCapabilities": {}}
LEGACY = "2025-11-25"


def _call(rid: int, modern: bool) -> bytes:
    params: dict[str, Any] = {"name": "echo", "arguments": {"text": f"call {rid}"}}
    if modern:
        params["_meta"] = MODERN_META
    return json.dumps({"jsonrpc": "2.0", "id": rid, "method": "tools/call", "params": params}).encode()


def _initialize() -> bytes:
    return json.dumps({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": LEGACY, "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}).encode()


class Heard:
    """What the server said, and a way to wait until a reply has ended or enough messages arrived."""

    def __init__(self) -> None:
        self.lines: list[dict[str, Any]] = []
        self.changed = anyio.Event()

    def callbacks(self) -> ConnectionCallbacks:
        return ConnectionCallbacks(on_line=self._line, on_exit=lambda end: None, on_change=self._change)

    def _line(self, data: bytes, size: int) -> None:
        self.lines.append(json.loads(data))
        self._change()

    def _change(self) -> None:
        self.changed.set()
        self.changed = anyio.Event()

    async def until(self, ready: Any) -> None:
        with anyio.fail_after(30):  # a bound on a broken transport, never a measure of speed
            while not ready():
                await self.changed.wait()

    def answer(self, rid: int) -> dict[str, Any]:
        return next(line for line in self.lines if line.get("id") == rid)


async def _send_at_once(connection: ServerConnection, frames: list[bytes]) -> list[HttpReply]:
    """`send` from one task per frame, all started before any returns."""
    replies: dict[int, HttpReply] = {}

    async def one(index: int) -> None:
        reply = await connection.send(frames[index])
        assert reply is not None
        replies[index] = reply

    async with anyio.create_task_group() as group:
        for index in range(len(frames)):
            group.start_soon(one, index)
    return [replies[index] for index in range(len(frames))]


def _peak(stderr: str) -> int:
    return max((int(line.rsplit(" ", 1)[1]) for line in stderr.splitlines() if "posts in flight at once" in line),
               default=0)


@pytest.mark.parametrize("modern", [True, False], ids=["modern", "legacy-session"])
def test_streamable_posts_in_flight_at_once_each_get_their_own_reply(modern: bool) -> None:
    async def main(url: str) -> tuple[list[HttpReply], Heard, str | None]:
        heard = Heard()
        async with StreamableHttpServer(HttpTarget(url), heard.callbacks(), ConnectionOptions(timeout=15)) as http:
            await http.start()
            if not modern:
                opened = await http.send(_initialize())
                await heard.until(lambda: opened.done)
                assert http.session_id is not None
            replies = await _send_at_once(http, [_call(rid, modern) for rid in range(1, IN_FLIGHT + 1)])
            await heard.until(lambda: all(reply.done for reply in replies))
            return replies, heard, http.session_id

    with run_http_server("--gather", str(IN_FLIGHT)) as server:
        replies, heard, session_id = anyio.run(main, server.url)
        stderr = server.stderr_tail(200)
    # The server held every POST until all were in flight: a transport that sends one at a time never gets there.
    assert _peak(stderr) == IN_FLIGHT, stderr
    for rid, reply in enumerate(replies, start=1):
        assert (reply.status, reply.messages, reply.error) == (200, 1, ""), reply
        assert reply.sent_session_id == session_id  # None in the modern era; the one session otherwise
        assert heard.answer(rid)["result"]["content"][0]["text"] == f"call {rid}"
    assert len({id(reply) for reply in replies}) == IN_FLIGHT


def test_legacy_sse_posts_in_flight_at_once_share_the_stream_and_its_session() -> None:
    async def main(url: str) -> tuple[list[HttpReply], Heard, str | None]:
        heard = Heard()
        async with LegacySseServer(HttpTarget(url, transport=TransportKind.LEGACY_SSE), heard.callbacks(),
                                   ConnectionOptions(timeout=15)) as sse:
            await sse.start()
            await sse.send(_initialize())
            await heard.until(lambda: any(line.get("id") == 0 for line in heard.lines))
            replies = await _send_at_once(sse, [_call(rid, False) for rid in range(1, IN_FLIGHT + 1)])
            await heard.until(lambda: all(any(line.get("id") == rid for line in heard.lines)
                                          for rid in range(1, IN_FLIGHT + 1)))
            return replies, heard, sse.session_id

    with run_http_server("--mode", "sse", "--gather", str(IN_FLIGHT)) as server:
        replies, heard, session_id = anyio.run(main, server.url)
        stderr = server.stderr_tail(200)
    assert _peak(stderr) == IN_FLIGHT, stderr
    for rid, reply in enumerate(replies, start=1):
        assert reply.status == 202 and reply.done, reply
        assert reply.sent_session_id == session_id
        assert heard.answer(rid)["result"]["content"][0]["text"] == f"call {rid}"
