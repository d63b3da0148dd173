"""What one HTTP request of a case got back: status, headers that matter, and any body that was not JSON-RPC."""

from __future__ import annotations

from dataclasses import dataclass

from mcpfuzz.jsonrpc.transport_kind import TransportKind

BODY_SNIPPET = 2048
# Refusals judged by their status and headers alone: what their body holds (plain text, an HTML page, JSON of any
# shape, nothing) is the server's to choose unless a case's own rule names it. Each with what it says of the request.
FREE_BODY_REFUSALS = {401: "refused as unauthenticated", 403: "refused as forbidden", 404: "refused: not found",
                      413: "refused as too large", 429: "refused as too many requests"}


@dataclass
class HttpReply:
    """Filled in by the HTTP transport while the response arrives; `done` once it has ended."""

    method: str = "POST"
    transport: TransportKind = TransportKind.STREAMABLE_HTTP  # or LEGACY_SSE, where answers use the stream
    status: int | None = None
    content_type: str = ""
    session_id: str | None = None  # an Mcp-Session-Id header on the response
    session_live: bool | None = None  # a refusal's session id, tried once: does it name a real session?
    sent_session_id: str | None = None  # the Mcp-Session-Id the request carried
    body: bytes = b""  # the start of a body that was not fed to the JSON-RPC reader (errors, text)
    body_size: int = 0
    messages: int = 0  # JSON-RPC messages read from the body or its SSE events
    error: str = ""  # the connection failed or dropped before a complete response
    done: bool = False

    @property
    def refused(self) -> bool:
        """A 4xx or 5xx status."""
        return self.status is not None and self.status >= 400

    @property
    def body_free(self) -> bool:
        """A refusal judged by its status and headers only (FREE_BODY_REFUSALS): its body is no evidence of anything."""
        return self.status in FREE_BODY_REFUSALS

    def describe(self) -> str:
        """One line for reports: status, content type and what the body held."""
        if self.error:
            return f"HTTP {self.method}: {self.error}"
        if self.status is None:
            return f"HTTP {self.method}: no response"
        meaning = FREE_BODY_REFUSALS.get(self.status)
        parts = [f"HTTP {self.status}" + (f" ({meaning})" if meaning else "")]
        if self.content_type:
            parts.append(self.content_type.split(";")[0])
        if self.messages:
            parts.append(f"{self.messages} message{'s' if self.messages != 1 else ''}")
        elif self.body_size:
            parts.append(f"{self.body_size}-byte body")
        else:
            parts.append("empty body")
        if self.session_id:
            parts.append("Mcp-Session-Id set")
        return ", ".join(parts)
