"""An HTTP server under test: its URL, headers, optional launch command, and which HTTP transport it speaks."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, ClassVar, Literal
from urllib.parse import urlsplit

from mcpfuzz.jsonrpc.transport_kind import TransportKind
from mcpfuzz.transport.auth.settings import AuthSettings
from mcpfuzz.transport.base import AUTO, TRANSPORT_CHOICES, transport_choice
from mcpfuzz.transport.http_headers import ACCEPT_BOTH, META_VERSION_KEY
from mcpfuzz.transport.target import Redaction, ServerKind

if TYPE_CHECKING:  # httpx only once a URL is probed: the command line builds its targets before any connection
    import httpx

# In the URL and the --launch command (or an --env value of the launched server): a free port on 127.0.0.1,
# chosen for each server mcpfuzz starts.
PORT_PLACEHOLDER = "{port}"
STREAMABLE, LEGACY_SSE = TransportKind.STREAMABLE_HTTP, TransportKind.LEGACY_SSE
MODERN_ERROR_CODES = {-32601, -32020, -32021, -32022, -32004}


@dataclass(frozen=True)
class HttpTarget:
    """`mcpfuzz run URL`: where to POST, what to add to every request, and how to start the server.

    `env_names` are the variables the run set for the launched server (--env): part of how it is started, so
    transcripts and reproductions keep the names; the values are secrets, never written.
    """

    url: str
    headers: tuple[tuple[str, str], ...] = ()
    launch: tuple[str, ...] = ()
    transport: TransportKind | None = None  # None: detected from the URL's answers
    env_names: tuple[str, ...] = ()
    port: str = ""  # the port `on_free_port` chose for `{port}`; "" before (or without a placeholder)
    auth: AuthSettings | None = None  # a token kept fresh for the run (a command or OAuth client credentials)
    kind: ClassVar[Literal[ServerKind.URL]] = ServerKind.URL

    @property
    def transport_choice(self) -> str:
        """The transport as --transport spells it ("auto" when it is detected)."""
        return self.transport.value if self.transport is not None else AUTO

    @property
    def label(self) -> str:
        """The URL (the server's name in reports)."""
        return self.url

    @property
    def secrets(self) -> tuple[str, ...]:
        """The header values (tokens, cookies; only their names are ever written) and a password in the URL."""
        password = urlsplit(self.url).password
        return (*(value for _, value in self.headers), *((password,) if password else ()))

    def to_json(self, redaction: Redaction) -> dict[str, Any]:
        """`{"url", "transport", "launch", "headers"}`: the URL and launch redacted, headers by name only (and `env`:
        the names of the variables the launched server ran with, never their values)."""
        data: dict[str, Any] = {"url": redaction.text(self.url), "transport": self.transport_choice,
                                "launch": redaction.argv(self.launch), "headers": [name for name, _ in self.headers]}
        if self.env_names:
            data["env"] = list(self.env_names)
        if self.auth is not None:
            auth = self.auth.to_json()
            data["auth"] = {**auth, **({"token_command": redaction.text(self.auth.token_command),
                                        "replay": redaction.text(auth["replay"])} if self.auth.token_command else {})}
        return data

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> HttpTarget | None:
        """The URL target of a server block (without header values); None when it names no URL."""
        url, launch, choice, env = data.get("url"), data.get("launch"), data.get("transport"), data.get("env")
        if not isinstance(url, str):
            return None
        return cls(url, launch=tuple(str(word) for word in launch) if isinstance(launch, list) else (),
                   transport=transport_choice(choice) if choice in TRANSPORT_CHOICES else None,
                   env_names=tuple(str(name) for name in env) if isinstance(env, list) else (),
                   auth=AuthSettings.from_json(data.get("auth")))

    @property
    def picks_port(self) -> bool:
        """True when the URL and launch command say `{port}`: each launch gets a port of its own."""
        return PORT_PLACEHOLDER in self.url

    def on_free_port(self) -> HttpTarget:
        """This target with `{port}` replaced by a port free on 127.0.0.1 now (itself without `{port}`).

        Reports and transcripts keep the placeholder, so a reproduction or a replay picks its own port.
        """
        if not self.picks_port:
            return self
        port = str(free_port())
        return replace(self, url=self.url.replace(PORT_PLACEHOLDER, port),
                       launch=tuple(part.replace(PORT_PLACEHOLDER, port) for part in self.launch), port=port)

    def launch_env(self, env: Mapping[str, str] | None) -> dict[str, str] | None:
        """The --env variables of the launched server, `{port}` in their values replaced by the chosen port."""
        if env is None or not self.port:
            return dict(env) if env is not None else None
        return {name: value.replace(PORT_PLACEHOLDER, self.port) for name, value in env.items()}


def free_port() -> int:
    """A TCP port nothing listens on at 127.0.0.1 (the OS picks it; it stays free until a server binds it)."""
    import socket

    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def is_url(text: str) -> bool:
    """True for an http:// or https:// URL."""
    return text.startswith(("http://", "https://"))


async def detect_transport(target: HttpTarget, timeout: float) -> TransportKind:
    """Which transport a URL speaks, as the spec's backward-compatibility section tells clients to find out.

    POST a request first: any answer other than 400/404/405, or one carrying a modern JSON-RPC error
    (unsupported version, unknown method, header mismatch), means streamable HTTP; otherwise a GET
    that opens an SSE stream means legacy HTTP+SSE.
    """
    import anyio
    import httpx

    if target.transport is not None:
        return target.transport
    if target.launch:
        # Probing would need the server running before the session starts it: go by the URL's path.
        return LEGACY_SSE if urlsplit(target.url).path.rstrip("/").endswith("/sse") else STREAMABLE
    headers = dict(target.headers)
    body = json.dumps({"jsonrpc": "2.0", "id": 0, "method": "server/discover", "params": {"_meta": {
        META_VERSION_KEY: "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {}}}})
    # One deadline for the whole detection and a cap on what is read: a server that trickles its answer, streams
    # forever or sends hundreds of megabytes must not hold it (the session's start then says what is wrong).
    with anyio.move_on_after(timeout):
        async with httpx.AsyncClient(timeout=timeout, follow_redirects=False, trust_env=False) as client:
            try:
                async with client.stream("POST", target.url, content=body, headers={
                        **headers, "Accept": ACCEPT_BOTH, "Content-Type": "application/json",
                        "MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "server/discover"}) as response:
                    status = response.status_code
                    refusal = await _read_capped(response) if status in (400, 404, 405) else b""
            except httpx.HTTPError:
                return STREAMABLE  # the session's start reports the connection problem in full
            if status not in (400, 404, 405) or _modern_error(refusal):
                return STREAMABLE
            try:
                listen = {**headers, "Accept": "text/event-stream"}
                async with client.stream("GET", target.url, headers=listen) as stream:
                    if "text/event-stream" in stream.headers.get("content-type", ""):
                        return LEGACY_SSE
            except httpx.HTTPError:
                pass
    return STREAMABLE


DETECT_BODY_LIMIT = 64 * 1024  # of a refusal's body: enough for a JSON-RPC error


async def _read_capped(response: httpx.Response) -> bytes:
    """The start of a response body, at most DETECT_BODY_LIMIT bytes (the rest is left unread)."""
    data = bytearray()
    async for chunk in response.aiter_raw():
        data += chunk
        if len(data) >= DETECT_BODY_LIMIT:
            break
    return bytes(data[:DETECT_BODY_LIMIT])


def _modern_error(body: bytes) -> bool:
    """True when a refusal carries an error only a modern streamable server sends (version, method, headers)."""
    try:
        answer = json.loads(body)
    except ValueError:
        return False
    error = answer.get("error") if isinstance(answer, dict) else None
    return isinstance(error, dict) and error.get("code") in MODERN_ERROR_CODES
