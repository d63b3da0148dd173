"""Cases a server's rate limiter refused (HTTP 429): its limiter answered them, not its MCP handling, so they are
not judged, and the run says how many there were."""

from __future__ import annotations

from dataclasses import dataclass

from mcpfuzz.engine.events import Notice
from mcpfuzz.jsonrpc.exchange import Exchange

TOO_MANY_REQUESTS = 429


def rate_limited(exchange: Exchange) -> bool:
    """True when a POST of the case was refused with 429: whatever its body holds (often a JSON-RPC error of the
    limiter's own, id null), it says nothing of how the server handles the case (RFC 6585 section 4)."""
    replies = [*exchange.posts, exchange.http]
    return any(reply is not None and reply.status == TOO_MANY_REQUESTS for reply in replies)


@dataclass
class RateLimitTally:
    """How many cases the server's rate limiter refused, and what to tell the user of them."""

    refused: int = 0

    def note(self) -> Notice | None:
        """Count one refused case; the first one is told at once."""
        self.refused += 1
        if self.refused > 1:
            return None
        return Notice("the server refused a case with HTTP 429 (too many requests): a case its rate limiter "
                      "refuses is not judged, since the limiter answered it, not the server's MCP handling")

    def summary(self, cases: int) -> Notice | None:
        """At the end of the run: how much of it the rate limiter took, when it took any."""
        if not self.refused:
            return None
        return Notice(f"{self.refused} of {cases} cases were refused with HTTP 429 (too many requests) and not "
                      "judged: the server's rate limit cut the run short; raise its limit to test what it refused")
