"""The run's dictionary: strings the server itself declared or returned (names, URIs, enum values, result ids).

Drawn strings rarely name anything the server knows; these do. The dictionary keeps words in the order they were
first seen, up to MAX_WORDS, so two runs of a deterministic server with the same seed hold the same words at the
same point and draw the same calls.
"""

from __future__ import annotations

from collections.abc import Iterable

from mcpfuzz.strategies.arguments.harvest import MAX_VALUE_LENGTH, harvest
from mcpfuzz.strategies.payloads.canaries import carries_canary

from mcpfuzz.jsonrpc.exchange import Exchange

MAX_WORDS = 64


class Dictionary:
    """Strings worth drawing, first seen first, bounded; `words` is a snapshot a search draws from."""

    def __init__(self, limit: int = MAX_WORDS) -> None:
        self.limit = limit
        self._words: dict[str, None] = {}

    def add(self, words: Iterable[str]) -> None:
        """Keep each new non-empty string of `words` while there is room (never one holding a --security canary)."""
        for word in words:
            if len(self._words) >= self.limit:
                return
            if isinstance(word, str) and 0 < len(word) <= MAX_VALUE_LENGTH and not carries_canary(word):
                self._words.setdefault(word, None)

    def add_result(self, exchange: Exchange) -> None:
        """Keep the strings of a successful result (ids, names, paths it returned), in the order they appear."""
        if len(self._words) < self.limit:
            self.add(reversed(harvest(exchange, [])))

    @property
    def words(self) -> tuple[str, ...]:
        """The words held now, in the order they were first seen."""
        return tuple(self._words)

    def __len__(self) -> int:
        return len(self._words)
