"""The HTTP test servers themselves: the clean one follows each transport rule, each --bug breaks exactly
its own rule, and the SDK servers answer over HTTP. Raw httpx, real processes."""

from __future__ import annotations

import contextlib
import json
import queue
import re
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import httpx
import psutil
import pytest

from tests.http_servers import RunningServer, run_http_server, run_sdk_server, start_http_server, start_sdk_server

pytestmark = pytest.mark.slow

BOTH = "application/json, text/event-stream"
LEGACY = "2025-11-25"
MODERN = "2026-07-28"
META = {"io.modelcontextprotocol/protocolVersion": MODERN, "io.modelcontextprotocol/clientCapabilities": {}}
INITIALIZE = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
              "params": {"protocolVersion": LEGACY, "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}
TOOLS_LIST = {"jsonrpc": "2.0", "id": 7, "method": "tools/list"}
INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}
DISCOVER = {"jsonrpc": "2.0", "id": "d1", "method": "server/discover", "params": {"_meta": META}}
ECHO_CALL = {"jsonrpc": "2.0", "id": 5, "method": "tools/call",
             "params": {"name": "echo", "arguments": {"text": "hi"}, "_meta": META}}
VISIBLE_ASCII = re.compile(r"[\x21-\x7e]+")  # 2025-11-25 "Session Management": the session id's alphabet
LEAK_REQUESTS = 150
LEAK_MB = 4.0  # session-pileup keeps 64 KiB per refused request: about 9.8 MB for LEAK_REQUESTS


def post(client: httpx.Client, url: str, body: Any, headers: dict[str, str] | None = None) -> httpx.Response:
    """POST a JSON value (or raw bytes) with the headers a correct client sends, overridden by ``headers``."""
    content = body if isinstance(body, bytes) else json.dumps(body).encode()
    return client.post(url, content=content, headers={"Accept": BOTH, "Content-Type": "application/json",
                                                      **(headers or {})})


def initialize(client: httpx.Client, url: str) -> dict[str, str]:
    """Open a legacy session; the headers every later request of it carries."""
    response = post(client, url, INITIALIZE)
    assert response.status_code == 200, response.text
    sid = response.headers["Mcp-Session-Id"]
    return {"Mcp-Session-Id": sid, "MCP-Protocol-Version": LEGACY}


def modern_headers(method: str, name: str | None = None) -> dict[str, str]:
    """The SEP-2243 standard headers of a modern request."""
    headers = {"MCP-Protocol-Version": MODERN, "Mcp-Method": method}
    if name is not None:
        headers["Mcp-Name"] = name
    return headers


def error_of(response: httpx.Response) -> tuple[Any, int]:
    """(id, error code) of a JSON-RPC error body."""
    body = response.json()
    return body["id"], body["error"]["code"]


def sse_events(text: str) -> list[dict[str, str]]:
    """The events of a complete SSE body (comments dropped)."""
    events = []
    for block in text.replace("\r\n", "\n").split("\n\n"):
        fields = dict(line.split(": ", 1) for line in block.splitlines() if line and not line.startswith(":"))
        if fields:
            events.append(fields)
    return events


@pytest.fixture(scope="module")
def url() -> Iterator[str]:
    """One clean streamable server for the rule tests that do not need a fresh one."""
    with start_http_server() as base:
        yield base


@pytest.fixture
def client() -> Iterator[httpx.Client]:
    """An httpx client with a generous timeout."""
    with httpx.Client(timeout=15) as http:
        yield http


# ---- the clean server, legacy era (2025-03-26 .. 2025-11-25 streamable HTTP) -------------------------


def test_initialize_opens_a_session_and_requests_are_answered_in_json(url: str, client: httpx.Client) -> None:
    """initialize -> 200 with a visible-ASCII Mcp-Session-Id; a request with it -> 200 application/json."""
    response = post(client, url, INITIALIZE)
    assert response.status_code == 200
    assert response.headers["Content-Type"] == "application/json"
    assert VISIBLE_ASCII.fullmatch(response.headers["Mcp-Session-Id"])
    assert response.json()["result"]["protocolVersion"] == LEGACY
    session = {"Mcp-Session-Id": response.headers["Mcp-Session-Id"], "MCP-Protocol-Version": LEGACY}
    listed = post(client, url, TOOLS_LIST, session)
    assert listed.status_code == 200 and listed.json()["id"] == 7 and "tools" in listed.json()["result"]


