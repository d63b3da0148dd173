"""Secrets a run obtained while it ran (bearer tokens): every redaction hides them as it hides the configured ones.

A token fetched mid-run is in no configuration the redactors were built from; the transport that fetches one
remembers it here, and `mcpfuzz.corpus.redact.Redactor` reads this list before each use.
"""

from __future__ import annotations

_ISSUED: list[str] = []
_SEEN: set[str] = set()


def remember(secret: str) -> None:
    """Hide `secret` from now on in everything redacted."""
    if secret and secret not in _SEEN:
        _SEEN.add(secret)
        _ISSUED.append(secret)


def issued() -> tuple[str, ...]:
    """Every secret remembered so far, oldest first."""
    return tuple(_ISSUED)


def count() -> int:
    """How many secrets are remembered (a redactor rebuilds its patterns when this changes)."""
    return len(_ISSUED)


def forget_after(mark: int) -> None:
    """Forget every secret remembered after the first `mark` (a process that makes one run after another, each
    with its own tokens, such as a test process)."""
    for secret in _ISSUED[mark:]:
        _SEEN.discard(secret)
    del _ISSUED[mark:]
