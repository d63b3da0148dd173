"""MCP test server over HTTP: spec-correct by default, one transport misbehaviour per ``--bug NAME``.

Usage::

    python tests/servers/http_server.py --port N [--mode streamable|sse] [--sse-responses]
        [--endpoint-json] [--stream-seconds S] [--verbose] [--gather N] [--busy] [--exit-on METHOD] [--delay-ms MS]
        [--max-version V [--plain-version-refusal]] [--mirror] [--host-check] [--serve KIND] [--serial]
        [--plain-refusals] [--max-body BYTES] [--rate-limit N]
        [--bug NAME]... [--server-bug NAME]...

Binds 127.0.0.1 only (``--port 0`` picks a free port); prints ``ready http://127.0.0.1:N/mcp`` (or
``/sse``) to stderr once listening; exits 0 on SIGTERM. Standard library only. Every JSON-RPC message
is handled by ``mcp_server.Server`` (``--server-bug`` passes its bugs through); this file adds only the
transport rules, each commented with the spec section it comes from:

- ``streamable`` (path ``/mcp``), both eras at once (2026-07-28 basic/versioning, "Backward
  Compatibility": a dual-era server MAY serve both on one endpoint). A POST is modern when its body's
  ``params._meta`` names a protocol version, or when its ``MCP-Protocol-Version`` header is 2026-07-28
  and it is not an ``initialize``; modern POSTs get a fresh ``Server`` each and no session. Everything
  else is the 2025-03-26 .. 2025-11-25 transport: ``initialize`` opens a session (``Mcp-Session-Id``),
  GET opens a stream for server messages, DELETE ends the session.
- ``sse`` (path ``/sse``): the deprecated 2024-11-05 HTTP+SSE transport. GET /sse opens the stream and
  sends ``event: endpoint`` with ``/messages?session_id=ID``; POSTs there get 202 and every answer
  goes out as ``event: message`` on the stream. ``--endpoint-json`` sends ``{"url": "/messages",
  "sessionId": ID}`` instead and then takes the id from an ``Mcp-Session-Id`` header: no spec revision
  or SDK does this (2024-11-05 says the data is a URI; the Python SDK sends ``?session_id=``, the
  TypeScript SDK ``?sessionId=``, both accepted here), so it exists only to see a client cope with it.

``--serve KIND`` serves another stdio test server's class over this transport: ``surface`` (as ``--surface``),
``negative-refs`` (negative_refs_server.py), ``tasks`` (tasks_server.py, its tasks kept in one store for every
POST) or ``read-only-tools`` (read_only_tools.py: tool_server.py's tools, `search` annotated read-only).
``--serial`` (not a bug) handles one POST at a time, as a server on one event loop does: a request that arrives
while another is handled waits for it, so a handler that never returns leaves every later request unanswered.

``--max-version V`` (not a bug) serves the legacy versions up to V only, as a stateful server on the Go SDK
does: an ``MCP-Protocol-Version`` header newer than V, and any modern-era request, get 400 with -32022 and
``data.supported`` listing the versions it serves, newest first; ``initialize`` asking for a newer version is
answered with V. ``--plain-version-refusal`` refuses them with a plain-text 400 instead (the Go SDK's
``plaintextstatefulrejection`` setting, and its check of a legacy header it does not know).

``--plain-refusals`` (not a bug) answers its 401, 403, 404, 413 and 429 refusals as a reverse proxy or a web
framework does, before any MCP code runs: a plain-text body (413: an HTML page), no JSON-RPC error; the body of
such a refusal is free. ``--max-body BYTES`` (not a bug) refuses a longer request body with 413 (default 16 MiB).
"""

from __future__ import annotations

import argparse
import base64
import binascii
import json
import os
import queue
import re
import secrets
import select
import signal
import socket
import sys
import threading
import time
from collections import OrderedDict
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

from in_flight import InFlight
from mcp_server import BUGS as SERVER_BUGS
from mcp_server import (
    LEGACY_VERSIONS,
    META_VERSION,
    MODERN_VERSION,
    Server,
    is_valid_id,
    log,
    reject_constant,
)
from mirror_tools import MirrorServer
from negative_refs_server import NEGATIVE_BUGS, NegativeRefsServer
from read_only_tools import ReadOnlyToolServer
from surface_server import SURFACE_BUGS, SurfaceServer
from tasks_server import TasksServer

BUGS: dict[str, str] = {
    "lost-id-400": "a request refused with 400 by the transport carries id null instead of its id",
    "status-200-notification": "a POST of only notifications or responses gets 200 (empty body) instead of 202",
    "session-on-406": "a POST refused with 406 (bad Accept) still creates a session and returns its id",
    "no-origin-check": "a foreign Origin is accepted instead of refused with 403",
    "session-pileup": "every refused request creates a session that is never freed (memory grows)",
    "ignore-headers": "modern: MCP-Protocol-Version / Mcp-Method / Mcp-Name disagreeing with the body accepted",
    "ignore-param-headers": "modern, --mirror: an Mcp-Param header missing, disagreeing with the body or broken "
                            "accepted",
    "session-id-space": "session ids hold a space (streamable HTTP allows visible ASCII, 0x21-0x7E, only)",
    "refuse-initialize-version": "with --max-version: an initialize asking for a version the server does not "
                                 "serve is refused with 400 instead of answered with one it does",
    "late-in-flight": "not a bug: a call of count_notes or find_notes (--surface) waits for a call of the other "
                      "one in flight before it is answered",
    "swap-in-flight": "late-in-flight, but the two calls in flight get each other's results",
    "late-cancel": "not a bug: a list request with a progressToken is answered on an SSE stream after 10s, "
                   "unless cancelled first (then the stream ends with no answer)",
    "cancel-ignored": "late-cancel, but a cancelled request is answered anyway, once a later request has been",
    "error-without-id": "modern: a JSON-RPC error answered with a 4xx status carries no id (the transport allows "
                        "it; unhelpful for a request whose id was readable)",
    "session-optional": "not a bug: a request without Mcp-Session-Id is served on a temporary session (a server "
                        "that hands out sessions but does not require them)",
    "unparseable-500": "a body that does not parse fails the handler: HTTP 500 with -32603 (id null) instead of "
                       "400 with -32700",
}
IN_FLIGHT = InFlight()
BUSY_LOCK = threading.Lock()
BUSY = [0, 0]  # --busy: POSTs being handled now, POSTs refused so far
POSTS_SEEN = [0]  # --rate-limit: POSTs received so far
# --rate-limit's refusal, as a rate limiter in front of the MCP handler sends it: JSON-RPC, id null, its own code.
RATE_LIMITED = -32029
BUSY_SECONDS = 0.05
SERVER_CLASS: list[type[Server]] = [Server]  # --surface: surface_server.SurfaceServer; --serve: another class
SERVED: dict[str, type[Server]] = {"surface": SurfaceServer, "negative-refs": NegativeRefsServer, "tasks": TasksServer,
                                   "read-only-tools": ReadOnlyToolServer}