@pytest.mark.parametrize("body", [INITIALIZED, {"jsonrpc": "2.0", "id": 99, "result": {}}],
                         ids=["notification", "response"])
def test_notification_or_response_gets_202_with_no_body(url: str, client: httpx.Client, body: Any) -> None:
    """"Sending Messages" item 4: an accepted notification or response -> 202, empty body."""
    response = post(client, url, body, initialize(client, url))
    assert (response.status_code, response.content) == (202, b"")


@pytest.mark.parametrize("with_session", [True, False], ids=["in-session", "no-session"])
@pytest.mark.parametrize("body", [b"{bad", b"", b'{"jsonrpc": "2.0", "id": 1,', b"\xff\xfe"],
                         ids=["brace", "empty", "truncated", "not-utf8"])
def test_unparseable_body_gets_400_parse_error_id_null(url: str, client: httpx.Client, body: bytes,
                                                      with_session: bool) -> None:
    """JSON-RPC 2.0 section 5.1 over HTTP: 400 and -32700 with id null."""
    headers = initialize(client, url) if with_session else {}
    response = post(client, url, body, headers)
    assert response.status_code == 400
    assert error_of(response) == (None, -32700)


def test_missing_session_is_400_with_the_request_id(url: str, client: httpx.Client) -> None:
    """"Session Management" item 2: a request without Mcp-Session-Id after initialization -> 400."""
    response = post(client, url, TOOLS_LIST, {"MCP-Protocol-Version": LEGACY})
    assert response.status_code == 400
    assert error_of(response) == (7, -32600)


def test_unknown_or_deleted_session_is_404(url: str, client: httpx.Client) -> None:
    """Item 3: an unknown or terminated session -> 404; DELETE (item 5) terminates one."""
    assert post(client, url, TOOLS_LIST, {"Mcp-Session-Id": "no-such-session"}).status_code == 404
    session = initialize(client, url)
    deleted = client.delete(url, headers=session)
    assert deleted.status_code in (200, 204)
    assert post(client, url, TOOLS_LIST, session).status_code == 404
    assert client.delete(url, headers=session).status_code == 404


def test_bad_accept_is_406_and_hands_out_no_session(url: str, client: httpx.Client) -> None:
    """"Sending Messages" item 2: Accept must list both types; a refused initialize opens nothing."""
    for accept in ("application/json", "text/event-stream", "text/html"):
        response = post(client, url, INITIALIZE, {"Accept": accept})
        assert response.status_code == 406, accept
        assert "Mcp-Session-Id" not in response.headers


def test_chunked_body_is_read_like_a_sized_one(url: str, client: httpx.Client) -> None:
    """A request body sent with Transfer-Encoding: chunked is answered, and the connection stays usable."""
    pieces = iter([b'{"jsonrpc": "2.0", ', b'"id": 3, "method": "initialize", "params": ',
                   json.dumps(INITIALIZE["params"]).encode(), b"}"])
    response = client.post(url, content=pieces, headers={"Accept": BOTH, "Content-Type": "application/json"})
    assert response.status_code == 200 and response.json()["id"] == 3
    assert post(client, url, DISCOVER, modern_headers("server/discover")).status_code == 200


def test_wrong_content_type_is_415(url: str, client: httpx.Client) -> None:
    """The body must be declared application/json."""
    assert post(client, url, INITIALIZE, {"Content-Type": "text/plain"}).status_code == 415


def test_unsupported_protocol_version_header_is_400(url: str, client: httpx.Client) -> None:
    """2025-06-18+ "Protocol Version Header": an unsupported version -> 400; none at all is 2025-03-26."""
    session = initialize(client, url)
    response = post(client, url, TOOLS_LIST, {**session, "MCP-Protocol-Version": "1999-01-01"})
    assert response.status_code == 400 and error_of(response) == (7, -32600)
    without = {"Mcp-Session-Id": session["Mcp-Session-Id"]}
    assert post(client, url, TOOLS_LIST, without).status_code == 200


