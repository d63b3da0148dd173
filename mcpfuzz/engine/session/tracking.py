"""Bounded bookkeeping of ids sent and answered (a soak sends millions; memory must stay flat)."""

from __future__ import annotations

from typing import Generic, TypeVar

K = TypeVar("K")
V = TypeVar("V")


class BoundedDict(dict, Generic[K, V]):
    """A dict that forgets its oldest half when it grows past `limit` (insertion order is age)."""

    def __init__(self, limit: int = 50_000) -> None:
        super().__init__()
        self.limit = limit

    def __setitem__(self, key: K, value: V) -> None:
        super().__setitem__(key, value)
        if len(self) > self.limit:
            for old in list(self)[: self.limit // 2]:
                del self[old]