SERIAL_LOCK = threading.Lock()  # --serial: the POST being handled

HOST = "127.0.0.1"
MCP_PATH = "/mcp"
SSE_PATH = "/sse"
MESSAGES_PATH = "/messages"
MAX_BODY = 16 * 1024 * 1024  # the fuzzer sends 1 MB frames; more than this is refused with 413
MAX_SESSIONS = 100  # live legacy sessions; the oldest is ended first (2025-11-25: a server MAY end one)
SSE_MAX_SECONDS = 3600.0  # a 2024-11-05 stream lives as long as its client, but never past this
KEEPALIVE_SECONDS = 1.0
HANG_SECONDS = 60.0  # an unanswered request (a --server-bug such as hang-method) holds its POST this long
LEAK_BYTES = 64 * 1024  # what one piled-up session holds, so that RSS visibly grows
LEAK_LIMIT = 2000  # even a leak stays bounded (128 MiB)
PLAIN_REFUSALS = (401, 403, 404, 413, 429)  # --plain-refusals: the refusals whose body is free
UNSUPPORTED_VERSION = -32022  # 2026-07-28 UnsupportedProtocolVersionError
HEADER_MISMATCH = -32020  # 2026-07-28 streamable-http, "Server Validation" (SEP-2243 drafts said -32001)
INVALID_REQUEST = -32600
# 2026-07-28 streamable-http: -32601 MUST be 404 ("Request Metadata"), an unsupported version and a header
# mismatch MUST be 400; the other client-fault codes get 400 as in the mcp 2.x SDK. -32004 is the release
# candidate's unsupported-version code (the version-code server bug sends it).
MODERN_ERROR_STATUS = {-32700: 400, -32600: 400, -32602: 400, -32601: 404,
                       -32020: 400, -32021: 400, -32022: 400, -32004: 400}
NAME_BEARING = {"tools/call": "name", "prompts/get": "name", "resources/read": "uri"}  # SEP-2243 Mcp-Name
LOCAL_HOST = re.compile(r"(127\.0\.0\.1|localhost|\[::1\])(:[0-9]{1,5})?")
HOST_CHECK = [False]  # --host-check
LOCAL_ORIGIN = re.compile(r"https?://(127\.0\.0\.1|localhost|\[::1\])(:[0-9]{1,5})?")
NUMERIC_TEXT = re.compile(r"-?[0-9]+(\.0+)?")  # "42" and "42.0" equal 42 (the spec's SHOULD compare numerically)
BASE64_SENTINEL = re.compile(r"=\?base64\?(.*)\?=")
UNPARSEABLE = object()


def peek_json(body: bytes) -> Any:
    """The body's JSON value, or UNPARSEABLE; as strict as ``Server.handle_line``, which parses it again."""
    text = body[3:] if body.startswith(b"\xef\xbb\xbf") else body
    if not text.strip(b" \t\r\n"):
        return UNPARSEABLE
    try:
        return json.loads(text.decode("utf-8"), parse_constant=reject_constant)
    except (ValueError, RecursionError):  # UnicodeDecodeError and JSONDecodeError are ValueErrors
        return UNPARSEABLE


def request_id(value: Any) -> Any:
    """The id of a single request body, or None when there is none to echo (notification, batch, junk)."""
    if isinstance(value, dict) and "method" in value and is_valid_id(value.get("id")):
        return value["id"]
    return None


def is_request_shaped(value: Any) -> bool:
    """Whether the body holds a message that is owed a reply (JSON-RPC 2.0 section 4: it has an id)."""
    items = value if isinstance(value, list) else [value]
    return any(isinstance(item, dict) and "method" in item and "id" in item for item in items)


def meta_version(value: Any) -> Any:
    """The protocol version the body's ``params._meta`` names, or None (2026-07-28 basic/index)."""
    params = value.get("params") if isinstance(value, dict) else None
    meta = params.get("_meta") if isinstance(params, dict) else None
    return meta.get(META_VERSION) if isinstance(meta, dict) else None


def _typed(value: Any, kind: str) -> bool:
    """True when a JSON value has the primitive type a mirrored argument declares (and a header can carry it)."""
    if kind == "integer":
        return isinstance(value, int) and not isinstance(value, bool)
    if kind == "boolean":
        return isinstance(value, bool)
    # A lone surrogate has no UTF-8 form, so no header can carry it: such a string is not compared.
    return isinstance(value, str) and value.encode("utf-8", "surrogatepass").decode("utf-8", "replace") == value


def decode_header_value(raw: str) -> str | None:
    """Undo SEP-2243's ``=?base64?...?=`` sentinel; None when the Base64 is broken."""
    match = BASE64_SENTINEL.fullmatch(raw)
    if match is None:
        return raw
    try:
        return base64.b64decode(match.group(1), validate=True).decode("utf-8")
    except (binascii.Error, UnicodeDecodeError):
        return None


def media_types(header: str | None) -> set[str]:
    """The media types a header lists, lower-cased and without parameters."""
    return {part.split(";")[0].strip().lower() for part in (header or "").split(",") if part.strip()}