@pytest.mark.parametrize("origin", ["http://evil.example", "null", "http://127.0.0.1.evil.example",
                                    "http://localhost.evil.example:80", "file://"])
def test_foreign_origin_is_403(url: str, client: httpx.Client, origin: str) -> None:
    """"Security Warning": a present, invalid Origin MUST get 403 (both eras, every method)."""
    assert post(client, url, INITIALIZE, {"Origin": origin}).status_code == 403
    assert post(client, url, DISCOVER, {**modern_headers("server/discover"), "Origin": origin}).status_code == 403
    assert client.get(url, headers={"Accept": "text/event-stream", "Origin": origin}).status_code == 403


@pytest.mark.parametrize("origin", ["http://127.0.0.1:8080", "http://localhost", "https://localhost:443"])
def test_local_origin_is_accepted(url: str, client: httpx.Client, origin: str) -> None:
    """A browser on the same machine is not refused."""
    assert post(client, url, INITIALIZE, {"Origin": origin}).status_code == 200


def test_get_without_event_stream_accept_is_refused(url: str, client: httpx.Client) -> None:
    """"Listening for Messages": GET must accept text/event-stream; else 405 or 406."""
    session = initialize(client, url)
    for accept in ("application/json", ""):
        assert client.get(url, headers={**session, "Accept": accept}).status_code in (405, 406)


def test_get_stream_starts_with_a_comment_and_ends_with_its_session(client: httpx.Client) -> None:
    """GET opens an SSE stream (a keep-alive comment first); DELETE of the session ends it promptly."""
    with start_http_server("--stream-seconds", "60") as base:
        session = initialize(client, base)
        lines: queue.Queue[str | None] = queue.Queue()

        def read_stream() -> None:
            with httpx.Client(timeout=30) as reader, reader.stream(
                    "GET", base, headers={**session, "Accept": "text/event-stream"}) as response:
                lines.put(response.headers["Content-Type"])
                for line in response.iter_lines():
                    lines.put(line)
            lines.put(None)

        thread = threading.Thread(target=read_stream, daemon=True)
        thread.start()
        assert lines.get(timeout=10) == "text/event-stream"
        assert lines.get(timeout=10).startswith(":")
        started = time.monotonic()
        assert client.delete(base, headers=session).status_code in (200, 204)
        while lines.get(timeout=20) is not None:
            pass
        assert time.monotonic() - started < 45  # the stream would otherwise stay open for 60 s


def test_delete_and_get_need_a_session(url: str, client: httpx.Client) -> None:
    """Missing session -> 400, unknown -> 404, for GET and DELETE as for POST."""
    assert client.delete(url).status_code == 400
    assert client.delete(url, headers={"Mcp-Session-Id": "nope"}).status_code == 404
    assert client.get(url, headers={"Accept": "text/event-stream"}).status_code == 400


# ---- the clean server, modern era (2026-07-28, stateless) --------------------------------------------


def test_modern_request_is_stateless(url: str, client: httpx.Client) -> None:
    """A request with _meta and matching headers -> 200, no session id minted (or needed)."""
    response = post(client, url, DISCOVER, modern_headers("server/discover"))
    assert response.status_code == 200 and "Mcp-Session-Id" not in response.headers
    assert response.json()["result"]["supportedVersions"] == [MODERN]
    called = post(client, url, ECHO_CALL, {**modern_headers("tools/call", "echo"), "Mcp-Session-Id": "ignored"})
    assert called.status_code == 200 and called.json()["result"]["content"][0]["text"] == "hi"


