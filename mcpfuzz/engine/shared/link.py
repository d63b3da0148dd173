"""The connection to the shared Redis: every call guarded, so a lost Redis slows nothing and breaks nothing.

A call that fails marks the link down; until `RETRY_AFTER` has passed, calls return None at once
instead of waiting for a timeout each time (a soak makes calls between cases). The heartbeat is what
tries again and, once Redis answers, resyncs what was kept locally meanwhile.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

from mcpfuzz.engine.shared.options import SharedOptions

if TYPE_CHECKING:
    from redis import Redis

T = TypeVar("T")
TIMEOUT = 2.0  # seconds a Redis command or connection may take before Redis counts as lost
RETRY_AFTER = 2.0  # after a failure, calls are skipped this long (the heartbeat probes meanwhile)


class SharedUnavailable(Exception):
    """The shared store cannot be used: what happened and a tip (never the password)."""


def redis_client(options: SharedOptions) -> Redis:
    """A client for the URL with short timeouts and no silent retries (a lost Redis must fail fast)."""
    try:
        import redis
        from redis.backoff import NoBackoff
        from redis.retry import Retry
    except ImportError:
        raise SharedUnavailable("--shared needs the redis package, which is not installed\n"
                                "tip: pip install 'mcp-wirefuzz[shared]'") from None
    return redis.Redis.from_url(options.url, socket_timeout=TIMEOUT, socket_connect_timeout=TIMEOUT,
                                retry=Retry(NoBackoff(), 0), decode_responses=False)


class SharedLink:
    """A guarded Redis client: `call` runs a command or returns None while Redis is down."""

    def __init__(self, options: SharedOptions, client: Redis | None = None) -> None:
        self.options = options
        self.client = client if client is not None else redis_client(options)
        self.up = True
        self.outages = 0  # how many times Redis was lost
        self.calls = 0  # commands sent (pipelines count once): the traffic a soak costs Redis
        self.seconds = 0.0  # time spent waiting for Redis: what sharing costs this process
        self.last_error = ""
        self._retry_at = 0.0
        self._lock = threading.Lock()
        self.on_restore: Callable[[], None] = lambda: None

    def key(self, *parts: object) -> str:
        """A key under the project's prefix: `PREFIX:part:part`."""
        return ":".join((self.options.prefix, *map(str, parts)))

    def check(self) -> None:
        """Ping Redis once; SharedUnavailable with what happened when it does not answer."""
        from redis.exceptions import RedisError

        try:
            self.client.ping()
        except RedisError as error:
            raise SharedUnavailable(f"the shared store {self.options.label} cannot be reached: "
                                    f"{describe(error, self.options)}\ntip: check the URL, that Redis runs there "
                                    "and the password; --shared-optional soaks locally meanwhile") from None

    def call(self, command: Callable[[Redis], T], *, probe: bool = False) -> T | None:
        """Run `command` on the client; None (and the link marked down) when Redis does not answer.

        While down, commands are skipped until the retry time; `probe` tries anyway (the heartbeat).
        """
        from redis.exceptions import RedisError

        if not self.up and not probe and time.monotonic() < self._retry_at:
            return None
        started = time.perf_counter()
        try:
            result = command(self.client)
        except RedisError as error:
            self._lost(error)
            return None
        finally:
            self.seconds += time.perf_counter() - started
        self.calls += 1
        if not self.up:
            with self._lock:
                restored, self.up = not self.up, True
            if restored:
                self.on_restore()
        return result

    def _lost(self, error: Exception) -> None:
        with self._lock:
            if self.up:
                self.outages += 1
            self.up = False
            self.last_error = describe(error, self.options)
            self._retry_at = time.monotonic() + RETRY_AFTER

    def close(self) -> None:
        """Close the client's connections."""
        with contextlib.suppress(Exception):  # closing a dead connection may fail in many ways; nothing is lost
            self.client.close()


def describe(error: Any, options: SharedOptions) -> str:
    """A Redis error as one line with the URL's secrets removed."""
    text = str(error) or type(error).__name__
    for secret in options.secrets:
        text = text.replace(secret, "<redacted>")
    return text.splitlines()[0] if text else type(error).__name__