def accepts(header: str | None, wanted: str) -> bool:
    """Whether an Accept header covers ``wanted`` (wildcards count)."""
    listed = media_types(header)
    return bool({wanted, wanted.split("/")[0] + "/*", "*/*"} & listed)


@dataclass
class Session:
    """One legacy session (streamable) or one 2024-11-05 SSE connection, with its own ``Server``."""

    sid: str
    server: Server
    lock: threading.Lock = field(default_factory=threading.Lock)
    ended: threading.Event = field(default_factory=threading.Event)
    outbox: queue.Queue[Any] = field(default_factory=queue.Queue)  # sse mode: messages for the stream
    events: int = 0
    ballast: bytes = b""  # session-pileup: what a leaked session costs

    def handle(self, body: bytes) -> list[Any]:
        """Feed one POST body to this session's server; ``Server`` is not thread-safe, so one at a time."""
        with self.lock:
            return self.server.handle_line(body)

    def next_event_id(self) -> str:
        """Event ids unique across all streams of the session (2025-11-25 "Resumability and Redelivery")."""
        with self.lock:
            self.events += 1
            return f"{self.sid}-{self.events}"


class SessionTable:
    """Live sessions (the oldest ended beyond MAX_SESSIONS) plus, for session-pileup, the leaked ones."""

    def __init__(self, server_bugs: set[str], *, spaced_ids: bool = False) -> None:
        """Start empty."""
        self.server_bugs = server_bugs
        self.spaced_ids = spaced_ids
        self.live: OrderedDict[str, Session] = OrderedDict()
        self.leaked: list[Session] = []
        self.lock = threading.Lock()

    def new(self) -> Session:
        """A session with a fresh ``Server``, not yet registered."""
        sid = f"{secrets.token_hex(8)} {secrets.token_hex(8)}" if self.spaced_ids else secrets.token_hex(16)
        return Session(sid, SERVER_CLASS[0](set(self.server_bugs)))

    def add(self, session: Session) -> None:
        """Register a session; end the oldest when there are too many."""
        with self.lock:
            self.live[session.sid] = session
            while len(self.live) > MAX_SESSIONS:
                _, oldest = self.live.popitem(last=False)
                oldest.ended.set()

    def get(self, sid: str) -> Session | None:
        """The live session with this id, marked as recently used."""
        with self.lock:
            session = self.live.get(sid)
            if session is not None:
                self.live.move_to_end(sid)
            return session

    def remove(self, sid: str) -> Session | None:
        """End a session; later requests with its id get 404."""
        with self.lock:
            session = self.live.pop(sid, None)
        if session is not None:
            session.ended.set()
        return session

    def leak(self) -> None:
        """session-pileup: keep a session no client knows about, forever."""
        with self.lock:
            if len(self.leaked) < LEAK_LIMIT:
                session = self.new()
                session.ballast = secrets.token_bytes(LEAK_BYTES)  # random bytes: every page is touched
                self.leaked.append(session)


@dataclass
class Options:
    """The command line, as the handler needs it."""

    mode: str
    sse_responses: bool
    endpoint_json: bool
    stream_seconds: float
    verbose: bool
    bugs: set[str]
    gather: int = 0  # hold each POST until this many are in flight at once (0: never hold)
    busy: bool = False  # refuse a POST that arrives while another is handled (429 and 503 in turn)
    exit_on: str | None = None  # the process exits when it reads a request for this method
    delay: float = 0.0  # seconds every POST waits before it is handled (a server far away, or doing real work)
    max_version: str | None = None  # the newest legacy version served (None: every one, and the modern era)
    plain_version_refusal: bool = False  # refuse a version with a plain-text 400 instead of -32022
    serial: bool = False  # handle one POST at a time (a request waits while another is handled)
    plain_refusals: bool = False  # 401, 403, 404, 413, 429 carry a text body (413: an HTML page), no JSON-RPC error
    max_body: int = MAX_BODY  # a longer request body is refused with 413
    rate_limit: int = 0  # POSTs served before every later one is refused with 429 (0: no limit)


class McpHttpServer(ThreadingHTTPServer):
    """A threading HTTP server that carries the options and the session table."""

    daemon_threads = True  # open streams must not keep the process alive after SIGTERM
    request_queue_size = 64

    def __init__(self, port: int, options: Options, sessions: SessionTable) -> None:
        """Bind 127.0.0.1 only (2025-11-25 streamable HTTP, "Security Warning": SHOULD bind localhost)."""
        self.options = options
        self.sessions = sessions
        super().__init__((HOST, port), Handler)


class Refused(Exception):
    """Raised inside a handler to answer with an HTTP error status and a JSON-RPC error body."""

    def __init__(self, status: int, message: str, rid: Any = None, code: int = INVALID_REQUEST,
                 headers: dict[str, str] | None = None) -> None:
        """Keep what the response needs."""
        super().__init__(message)
        self.status, self.message, self.rid, self.code = status, message, rid, code
        self.headers = headers or {}


class Answered(Exception):
    """Raised inside a handler once it has written its whole response itself."""


