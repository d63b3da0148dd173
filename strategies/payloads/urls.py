"""URL payloads: loopback only (port 9, discard, where nothing listens, or the run's own listener), never another
host."""

from __future__ import annotations

from mcpfuzz.strategies.payloads.canaries import CanaryLayout
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


def url_payloads(layout: CanaryLayout | None) -> tuple[Payload, ...]:
    """The loopback URLs, and with a layout that has a listener the URLs of the run's own listener on 127.0.0.1 (a
    connection there is seen even when the tool answers nothing about it)."""
    if layout is None or not layout.listener:
        return URL_PAYLOADS
    port = layout.listener.rsplit(":", 1)[-1]
    return (("the run's loopback listener", f"{layout.listener}/{layout.nonce}"),
            ("the run's loopback listener by name", f"http://localhost:{port}/{layout.nonce}"),
            ("the run's loopback listener, bare", f"127.0.0.1:{port}"),
            *URL_PAYLOADS)
