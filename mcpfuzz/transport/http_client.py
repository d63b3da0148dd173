"""The httpx client of both HTTP transports: a keep-alive pool for POSTs in flight at once, one write per request."""

from __future__ import annotations

import contextlib
import select
import socket
import typing

import httpcore
import httpx

# A session may keep several POSTs in flight, each on a keep-alive connection of its own; a hanging POST or
# the GET stream holds one until it ends, so the pool allows many more than are kept between requests.
MAX_CONNECTIONS = 100
KEEPALIVE_CONNECTIONS = 32
LIMITS = httpx.Limits(max_connections=MAX_CONNECTIONS, max_keepalive_connections=KEEPALIVE_CONNECTIONS)


class OneWriteStream(httpcore.AsyncNetworkStream):
    """A connection whose writes wait for the next read: a request's headers and body leave in one send.

    httpcore writes the head and the body separately; on 127.0.0.1 each send wakes the server, which then
    reads a head without its body (the standard library's `http.client` joins them for the same reason).
    """

    def __init__(self, stream: httpcore.AsyncNetworkStream) -> None:
        self._stream = stream
        self._pending: list[bytes] = []
        self._socket: typing.Any = None  # the raw socket, looked up once

    async def write(self, buffer: bytes, timeout: float | None = None) -> None:
        """Hold the bytes until the response is read."""
        if buffer:
            self._pending.append(buffer)

    async def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        """Send what is held, then read."""
        if self._pending:
            data = b"".join(self._pending)
            self._pending.clear()
            # As httpcore does: a server may refuse early and close its side, yet its answer is readable.
            with contextlib.suppress(httpcore.WriteError):
                await self._stream.write(data, timeout)
        return await self._stream.read(max_bytes, timeout)

    async def aclose(self) -> None:
        """Close the connection (a held request was abandoned: it is dropped)."""
        self._pending.clear()
        await self._stream.aclose()

    async def start_tls(self, ssl_context: typing.Any, server_hostname: str | None = None,
                        timeout: float | None = None) -> httpcore.AsyncNetworkStream:
        """TLS over this connection; the handshake reads and writes at once, so nothing may be held."""
        return OneWriteStream(await self._stream.start_tls(ssl_context, server_hostname, timeout))

    def get_extra_info(self, info: str) -> typing.Any:
        """The wrapped connection's socket details."""
        if info == "is_readable":
            # The pool asks this of every idle connection before each request (a server that closed it reads as
            # readable); anyio's attribute lookup of the socket costs more than the poll itself, so it is done once.
            if self._socket is None:
                self._socket = self._stream.get_extra_info("socket")
            return _readable(self._socket)
        return self._stream.get_extra_info(info)


def _readable(sock: socket.socket | None) -> bool:
    """As httpcore tells it: a socket with bytes (or the server's close) waiting, or with no descriptor left."""
    fd = sock.fileno() if sock is not None else -1
    if fd < 0:
        return True
    if not hasattr(select, "poll"):  # Windows
        ready, _, _ = select.select([fd], [], [], 0)
        return bool(ready)
    poller = select.poll()
    poller.register(fd, select.POLLIN)
    return bool(poller.poll(0))


class OneWriteBackend(httpcore.AsyncNetworkBackend):
    """httpcore's anyio backend with every connection a `OneWriteStream`."""

    def __init__(self) -> None:
        self._backend = httpcore.AnyIOBackend()

    async def connect_tcp(self, host: str, port: int, timeout: float | None = None,
                          local_address: str | None = None,
                          socket_options: typing.Iterable[typing.Any] | None = None) -> httpcore.AsyncNetworkStream:
        """A TCP connection (anyio sets TCP_NODELAY)."""
        return OneWriteStream(await self._backend.connect_tcp(host, port, timeout, local_address, socket_options))

    async def connect_unix_socket(self, path: str, timeout: float | None = None,
                                  socket_options: typing.Iterable[typing.Any] | None = None
                                  ) -> httpcore.AsyncNetworkStream:
        """A Unix socket connection."""
        return OneWriteStream(await self._backend.connect_unix_socket(path, timeout, socket_options))

    async def sleep(self, seconds: float) -> None:
        """The backend's sleep."""
        await self._backend.sleep(seconds)