@pytest.mark.parametrize(("body", "headers"), [
    pytest.param(DISCOVER, {"MCP-Protocol-Version": LEGACY, "Mcp-Method": "server/discover"}, id="version-differs"),
    pytest.param(DISCOVER, {"Mcp-Method": "server/discover"}, id="version-missing"),
    pytest.param(DISCOVER, modern_headers("tools/list"), id="method-differs"),
    pytest.param(DISCOVER, {"MCP-Protocol-Version": MODERN}, id="method-missing"),
    pytest.param(ECHO_CALL, modern_headers("tools/call", "add"), id="name-differs"),
    pytest.param(ECHO_CALL, modern_headers("tools/call"), id="name-missing"),
    pytest.param(ECHO_CALL, modern_headers("tools/call", "=?base64?YWRk?="), id="name-base64-differs"),
])
def test_modern_header_mismatch_is_400_header_mismatch(url: str, client: httpx.Client, body: Any,
                                                       headers: dict[str, str]) -> None:
    """2026-07-28 "Server Validation" (SEP-2243): 400 with -32020 HeaderMismatch, carrying the request id."""
    response = post(client, url, body, headers)
    assert response.status_code == 400
    assert error_of(response) == (body["id"], -32020)


def test_modern_base64_name_is_decoded(url: str, client: httpx.Client) -> None:
    """"Value Encoding": the server decodes an =?base64?...?= Mcp-Name before comparing it."""
    response = post(client, url, ECHO_CALL, modern_headers("tools/call", "=?base64?ZWNobw==?="))
    assert response.status_code == 200, response.text


def test_modern_errors_have_their_statuses(url: str, client: httpx.Client) -> None:
    """"Request Metadata": unsupported version -> 400 -32022, unknown method -> 404 -32601."""
    other = {**META, "io.modelcontextprotocol/protocolVersion": "2099-01-01"}
    unsupported = {"jsonrpc": "2.0", "id": 2, "method": "server/discover", "params": {"_meta": other}}
    response = post(client, url, unsupported, {"MCP-Protocol-Version": "2099-01-01", "Mcp-Method": "server/discover"})
    assert response.status_code == 400 and error_of(response) == (2, -32022)
    assert response.json()["error"]["data"]["supported"] == [MODERN]
    unknown = {"jsonrpc": "2.0", "id": 3, "method": "no/such", "params": {"_meta": META}}
    response = post(client, url, unknown, modern_headers("no/such"))
    assert response.status_code == 404 and error_of(response) == (3, -32601)


def test_modern_notification_gets_202_and_get_is_405(url: str, client: httpx.Client) -> None:
    """A notification POST -> 202; GET/DELETE are gone in 2026-07-28 ("Backward Compatibility": 405)."""
    note = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1, "_meta": META}}
    response = post(client, url, note, modern_headers("notifications/cancelled"))
    assert (response.status_code, response.content) == (202, b"")
    assert client.get(url, headers={"Accept": "text/event-stream", "MCP-Protocol-Version": MODERN}).status_code == 405


def test_both_eras_at_once(url: str, client: httpx.Client) -> None:
    """A legacy session keeps working while modern requests come and go on the same endpoint."""
    session = initialize(client, url)
    assert post(client, url, DISCOVER, modern_headers("server/discover")).status_code == 200
    assert post(client, url, TOOLS_LIST, session).status_code == 200
    assert post(client, url, DISCOVER, modern_headers("server/discover")).status_code == 200


# ---- options ------------------------------------------------------------------------------------------


def test_sse_responses_carry_one_message_event_with_an_id(client: httpx.Client) -> None:
    """--sse-responses: a request gets text/event-stream, a priming event (an id, empty data) then one `message`
    event; notifications stay 202."""
    with start_http_server("--sse-responses") as base:
        response = post(client, base, INITIALIZE)
        assert response.status_code == 200 and response.headers["Content-Type"] == "text/event-stream"
        assert "Mcp-Session-Id" in response.headers
        priming, event = sse_events(response.text)
        assert priming["id"] and not priming.get("data", "").strip()
        assert event["event"] == "message" and event["id"]
        assert json.loads(event["data"])["result"]["protocolVersion"] == LEGACY
        session = {"Mcp-Session-Id": response.headers["Mcp-Session-Id"], "MCP-Protocol-Version": LEGACY}
        assert post(client, base, INITIALIZED, session).status_code == 202
        modern = post(client, base, DISCOVER, modern_headers("server/discover"))
        assert [json.loads(e["data"])["id"] for e in sse_events(modern.text) if e.get("data", "").strip()] == ["d1"]


