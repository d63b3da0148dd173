"""The starts and ends of known secrets in a text, found without writing every piece of every secret out.

A cut text (a message, a line, a tail) may hold a secret's first or last characters without the rest. One regular
expression listing every such piece grows with the square of a secret's length: a bearer token of a thousand
characters makes a million-character pattern that takes seconds to compile and to search. Every piece of a secret
starts with one of its windows of `shortest` characters, so a small pattern of those windows finds where a piece
may start, and the piece is measured there.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass


@dataclass(frozen=True)
class Place:
    """A secret's piece may start at a text position whose window is this one: a start of `secret` when `offset`
    is 0, else the end of `secret` from `offset` on."""

    secret: str
    offset: int


class SecretPieces:
    """Replaces every start and every end of the given secrets (at least `shortest` characters, shorter than the
    secret itself), as one alternation of all those pieces, longest first, would: the leftmost piece, the longest
    one there, and on after it."""

    def __init__(self, secrets: Iterable[str], shortest: int) -> None:
        self.shortest = shortest
        self._places: dict[str, list[Place]] = {}
        for secret in sorted(set(secrets)):
            # Starts: secret[:k]; ends: secret[j:]; both for shortest <= length < len(secret).
            for offset in range(len(secret) - shortest + 1 if len(secret) > shortest else 0):
                window = secret[offset:offset + shortest]
                self._places.setdefault(window, []).append(Place(secret, offset))
        self._windows = re.compile(_trie(sorted(self._places))) if self._places else None

    def __bool__(self) -> bool:
        return self._windows is not None

    def sub(self, replacement: str, text: str) -> str:
        """`text` with each piece replaced by `replacement`."""
        if self._windows is None:
            return text
        parts: list[str] = []
        done = 0  # text[:done] is in parts
        position = 0
        while (found := self._windows.search(text, position)) is not None:
            start = found.start()
            length = self._longest(text, start)
            if length:
                parts += (text[done:start], replacement)
                done = position = start + length
            else:
                position = start + 1
        parts.append(text[done:])
        return "".join(parts)

    def _longest(self, text: str, start: int) -> int:
        """The length of the longest piece at `start` (0 for none)."""
        longest = 0
        for place in self._places[text[start:start + self.shortest]]:
            secret = place.secret
            if place.offset == 0:  # a start, one character short of the whole secret at most
                length = _common_prefix(text, start, secret, len(secret) - 1)
            else:
                length = len(secret) - place.offset if text.startswith(secret[place.offset:], start) else 0
            longest = max(longest, length)
        return longest if longest >= self.shortest else 0


def _common_prefix(text: str, start: int, secret: str, limit: int) -> int:
    """How many characters of `text` from `start` on are the first ones of `secret` (at most `limit`)."""
    low, high = 0, min(limit, len(text) - start)
    while low < high:  # text[start:start+low] == secret[:low]; find the largest such low by halving
        middle = (low + high + 1) // 2
        if text.startswith(secret[:middle], start):
            low = middle
        else:
            high = middle - 1
    return low


def _trie(words: list[str]) -> str:
    """One pattern matching any of `words` (all of one length), their common starts written once: a text position
    is tried against a few dozen characters, not against every word."""
    children: dict[str, list[str]] = {}
    for word in words:
        children.setdefault(word[0], []).append(word[1:])
    branches: list[str] = []
    for first, rests in children.items():
        rest = [word for word in rests if word]
        branches.append(re.escape(first) + (_trie(rest) if rest else ""))
    return branches[0] if len(branches) == 1 else "(?:" + "|".join(branches) + ")"
