"""URL payloads: loopback only (port 9, discard, where nothing listens), never another host."""

from __future__ import annotations

from mcpfuzz.strategies.payloads.family import Payload

LOOPBACK = "http://127.0.0.1:9"
URL_PAYLOADS: tuple[Payload, ...] = (
    ("a loopback URL", f"{LOOPBACK}/"),
    ("an IPv6 loopback URL", "http://[::1]:9/"),
    ("a loopback URL with credentials", "http://user:pass@127.0.0.1:9/"),
    ("a loopback URL with a NUL", f"{LOOPBACK}/a%00b"),
    ("a loopback URL with traversal", f"{LOOPBACK}/../../a"),
    ("a 8,000-character loopback URL", f"{LOOPBACK}/" + "a" * 8000),
    ("an upper-case scheme", "HTTP://127.0.0.1:9/"),
    ("a URL without a host", "http:///"),
)