def test_server_bug_passes_through(client: httpx.Client) -> None:
    """--server-bug parse-code: the wrapped server's wrong code shows over HTTP, the status stays 400."""
    with start_http_server("--server-bug", "parse-code") as base:
        response = post(client, base, b"{bad")
        assert response.status_code == 400 and error_of(response) == (None, -32603)


def test_unanswered_request_holds_its_post(client: httpx.Client) -> None:
    """--server-bug hang-method: the POST gets no answer (no 202 either) while other requests are served."""
    with start_http_server("--server-bug", "hang-method") as base:
        session = initialize(client, base)
        hanging = {"jsonrpc": "2.0", "id": 9, "method": "resources/list"}
        with pytest.raises(httpx.ReadTimeout), httpx.Client(timeout=1.5) as short:
            post(short, base, hanging, session)
        assert post(client, base, TOOLS_LIST, session).status_code == 200


# ---- 2024-11-05 HTTP+SSE ------------------------------------------------------------------------------


class SseStream:
    """A GET /sse stream read in a thread; events arrive on a queue."""

    def __init__(self, url: str, headers: dict[str, str] | None = None) -> None:
        """Open the stream."""
        self.events: queue.Queue[dict[str, str]] = queue.Queue()
        self.url, self.headers = url, headers or {}
        self.thread = threading.Thread(target=self.read, daemon=True)
        self.thread.start()

    def read(self) -> None:
        """Parse SSE lines into events until the stream ends."""
        # The stream breaks when the server stops at the end of the test: that is not a failure.
        with contextlib.suppress(httpx.HTTPError), httpx.Client(timeout=httpx.Timeout(10, read=60)) as reader, \
                reader.stream("GET", self.url, headers=self.headers) as response:
            fields: dict[str, str] = {}
            for line in response.iter_lines():
                if not line:
                    if fields:
                        self.events.put(fields)
                    fields = {}
                elif not line.startswith(":"):
                    name, _, value = line.partition(":")
                    fields[name] = value.removeprefix(" ")

    def next(self) -> dict[str, str]:
        """The next event (fails after 10 s)."""
        return self.events.get(timeout=10)


@pytest.mark.parametrize("endpoint_json", [False, True], ids=["uri", "json"])
def test_sse_mode_endpoint_then_answers_on_the_stream(client: httpx.Client, endpoint_json: bool) -> None:
    """GET /sse: `endpoint` first; each POST -> 202; its answer (even a -32700) is a `message` event."""
    args = ["--mode", "sse", *(["--endpoint-json"] if endpoint_json else [])]
    with start_http_server(*args) as base:
        assert base.endswith("/sse")
        stream = SseStream(base)
        endpoint = stream.next()
        assert endpoint["event"] == "endpoint"
        if endpoint_json:
            data = json.loads(endpoint["data"])
            target, headers = str(httpx.URL(base).join(data["url"])), {"Mcp-Session-Id": data["sessionId"]}
        else:
            assert endpoint["data"].startswith("/messages?session_id=")
            target, headers = str(httpx.URL(base).join(endpoint["data"])), {}
        accepted = post(client, target, INITIALIZE, headers)
        assert (accepted.status_code, accepted.content) == (202, b"")
        answer = stream.next()
        assert answer["event"] == "message" and json.loads(answer["data"])["id"] == 1
        assert post(client, target, b"{bad", headers).status_code == 202
        assert json.loads(stream.next()["data"])["error"]["code"] == -32700
        bare = str(httpx.URL(base).join("/messages"))
        assert post(client, bare, TOOLS_LIST).status_code == 400
        assert post(client, bare + "?session_id=nope", TOOLS_LIST).status_code == 404
        assert client.get(base, headers={"Origin": "http://evil.example"}).status_code == 403


# ---- each bug switch changes exactly its own rule -----------------------------------------------------


def rule_refusal_keeps_id(client: httpx.Client, server: RunningServer) -> bool:
    """400 refusals of a request (missing session, bad version header) carry its id."""
    missing = post(client, server.url, TOOLS_LIST)
    bad_version = post(client, server.url, TOOLS_LIST, {**initialize(client, server.url),
                                                        "MCP-Protocol-Version": "1999-01-01"})
    return all(r.status_code == 400 and r.json()["id"] == 7 for r in (missing, bad_version))