class OneWriteTransport(httpx.AsyncHTTPTransport):
    """httpx's HTTP/1.1 transport over a `OneWriteBackend` pool, which `Poster` shares."""

    def __init__(self) -> None:
        super().__init__(limits=LIMITS, http1=True, http2=False, trust_env=False)
        ssl_context = getattr(getattr(self, "_pool", None), "_ssl_context", None)
        self.pool = httpcore.AsyncConnectionPool(
            ssl_context=ssl_context if ssl_context is not None else httpx.create_ssl_context(trust_env=False),
            max_connections=MAX_CONNECTIONS, max_keepalive_connections=KEEPALIVE_CONNECTIONS,
            keepalive_expiry=LIMITS.keepalive_expiry, http1=True, http2=False, network_backend=OneWriteBackend())
        # httpx builds its pool without a way to name the network backend: ours replaces it. Should a later httpx
        # keep its pool elsewhere, httpx's requests keep its own pool (two sends each, same behaviour).
        self._pool = self.pool


# Everything httpcore raises when a request fails (it has no common base class).
POST_ERRORS = (httpcore.NetworkError, httpcore.TimeoutException, httpcore.ProtocolError,
               httpcore.UnsupportedProtocol, httpcore.ProxyError)


class Poster:
    """POSTs to one URL straight through httpcore: httpx's request and response models cost about a third of
    the CPU of a small POST, and the transport needs neither (nor redirects, auth or decoding).

    Requests carry the same headers an httpx request of `client` would (its defaults, Host, Content-Length),
    except cookies: MCP keeps its session in Mcp-Session-Id.
    """

    def __init__(self, client: httpx.AsyncClient, transport: OneWriteTransport) -> None:
        self._pool = transport.pool
        self._defaults = [(name.lower(), value) for name, value in client.headers.items()]
        self._extensions = {"timeout": client.timeout.as_dict()}
        self._urls: dict[str, tuple[httpcore.URL, str]] = {}

    def _target(self, url: str) -> tuple[httpcore.URL, str]:
        """The URL as httpcore takes it and its Host header, worked out once per URL."""
        if url not in self._urls:
            parsed = httpx.URL(url)
            self._urls[url] = (httpcore.URL(scheme=parsed.raw_scheme, host=parsed.raw_host, port=parsed.port,
                                            target=parsed.raw_path), httpx.Request("POST", parsed).headers["Host"])
        return self._urls[url]

    async def post(self, url: str, content: bytes, headers: dict[str, str]) -> httpcore.Response:
        """Send the request; the response once its headers are in (the caller reads and closes it)."""
        target, host = self._target(url)
        named = {name.lower() for name in headers}
        raw = [(_encoded(name), _encoded(value)) for name, value in headers.items()]
        raw += [(_encoded(name), _encoded(value)) for name, value in self._defaults if name not in named]
        if "host" not in named:
            raw.append((b"Host", _encoded(host)))
        if "content-length" not in named:
            raw.append((b"Content-Length", str(len(content)).encode()))
        request = httpcore.Request(b"POST", target, headers=raw, content=content, extensions=self._extensions)
        return await self._pool.handle_async_request(request)


def header(response: httpcore.Response, name: bytes) -> str | None:
    """A response header's value (the first, its name lower-case), decoded as httpx decodes it."""
    for key, value in response.headers:
        if key.lower() == name:
            return _decoded(value)
    return None


def _encoded(text: str) -> bytes:
    """A header name or value as bytes: ASCII when it is, else UTF-8 (h11 rejects the unsendable ones)."""
    try:
        return text.encode("ascii")
    except UnicodeEncodeError:
        return text.encode("utf-8", "surrogateescape")


def _decoded(value: bytes) -> str:
    """A header value as text: ASCII, else UTF-8, else Latin-1 (which decodes any bytes)."""
    for encoding in ("ascii", "utf-8"):
        try:
            return value.decode(encoding)
        except UnicodeDecodeError:
            pass
    return value.decode("latin-1")


def new_client(call_timeout: float, connect_timeout: float) -> tuple[httpx.AsyncClient, OneWriteTransport]:
    """The client of one HTTP connection and its transport: redirects are not followed (a 3xx is the server's
    answer, to be judged, not chased), no proxy or .netrc from the environment."""
    timeout = httpx.Timeout(call_timeout, connect=connect_timeout)
    transport = OneWriteTransport()
    client = httpx.AsyncClient(transport=transport, timeout=timeout, follow_redirects=False, trust_env=False)
    return client, transport
