"""The kinds of connection a server is talked to over (exchanges record which one carried them)."""

from __future__ import annotations

from enum import Enum


class TransportKind(str, Enum):
    """How frames reach a server; the values are the names users and transcripts spell."""

    STDIO = "stdio"
    STREAMABLE_HTTP = "http"  # 2025-03-26 and later: a POST per frame, answers in its response
    LEGACY_SSE = "sse"  # 2024-11-05 HTTP+SSE: frames POSTed, answers on one GET stream
    MEMORY = "memory"  # an in-process server built from a Python handler (tests)

    def __str__(self) -> str:
        return self.value