def rule_notification_202(client: httpx.Client, server: RunningServer) -> bool:
    """A notification in a session gets 202."""
    return post(client, server.url, INITIALIZED, initialize(client, server.url)).status_code == 202


def rule_no_session_on_406(client: httpx.Client, server: RunningServer) -> bool:
    """A 406 hands out no session id."""
    response = post(client, server.url, INITIALIZE, {"Accept": "text/html"})
    return response.status_code == 406 and "Mcp-Session-Id" not in response.headers


def rule_origin_403(client: httpx.Client, server: RunningServer) -> bool:
    """A foreign Origin gets 403."""
    return post(client, server.url, INITIALIZE, {"Origin": "http://evil.example"}).status_code == 403


def rule_refusals_leak_nothing(client: httpx.Client, server: RunningServer) -> bool:
    """Refused requests do not make the server's memory grow."""
    process = psutil.Process(server.pid)
    before = process.memory_info().rss
    for _ in range(LEAK_REQUESTS):
        post(client, server.url, TOOLS_LIST)  # 400: no session
    return (process.memory_info().rss - before) / 1e6 < LEAK_MB


def rule_header_mismatch_400(client: httpx.Client, server: RunningServer) -> bool:
    """A modern request whose Mcp-Method differs from its body gets 400 -32020."""
    response = post(client, server.url, DISCOVER, modern_headers("tools/list"))
    return response.status_code == 400 and response.json()["error"]["code"] == -32020


def rule_unparseable_400(client: httpx.Client, server: RunningServer) -> bool:
    """Unparseable -> 400 -32700 id null."""
    response = post(client, server.url, b"{bad")
    return response.status_code == 400 and error_of(response) == (None, -32700)


def rule_unknown_session_404(client: httpx.Client, server: RunningServer) -> bool:
    """Unknown session -> 404."""
    return post(client, server.url, TOOLS_LIST, {"Mcp-Session-Id": "nope"}).status_code == 404


def rule_modern_served(client: httpx.Client, server: RunningServer) -> bool:
    """A modern request with the right headers is answered with 200 and no session."""
    response = post(client, server.url, DISCOVER, modern_headers("server/discover"))
    return response.status_code == 200 and "Mcp-Session-Id" not in response.headers


RULES: dict[str, Callable[[httpx.Client, RunningServer], bool]] = {
    "refusal-keeps-id": rule_refusal_keeps_id,
    "notification-202": rule_notification_202,
    "no-session-on-406": rule_no_session_on_406,
    "origin-403": rule_origin_403,
    "refusals-leak-nothing": rule_refusals_leak_nothing,
    "header-mismatch-400": rule_header_mismatch_400,
    "unparseable-400": rule_unparseable_400,
    "unknown-session-404": rule_unknown_session_404,
    "modern-served": rule_modern_served,
}
BROKEN_RULE = {
    None: None,
    "lost-id-400": "refusal-keeps-id",
    "status-200-notification": "notification-202",
    "session-on-406": "no-session-on-406",
    "no-origin-check": "origin-403",
    "session-pileup": "refusals-leak-nothing",
    "ignore-headers": "header-mismatch-400",
}


@pytest.mark.parametrize("bug", list(BROKEN_RULE), ids=lambda bug: bug or "clean")
def test_each_bug_breaks_exactly_its_rule(client: httpx.Client, bug: str | None) -> None:
    """The clean server keeps every rule; each bug breaks its own rule and no other."""
    with run_http_server(*(["--bug", bug] if bug else [])) as server:
        broken = {name for name, rule in RULES.items() if not rule(client, server)}
    assert broken == ({BROKEN_RULE[bug]} if bug else set())


def test_lost_id_also_drops_the_id_of_a_header_mismatch(client: httpx.Client) -> None:
    """lost-id-400 applies to every 400 refusal of a request, the modern one included."""
    with start_http_server("--bug", "lost-id-400") as base:
        response = post(client, base, DISCOVER, modern_headers("tools/list"))
        assert response.status_code == 400 and error_of(response) == (None, -32020)