class Handler(BaseHTTPRequestHandler):
    """One HTTP connection; keep-alive (HTTP/1.1), so every response is length-delimited or chunked."""

    protocol_version = "HTTP/1.1"
    timeout = 300  # an idle keep-alive connection (or a stalled body) frees its thread after this
    disable_nagle_algorithm = True  # headers and body go out in two writes: no 40 ms delayed-ACK stall
    server: McpHttpServer

    # ---- plumbing -----------------------------------------------------------------------------

    @property
    def options(self) -> Options:
        """The server's options."""
        return self.server.options

    @property
    def sessions(self) -> SessionTable:
        """The server's session table."""
        return self.server.sessions

    def log_message(self, format: str, *args: Any) -> None:
        """Per-request access lines only with --verbose: a fuzzer sends thousands."""
        if self.options.verbose:
            log(format % args)

    def read_body(self) -> bytes:
        """The whole request body (Content-Length or chunked), read before answering so keep-alive works."""
        if "chunked" in (self.headers.get("Transfer-Encoding") or "").lower():
            return self.read_chunked()
        try:
            length = int(self.headers.get("Content-Length") or 0)
        except ValueError:
            length = -1
        if length < 0:
            self.close_connection = True
            raise Refused(400, "bad request: invalid Content-Length")
        if length > self.options.max_body:
            self.close_connection = True
            raise Refused(413, "request body too large")
        return self.rfile.read(length)

    def read_chunked(self) -> bytes:
        """A chunked request body (RFC 9112 section 7.1), trailers skipped."""
        body = bytearray()
        while True:
            line = self.rfile.readline(1024)
            try:
                size = int(line.split(b";")[0].strip(), 16)
            except ValueError:
                self.close_connection = True
                raise Refused(400, "bad request: invalid chunk size") from None
            if size == 0:
                while self.rfile.readline(1024).strip():
                    pass
                return bytes(body)
            if len(body) + size > self.options.max_body:
                self.close_connection = True
                raise Refused(413, "request body too large")
            body += self.rfile.read(size)
            self.rfile.readline(1024)

    def send(self, status: int, body: bytes = b"", content_type: str | None = None,
             headers: dict[str, str] | None = None) -> None:
        """A complete, length-delimited response."""
        self.send_response(status)
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        if content_type is not None:
            self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def send_json(self, status: int, value: Any, headers: dict[str, str] | None = None) -> None:
        """One JSON value; ASCII escapes keep lone surrogates writable (as mcp_server.write does)."""
        self.send(status, encode(value), "application/json", headers)

    def refuse(self, refused: Refused) -> None:
        """An HTTP error with a JSON-RPC error body; session-pileup leaks a session on every one."""
        if "session-pileup" in self.options.bugs:
            self.sessions.leak()
        if self.options.plain_refusals and refused.status in PLAIN_REFUSALS:
            # As a reverse proxy or a web framework answers before any MCP code runs: a page, not JSON-RPC.
            if refused.status == 413:
                page = f"<html><body><h1>413 Payload Too Large</h1><p>{refused.message}</p></body></html>"
                self.send(413, page.encode(), "text/html; charset=utf-8", refused.headers)
            else:
                self.send(refused.status, f"{refused.message}\n".encode(), "text/plain; charset=utf-8",
                          refused.headers)
            return
        rid = refused.rid
        if refused.status == 400 and "lost-id-400" in self.options.bugs:
            rid = None
        # JSON-RPC 2.0 section 5: the id is the request's, or null when there is none to echo.
        error = {"jsonrpc": "2.0", "id": rid, "error": {"code": refused.code, "message": refused.message}}
        self.send_json(refused.status, error, refused.headers)

    def start_stream(self, headers: dict[str, str] | None = None) -> None:
        """Begin a chunked text/event-stream response."""
        self.send_response(200)
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        # 2026-07-28 streamable-http, "Receiving Messages": SHOULD send X-Accel-Buffering: no on SSE.
        self.send_header("X-Accel-Buffering", "no")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()

    def write_chunk(self, data: bytes) -> None:
        """One chunk of a chunked body (RFC 9112 section 7.1)."""
        self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))

    def end_stream(self) -> None:
        """The last chunk."""
        self.wfile.write(b"0\r\n\r\n")

    def client_gone(self, timeout: float) -> bool:
        """Wait up to ``timeout`` for the client to close its side; True when it has."""
        readable, _, _ = select.select([self.connection], [], [], timeout)
        if not readable:
            return False
        try:
            return not self.connection.recv(1, socket.MSG_PEEK)  # b"" is EOF; data stays for later
        except OSError:
            return True

    def hang(self) -> None:
        """Leave a request unanswered, as the wrapped server did; hold the connection, then drop it."""
        deadline = time.monotonic() + HANG_SECONDS
        while time.monotonic() < deadline and not self.client_gone(0.5):
            pass
        self.close_connection = True

    def origin_ok(self) -> bool:
        """2025-11-25 / 2026-07-28 streamable HTTP, "Security": MUST validate Origin; a present, invalid one
        is refused with 403 (2024-11-05 HTTP with SSE: MUST validate it too). Absent is fine (not a browser).
        """
        origin = self.headers.get("Origin")
        if origin is None or "no-origin-check" in self.options.bugs:
            return True
        return LOCAL_ORIGIN.fullmatch(origin) is not None

    def dispatch(self, method: str) -> None:
        """Read the body, then route it (held first with --gather); turn Refused into its response."""
        path = urlsplit(self.path).path
        try:
            body = self.read_body()  # whatever the method: an unread body would corrupt keep-alive
            if self.options.exit_on is not None and f'"method":"{self.options.exit_on}"'.encode() in body:
                log(f"Traceback (most recent call last):\nSystemExit: --exit-on {self.options.exit_on}")
                os._exit(3)  # at once, as a crash: the responses of other threads are cut off too
            if method == "POST" and self.options.delay:
                time.sleep(self.options.delay)
            if method == "POST" and self.options.rate_limit and self.over_rate_limit():
                raise Refused(429, "Too many requests", code=RATE_LIMITED)
            if method == "POST" and self.options.busy:
                self.busy_post(method, path, body)
            elif method == "POST" and self.options.gather and b'"tools/call"' in body:
                self.gathered(method, path, body)
            elif method == "POST" and self.options.serial:
                with SERIAL_LOCK:
                    self.route(method, path, body)
            else:
                self.route(method, path, body)
        except Refused as refused:
            self.refuse(refused)
        except Answered:
            pass
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True  # the client went away mid-response

    def route(self, method: str, path: str, body: bytes) -> None:
        """Route by mode and path."""
        if not self.origin_ok():
            raise Refused(403, "forbidden: Origin not allowed")
        if HOST_CHECK[0] and LOCAL_HOST.fullmatch(self.headers.get("Host") or "") is None:
            raise Refused(421, "misdirected request: Host not allowed")
        streamable = {"GET": self.streamable_get, "POST": self.streamable_post, "DELETE": self.streamable_delete}
        if self.options.mode == "streamable" and path == MCP_PATH and method in streamable:
            streamable[method](body)
        elif self.options.mode == "sse" and path == SSE_PATH and method == "GET":
            self.sse_stream()
        elif self.options.mode == "sse" and path.rstrip("/") == MESSAGES_PATH and method == "POST":
            self.sse_post(body)
        elif path in self.served_paths():
            raise Refused(405, "method not allowed", headers={"Allow": self.allowed(path)})
        else:
            self.send(404, b"not found\n", "text/plain")

    def gathered(self, method: str, path: str, body: bytes) -> None:
        """--gather N: a tools/call POST is held (bounded) until N are in flight at once, then handled as usual."""
        log(f"posts in flight at once: {IN_FLIGHT.post_started(self.options.gather)}")
        try:
            self.route(method, path, body)
        finally:
            IN_FLIGHT.post_ended()

    def over_rate_limit(self) -> bool:
        """--rate-limit N: a rate limiter whose window outlasts the run (not a bug): the POSTs after the first N are
        refused, whatever they carry."""
        with BUSY_LOCK:
            POSTS_SEEN[0] += 1
            return POSTS_SEEN[0] > self.options.rate_limit

    def busy_post(self, method: str, path: str, body: bytes) -> None:
        """--busy: a server that sheds load (not a bug). A POST that arrives while another is handled is refused,
        429 and 503 in turn, with Retry-After (RFC 9110 section 10.2.3); one handled alone takes BUSY_SECONDS."""
        with BUSY_LOCK:
            BUSY[0] += 1
            crowded = BUSY[0] > 1
            if crowded:
                BUSY[1] += 1
        try:
            if not crowded:
                time.sleep(BUSY_SECONDS)  # long enough that POSTs sent together meet here
        finally:
            with BUSY_LOCK:
                BUSY[0] -= 1  # before answering: a client that POSTs once the answer is in never meets this one
        if crowded:
            status = 429 if BUSY[1] % 2 else 503
            log(f"busy: refused a POST with {status}")
            self.send(status, b"busy, try again later\n", "text/plain", {"Retry-After": "1"})
            return
        self.route(method, path, body)

    def served_paths(self) -> tuple[str, ...]:
        """The paths of this mode (other methods on them get 405, other paths 404)."""
        return (MCP_PATH,) if self.options.mode == "streamable" else (SSE_PATH, MESSAGES_PATH, MESSAGES_PATH + "/")

    def allowed(self, path: str) -> str:
        """The Allow header of a 405 (RFC 9110 section 15.5.6)."""
        if self.options.mode == "streamable":
            return "GET, POST, DELETE"
        return "GET" if path == SSE_PATH else "POST"

    def do_GET(self) -> None:
        """GET."""
        self.dispatch("GET")

    def do_POST(self) -> None:
        """POST."""
        self.dispatch("POST")

    def do_DELETE(self) -> None:
        """DELETE."""
        self.dispatch("DELETE")

    def do_PUT(self) -> None:
        """PUT: not part of any MCP transport."""
        self.dispatch("PUT")

    def do_PATCH(self) -> None:
        """PATCH: not part of any MCP transport."""
        self.dispatch("PATCH")

    # ---- streamable HTTP: POST ----------------------------------------------------------------

    def streamable_post(self, body: bytes) -> None:
        """A POST to the MCP endpoint: transport checks, then the era's handling."""
        # "Sending Messages" item 2 (2025-03-26 onwards): the client MUST list both types in Accept.
        if not (accepts(self.headers.get("Accept"), "application/json")
                and accepts(self.headers.get("Accept"), "text/event-stream")):
            headers = {}
            if "session-on-406" in self.options.bugs:
                session = self.sessions.new()
                self.sessions.add(session)
                headers["Mcp-Session-Id"] = session.sid
            raise Refused(406, "not acceptable: Accept must list application/json and text/event-stream",
                          headers=headers)
        if "application/json" not in media_types(self.headers.get("Content-Type")):
            raise Refused(415, "unsupported media type: Content-Type must be application/json")
        value = peek_json(body)
        IN_FLIGHT.note(value)
        if value is UNPARSEABLE and "unparseable-500" in self.options.bugs:
            self.send_json(500, {"jsonrpc": "2.0", "id": None,
                                 "error": {"code": -32603, "message": "internal error: the body is not JSON"}})
            return
        if value is UNPARSEABLE:
            # JSON-RPC 2.0 section 5.1: -32700 with id null; as an HTTP error, since nothing was accepted.
            fresh = SERVER_CLASS[0](set(self.sessions.server_bugs))
            replies = fresh.handle_line(body) if body.strip(b" \t\r\n") else fresh.parse_error("parse error: empty")
            if "session-pileup" in self.options.bugs:
                self.sessions.leak()
            if replies:
                self.send_json(400, replies[0])
            else:
                self.send(400)  # the wrapped server's silent-parse bug: an empty 400
            return
        self.check_max_version(value)
        version_header = self.headers.get("MCP-Protocol-Version")
        initialize = isinstance(value, dict) and value.get("method") == "initialize"
        if meta_version(value) is not None or (version_header == MODERN_VERSION and not initialize):
            self.modern_post(body, value)
        else:
            self.legacy_post(body, value, initialize)

    def check_max_version(self, value: Any) -> None:
        """--max-version: a header naming a newer version, or a modern-era request, is refused before it is served.

        2026-07-28 streamable-http, "Protocol Version Header": a version the server does not implement gets 400
        and an UnsupportedProtocolVersionError (-32022) listing the versions it supports; 2025-06-18 and
        2025-11-25 "Protocol Version Header": an unsupported header MUST get 400 (no body is fixed).
        """
        newest = self.options.max_version
        if newest is None:
            return
        header = self.headers.get("MCP-Protocol-Version")
        requested = header if header is not None and header > newest else meta_version(value)
        supported = [version for version in reversed(LEGACY_VERSIONS) if version <= newest]
        asked = value.get("params") if isinstance(value, dict) and value.get("method") == "initialize" else None
        asked = asked.get("protocolVersion") if isinstance(asked, dict) else None
        if requested is None and "refuse-initialize-version" in self.options.bugs and isinstance(asked, str) \
                and asked not in supported:
            requested = asked
        if requested is None:
            return
        if self.options.plain_version_refusal:
            text = f"Bad Request: Unsupported protocol version (supported versions: {','.join(supported)})\n"
            self.send(400, text.encode(), "text/plain; charset=utf-8")
            raise Answered
        error = {"code": UNSUPPORTED_VERSION, "message": f"protocol version {requested!r} is not supported by this "
                 "server", "data": {"supported": supported, "requested": requested}}
        self.send_json(400, {"jsonrpc": "2.0", "id": request_id(value), "error": error})
        raise Answered

    def capped_initialize(self, session: Session, replies: list[Any]) -> list[Any]:
        """--max-version: initialize asking for a newer version is answered with the newest one served
        (2025-11-25 lifecycle, "Version Negotiation": the server responds with another version it supports)."""
        newest = self.options.max_version
        result = replies[0].get("result") if replies and isinstance(replies[0], dict) else None
        if newest is not None and isinstance(result, dict) and str(result.get("protocolVersion")) > newest:
            result["protocolVersion"] = session.server.legacy_version = newest
        return replies

    def modern_post(self, body: bytes, value: Any) -> None:
        """2026-07-28: stateless; a fresh Server per request; any Mcp-Session-Id is ignored ("Backward
        Compatibility": do not mint or echo session ids)."""
        rid = request_id(value)
        if rid is not None and meta_version(value) is not None and "ignore-headers" not in self.options.bugs:
            problem = self.header_mismatch(value)
            if problem is not None:
                raise Refused(400, f"header mismatch: {problem}", rid, HEADER_MISMATCH)
        replies = SERVER_CLASS[0](set(self.sessions.server_bugs)).handle_line(body)
        status = 200
        if len(replies) == 1 and isinstance(replies[0], dict) and isinstance(replies[0].get("error"), dict):
            status = MODERN_ERROR_STATUS.get(replies[0]["error"].get("code"), 200)
            if status >= 400 and "error-without-id" in self.options.bugs:
                replies = [{key: item for key, item in replies[0].items() if key != "id"}]
        self.answer(replies, value, None, status)

    def header_mismatch(self, value: dict[str, Any]) -> str | None:
        """2026-07-28 streamable-http "Server Validation" (SEP-2243): the standard headers must be present
        and equal the body; a header given twice is malformed; Mcp-Name may use the Base64 sentinel."""
        for name in ("MCP-Protocol-Version", "Mcp-Method", "Mcp-Name"):
            if len(self.headers.get_all(name) or []) > 1:
                return f"{name} appears more than once"
        if self.headers.get("MCP-Protocol-Version") != meta_version(value):
            return "MCP-Protocol-Version does not match params._meta"
        if self.headers.get("Mcp-Method") != value.get("method"):
            return "Mcp-Method does not match the body's method"
        key = NAME_BEARING.get(value["method"])
        params = value.get("params")
        named = params.get(key) if key is not None and isinstance(params, dict) else None
        if named is not None:
            header = self.headers.get("Mcp-Name")
            if header is None or decode_header_value(header) != named:
                return f"Mcp-Name does not match params.{key}"
        if value["method"] == "tools/call" and isinstance(params, dict) \
                and "ignore-param-headers" not in self.options.bugs:
            return self.param_mismatch(params)
        return None

    def param_mismatch(self, params: dict[str, Any]) -> str | None:
        """2026-07-28 streamable-http, "Server Behavior for Custom Headers": each argument a tool mirrors
        (x-mcp-header) that the body holds must come in its Mcp-Param header, equal once decoded (integers
        compared as numbers); an absent or null argument expects no header."""
        tool = next((t for t in SERVER_CLASS[0].TOOLS if t["name"] == params.get("name")), None)
        arguments = params.get("arguments")
        if tool is None or not isinstance(arguments, dict):
            return None
        for key, schema in tool["inputSchema"]["properties"].items():
            name = schema.get("x-mcp-header")
            body = arguments.get(key)
            if name is None or body is None or not _typed(body, schema["type"]):
                continue  # an argument of the wrong type is the body's refusal (-32602 or isError), not a header's
            raw = self.headers.get(f"Mcp-Param-{name}")
            if raw is None:
                return f"Mcp-Param-{name} is missing"
            text = decode_header_value(raw)
            if text is None:
                return f"Mcp-Param-{name} holds broken Base64"
            if schema["type"] == "integer":
                same = NUMERIC_TEXT.fullmatch(text) is not None and int(text.split(".")[0]) == body
            else:
                same = text == (str(body).lower() if isinstance(body, bool) else body)
            if not same:
                return f"Mcp-Param-{name} does not match arguments.{key}"
        return None

    def legacy_post(self, body: bytes, value: Any, initialize: bool) -> None:
        """2025-03-26 .. 2025-11-25 "Session Management": initialize opens a session, the rest need it."""
        rid = request_id(value)
        sid = self.headers.get("Mcp-Session-Id")
        if sid is None:
            if not initialize and "session-optional" in self.options.bugs:
                # A server that does not require a session: the 400 of item 2 is for servers that do. The temporary
                # session was never initialized, so it serves what may come before initialize (ping) only.
                self.answer(self.sessions.new().handle(body), value, None, 200)
                return
            if not initialize:
                # Item 2: a server that requires a session SHOULD answer a request without one with 400.
                raise Refused(400, "bad request: missing Mcp-Session-Id", rid)
            session = self.sessions.new()
            replies = self.capped_initialize(session, session.handle(body))
            opened = bool(replies) and isinstance(replies[0], dict) and "result" in replies[0]
            if opened:  # a failed initialize opens nothing (no session for a refused request)
                self.sessions.add(session)
            self.answer(replies, value, session if opened else None, 200,
                        {"Mcp-Session-Id": session.sid} if opened else {})
            return
        session = self.sessions.get(sid)
        if session is None:
            # Item 3: a terminated (or unknown) session MUST be answered with 404.
            raise Refused(404, "session not found", rid)
        if not initialize:
            self.check_version_header(rid)
        self.answer(session.handle(body), value, session, 200)

    def check_version_header(self, rid: Any) -> None:
        """2025-06-18 / 2025-11-25 "Protocol Version Header": an invalid or unsupported version MUST get 400;
        none at all is read as 2025-03-26."""
        version = self.headers.get("MCP-Protocol-Version")
        if version is not None and version not in LEGACY_VERSIONS:
            raise Refused(400, f"bad request: unsupported MCP-Protocol-Version {version!r}", rid)

    def answer(self, replies: list[Any], value: Any, session: Session | None, status: int,
               headers: dict[str, str] | None = None) -> None:
        """Write the server's replies (the in-flight modes may hold or trade them first)."""
        bugs = self.options.bugs
        if {"late-in-flight", "swap-in-flight"} & bugs:
            replies = IN_FLIGHT.pair_tool_call(value, replies, swap="swap-in-flight" in bugs)
        if {"late-cancel", "cancel-ignored"} & bugs and status == 200 and replies and InFlight.deferred(value):
            self.answer_deferred(replies, dict(headers or {}))
        else:
            self.write_answer(replies, value, session, status, headers)
        if replies:
            IN_FLIGHT.answered()

    def answer_deferred(self, replies: list[Any], headers: dict[str, str]) -> None:
        """Headers and a priming event at once; the answer later, or never once cancelled (2025-11-25
        cancellation: the receiver SHOULD NOT answer a cancelled request), except with cancel-ignored."""
        self.start_stream(headers)
        self.write_chunk(f"id: {secrets.token_hex(8)}\ndata: \n\n".encode())
        self.wfile.flush()
        cancelled = IN_FLIGHT.wait_cancel(replies[0].get("id"))
        if cancelled and "cancel-ignored" not in self.options.bugs:
            self.end_stream()
            return
        if cancelled:
            IN_FLIGHT.wait_next_answer()
        for reply in replies:
            self.write_chunk(sse_event(reply, secrets.token_hex(8)))
        self.end_stream()

    def write_answer(self, replies: list[Any], value: Any, session: Session | None, status: int,
                     headers: dict[str, str] | None = None) -> None:
        """Write the server's replies: 202 when there are none, JSON or one SSE event per reply otherwise."""
        headers = dict(headers or {})
        if not replies:
            if is_request_shaped(value):
                self.hang()
                return
            # "Sending Messages" item 4/5: a notification or response that is accepted gets 202, no body.
            self.send(200 if "status-200-notification" in self.options.bugs else 202, headers=headers)
            return
        if status == 200 and (self.options.sse_responses or len(replies) > 1):
            # Item 5/6: the server may answer a request with an SSE stream; several replies need one.
            self.start_stream(headers)
            # 2025-11-25 streamable-http: the server SHOULD first send an event with an id and an empty data
            # field, priming a client's reconnection (the TypeScript SDK does); it carries no message.
            self.write_chunk(f"id: {secrets.token_hex(8)}\ndata: \n\n".encode())
            for reply in replies:
                event_id = session.next_event_id() if session is not None else secrets.token_hex(8)
                self.write_chunk(sse_event(reply, event_id))
            self.end_stream()
            return
        self.send_json(status, replies[0], headers)

    # ---- streamable HTTP: GET and DELETE ------------------------------------------------------

    def session_for(self, *, check_version: bool = True) -> Session:
        """The session a GET or DELETE names: missing 400, unknown 404, bad version header 400."""
        if self.headers.get("MCP-Protocol-Version") == MODERN_VERSION:
            # 2026-07-28 "Backward Compatibility": GET and DELETE are gone; SHOULD answer 405.
            raise Refused(405, "method not allowed in 2026-07-28", headers={"Allow": "POST"})
        sid = self.headers.get("Mcp-Session-Id")
        if sid is None:
            raise Refused(400, "bad request: missing Mcp-Session-Id")
        session = self.sessions.get(sid)
        if session is None:
            raise Refused(404, "session not found")
        if check_version:
            self.check_version_header(None)
        return session

    def streamable_get(self, body: bytes) -> None:
        """"Listening for Messages from the Server": an SSE stream for server-initiated messages."""
        if self.headers.get("MCP-Protocol-Version") != MODERN_VERSION and not accepts(
                self.headers.get("Accept"), "text/event-stream"):
            raise Refused(406, "not acceptable: Accept must list text/event-stream")
        session = self.session_for()
        self.start_stream()
        self.write_chunk(b": keep-alive\n\n")  # an SSE comment (a line starting with a colon)
        # This server sends no server-initiated messages; the stream ends on DELETE or after a while
        # (the server MAY close it at any time).
        deadline = time.monotonic() + self.options.stream_seconds
        while not session.ended.is_set() and time.monotonic() < deadline:
            if self.client_gone(min(KEEPALIVE_SECONDS, max(0.0, deadline - time.monotonic()))):
                self.close_connection = True
                return
        self.end_stream()

    def streamable_delete(self, body: bytes) -> None:
        """"Session Management" item 5: DELETE with the session id ends the session."""
        session = self.session_for()
        self.sessions.remove(session.sid)
        self.send(200)

    # ---- 2024-11-05 HTTP with SSE -------------------------------------------------------------

    def sse_stream(self) -> None:
        """2024-11-05 "HTTP with SSE": the first event is ``endpoint``, then every server message."""
        session = self.sessions.new()
        self.sessions.add(session)
        try:
            self.start_stream()
            if self.options.endpoint_json:
                endpoint = json.dumps({"url": MESSAGES_PATH, "sessionId": session.sid})
            else:
                endpoint = f"{MESSAGES_PATH}?session_id={session.sid}"
            self.write_chunk(f"event: endpoint\ndata: {endpoint}\n\n".encode())
            deadline = time.monotonic() + SSE_MAX_SECONDS
            while not session.ended.is_set() and time.monotonic() < deadline:
                try:
                    reply = session.outbox.get(timeout=KEEPALIVE_SECONDS)
                except queue.Empty:
                    if self.client_gone(0):
                        break
                    self.write_chunk(b": keep-alive\n\n")
                    continue
                self.write_chunk(sse_event(reply, session.next_event_id()))
            else:
                self.end_stream()
        finally:
            self.sessions.remove(session.sid)
            self.close_connection = True

    def sse_post(self, body: bytes) -> None:
        """A client message for an SSE session: 202 at once, every answer on that session's stream."""
        query = parse_qs(urlsplit(self.path).query)
        sid = (query.get("session_id") or query.get("sessionId") or [self.headers.get("Mcp-Session-Id")])[0]
        if sid is None:
            raise Refused(400, "bad request: no session id")
        session = self.sessions.get(sid)
        if session is None:
            raise Refused(404, "session not found")
        if "application/json" not in media_types(self.headers.get("Content-Type")):
            raise Refused(415, "unsupported media type: Content-Type must be application/json")
        for reply in session.handle(body):  # a -32700 for junk goes out on the stream like any answer
            session.outbox.put(reply)
        self.send(202)


