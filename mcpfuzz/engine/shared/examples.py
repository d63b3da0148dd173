"""Hypothesis' example database shared through Redis, with a local copy on every machine.

Each search's database is Hypothesis' own `MultiplexedDatabase` of the local directory database
(as without --shared) and its `RedisExampleDatabase`, so a failing example one machine saved is
replayed first by every other. The Redis half goes through the guarded link: while Redis is down
a fetch finds nothing there (the local copy still answers) and saves wait in a bounded queue until
Redis is back.
Deletes are not shared (see `_GuardedRedis.delete`).
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Iterable
from datetime import timedelta
from functools import partial
from pathlib import Path
from typing import Any

from hypothesis.database import DirectoryBasedExampleDatabase, ExampleDatabase, MultiplexedDatabase

from mcpfuzz.engine.shared.link import SharedLink

PENDING_LIMIT = 10_000  # example saves kept while Redis is down (the local copy keeps them all anyway)


class SharedExamples:
    """Opens each search's multiplexed database and resyncs the saves made while Redis was down."""

    def __init__(self, link: SharedLink) -> None:
        self.link = link
        self._pending: deque[tuple[bytes, bytes, bytes]] = deque(maxlen=PENDING_LIMIT)
        self._lock = threading.Lock()

    def database(self, local: Path) -> ExampleDatabase:
        """The local directory database at `local` and its shared twin, keyed by the folder's name."""
        return MultiplexedDatabase(DirectoryBasedExampleDatabase(str(local)), _GuardedRedis(self, local.name))

    def keep(self, prefix: bytes, key: bytes, value: bytes) -> None:
        """Remember a save Redis did not take."""
        with self._lock:
            self._pending.append((prefix, key, value))

    def resync(self) -> int:
        """Push the saves made while Redis was down; how many went through."""
        with self._lock:
            pending, self._pending = list(self._pending), deque(maxlen=PENDING_LIMIT)
        done = 0
        for index, (prefix, key, value) in enumerate(pending):
            if self.link.call(partial(_save, key=prefix + key, value=value, ttl=int(self.link.options.ttl))) is None:
                with self._lock:
                    self._pending.extendleft(reversed(pending[index:]))
                break
            done += 1
        return done

    @property
    def pending(self) -> int:
        """Saves still waiting for Redis."""
        return len(self._pending)


def _save(client: Any, *, key: bytes, value: bytes, ttl: int) -> bool:
    """One example into its shared set, its expiry renewed."""
    pipe = client.pipeline()
    pipe.sadd(key, value)
    pipe.expire(key, ttl)
    pipe.execute()
    return True


class _GuardedRedis(ExampleDatabase):
    """Hypothesis' RedisExampleDatabase for one search, every call through the link."""

    def __init__(self, shared: SharedExamples, name: str) -> None:
        super().__init__()
        from hypothesis.extra.redis import RedisExampleDatabase

        link = shared.link
        self._shared = shared
        self._prefix = link.key("examples", name, "").encode()
        self._inner = RedisExampleDatabase(link.client, expire_after=timedelta(seconds=link.options.ttl),
                                           key_prefix=self._prefix, listener_channel=link.key("examples-changed"))

    def __repr__(self) -> str:
        return f"SharedRedis({self._prefix!r})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _GuardedRedis) and self._prefix == other._prefix

    def __hash__(self) -> int:
        return hash(self._prefix)

    def fetch(self, key: bytes) -> Iterable[bytes]:
        return self._shared.link.call(lambda client: list(self._inner.fetch(key))) or []

    def save(self, key: bytes, value: bytes) -> None:
        if self._shared.link.call(lambda client: _done(self._inner.save, key, value)) is None:
            self._shared.keep(self._prefix, key, value)

    def delete(self, key: bytes, value: bytes) -> None:
        """Deletes stay local: a machine whose replay does not fail (it knew the bug already, or its server
        differs) must not take the example from every other; shared examples go with the TTL instead."""

    def move(self, src: bytes, dest: bytes, value: bytes) -> None:
        if self._shared.link.call(lambda client: _done(self._inner.move, src, dest, value)) is None:
            self._shared.keep(self._prefix, dest, value)


def _done(command: Any, *args: bytes) -> bool:
    """Run a command that returns nothing; True (the link's sign that Redis answered)."""
    command(*args)
    return True