def test_session_on_406_hands_out_a_usable_session(client: httpx.Client) -> None:
    """The id from the 406 names a real session (not 404): the leak is observable from outside."""
    with start_http_server("--bug", "session-on-406") as base:
        refused = post(client, base, INITIALIZE, {"Accept": "text/html"})
        assert refused.status_code == 406
        reused = post(client, base, INITIALIZE, {"Mcp-Session-Id": refused.headers["Mcp-Session-Id"]})
        assert reused.status_code == 200


def test_ignore_headers_serves_the_body(client: httpx.Client) -> None:
    """ignore-headers: a request whose headers name another method is served as its body says."""
    with start_http_server("--bug", "ignore-headers") as base:
        response = post(client, base, ECHO_CALL, {"MCP-Protocol-Version": LEGACY, "Mcp-Method": "tools/list"})
        assert response.status_code == 200 and response.json()["result"]["content"][0]["text"] == "hi"


# ---- the SDK servers over HTTP ------------------------------------------------------------------------


def first_message(response: httpx.Response) -> dict[str, Any]:
    """The JSON-RPC message of a JSON or single-event SSE response."""
    if response.headers["Content-Type"].startswith("text/event-stream"):
        return json.loads(sse_events(response.text)[0]["data"])
    return response.json()


@pytest.mark.sdk
@pytest.mark.parametrize("name", ["sdk1", "sdk2"])
def test_sdk_server_answers_initialize_over_streamable_http(client: httpx.Client, name: str) -> None:
    """Legacy era: initialize -> a session id and a result; a foreign Origin -> 403 (protection is on)."""
    with start_sdk_server(name) as base:
        response = post(client, base, INITIALIZE)
        assert response.status_code == 200, response.text
        assert VISIBLE_ASCII.fullmatch(response.headers["Mcp-Session-Id"])
        assert first_message(response)["result"]["protocolVersion"] == LEGACY
        assert post(client, base, INITIALIZE, {"Origin": "http://evil.example"}).status_code == 403


@pytest.mark.sdk
def test_sdk2_server_answers_discover_statelessly(client: httpx.Client) -> None:
    """Modern era on mcp 2.x: server/discover with the SEP-2243 headers -> 200, no session."""
    with start_sdk_server("sdk2") as base:
        response = post(client, base, DISCOVER, modern_headers("server/discover"))
        assert response.status_code == 200 and "Mcp-Session-Id" not in response.headers
        assert first_message(response)["result"]["supportedVersions"] == [MODERN]
        mismatch = post(client, base, DISCOVER, modern_headers("tools/list"))
        assert mismatch.status_code == 400 and error_of(mismatch) == ("d1", -32020)


@pytest.mark.sdk
@pytest.mark.parametrize("name", ["sdk1", "sdk2"])
def test_sdk_session_id_on_a_refusal_names_no_session(client: httpx.Client, name: str) -> None:
    """Both SDKs put an Mcp-Session-Id header on a 406 (and on 400s), but that id is unknown afterwards
    (404): a session-leak oracle must try the id before it reports one."""
    with run_sdk_server(name) as server:
        refused = post(client, server.url, INITIALIZE, {"Accept": "text/html"})
        assert refused.status_code == 406 and "Mcp-Session-Id" in refused.headers
        reused = post(client, server.url, INITIALIZE, {"Mcp-Session-Id": refused.headers["Mcp-Session-Id"]})
        assert reused.status_code == 404


@pytest.mark.sdk
def test_sdk1_sse_server_answers_initialize_on_its_stream(client: httpx.Client) -> None:
    """2024-11-05 HTTP+SSE on mcp 1.x: endpoint event, POST -> 202, the result as a `message` event."""
    with start_sdk_server("sdk1-sse") as base:
        stream = SseStream(base)
        endpoint = stream.next()
        assert endpoint["event"] == "endpoint" and "session_id=" in endpoint["data"]
        target = str(httpx.URL(base).join(endpoint["data"]))
        assert post(client, target, {**INITIALIZE, "params": {**INITIALIZE["params"],
                                                              "protocolVersion": "2024-11-05"}}).status_code == 202
        answer = stream.next()
        assert answer["event"] == "message"
        assert json.loads(answer["data"])["result"]["protocolVersion"] == "2024-11-05"