def encode(value: Any) -> bytes:
    """Compact JSON in ASCII."""
    return json.dumps(value, separators=(",", ":")).encode("ascii")


def sse_event(value: Any, event_id: str) -> bytes:
    """One ``message`` event (the SSE format: ``event:``, ``id:``, ``data:`` lines, a blank line)."""
    return b"event: message\nid: %s\ndata: %s\n\n" % (event_id.encode("ascii"), encode(value))


def main(argv: list[str] | None = None) -> int:
    """Serve until SIGTERM."""
    parser = argparse.ArgumentParser(description="MCP test server over HTTP, correct unless --bug is given.")
    parser.add_argument("--port", type=int, required=True, help="TCP port on 127.0.0.1 (0: any free one)")
    parser.add_argument("--mode", choices=["streamable", "sse"], default="streamable")
    parser.add_argument("--sse-responses", action="store_true", help="answer requests with an SSE stream")
    parser.add_argument("--endpoint-json", action="store_true", help="sse mode: a JSON endpoint event")
    parser.add_argument("--stream-seconds", type=float, default=3.0, help="how long a GET stream stays open")
    parser.add_argument("--verbose", action="store_true", help="log every request to stderr")
    parser.add_argument("--bug", action="append", default=[], choices=sorted(BUGS), help="turn one HTTP bug on")
    server_bugs = {**SERVER_BUGS, **SURFACE_BUGS, **NEGATIVE_BUGS, **TasksServer.BUGS, **ReadOnlyToolServer.BUGS}
    parser.add_argument("--server-bug", action="append", default=[], choices=sorted(server_bugs),
                        help="turn one bug of mcp_server.Server (or of the class --surface or --serve names) on")
    parser.add_argument("--surface", action="store_true", help="serve surface_server.SurfaceServer")
    parser.add_argument("--host-check", action="store_true",
                        help="not a bug: refuse a Host other than 127.0.0.1, localhost or [::1] with 421 (the Python "
                             "SDK's DNS-rebinding protection; the spec has no Host rule)")
    parser.add_argument("--mirror", action="store_true",
                        help="not a bug: serve mirror_tools.MirrorServer (a tool with x-mcp-header arguments)")
    parser.add_argument("--serve", choices=sorted(SERVED), help="serve this test server's class instead")
    parser.add_argument("--serial", action="store_true",
                        help="not a bug: handle one POST at a time, as a server on one event loop")
    parser.add_argument("--gather", type=int, default=0, metavar="N",
                        help="hold each POST (bounded) until N are in flight at once; log the peak")
    parser.add_argument("--busy", action="store_true",
                        help="not a bug: refuse (429, 503) a POST that arrives while another is handled")
    parser.add_argument("--exit-on", metavar="METHOD", help="exit at once on reading a request for METHOD")
    parser.add_argument("--delay-ms", type=float, default=0.0, metavar="MS",
                        help="not a bug: wait MS milliseconds before handling each POST (latency)")
    parser.add_argument("--max-version", choices=LEGACY_VERSIONS, metavar="V",
                        help="not a bug: serve legacy versions up to V only; refuse newer ones with 400 and -32022")
    parser.add_argument("--plain-refusals", action="store_true",
                        help="not a bug: refuse with 401, 403, 404, 413 and 429 as a proxy does: a plain-text body "
                             "(413: an HTML page), no JSON-RPC error")
    parser.add_argument("--max-body", type=int, default=MAX_BODY, metavar="BYTES",
                        help="not a bug: refuse a request body longer than BYTES with 413")
    parser.add_argument("--rate-limit", type=int, default=0, metavar="N",
                        help="not a bug: refuse every POST after the first N with 429 and a JSON-RPC error, id null "
                             "(a rate limiter whose window outlasts the run)")
    parser.add_argument("--plain-version-refusal", action="store_true",
                        help="with --max-version: refuse a version with a plain-text 400 instead")
    args = parser.parse_args(argv)
    if args.surface:
        SERVER_CLASS[0] = SurfaceServer
    if args.mirror:
        SERVER_CLASS[0] = MirrorServer
    HOST_CHECK[0] = args.host_check
    if args.serve:
        SERVER_CLASS[0] = SERVED[args.serve]
        TasksServer.STORE = {}
    if hasattr(sys, "set_int_max_str_digits"):
        sys.set_int_max_str_digits(100_000)  # as mcp_server.main: big ids allowed, with a cap
    options = Options(args.mode, args.sse_responses, args.endpoint_json, args.stream_seconds, args.verbose,
                      set(args.bug), args.gather, args.busy, args.exit_on, args.delay_ms / 1000,
                      args.max_version, args.plain_version_refusal, args.serial, args.plain_refusals,
                      args.max_body, args.rate_limit)
    sessions = SessionTable(set(args.server_bug), spaced_ids="session-id-space" in args.bug)
    httpd = McpHttpServer(args.port, options, sessions)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    port = httpd.server_address[1]
    log(f"mode={args.mode} bugs={sorted(options.bugs) or 'none'} server-bugs={sorted(args.server_bug) or 'none'}")
    # The one line test harnesses wait for, exactly as documented above.
    sys.stderr.write(f"ready http://{HOST}:{port}{MCP_PATH if args.mode == 'streamable' else SSE_PATH}\n")
    sys.stderr.flush()
    try:
        httpd.serve_forever(poll_interval=0.2)
    finally:
        httpd.server_close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
