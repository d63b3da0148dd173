"""Counts in words a person reads: "1 finding", "2 findings", "1,204 cases"."""

from __future__ import annotations

# Nouns whose plural is not the noun with an "s".
IRREGULAR = {"entry": "entries", "baseline entry": "baseline entries", "stale baseline entry": "stale baseline entries"}


def counted(number: int, noun: str, *, grouped: bool = False) -> str:
    """`number` and the noun, singular for exactly one; `grouped` writes thousands with commas."""
    shown = f"{number:,}" if grouped else str(number)
    if number == 1:
        return f"{shown} {noun}"
    return f"{shown} {IRREGULAR.get(noun, noun + 's')}"


def restarts_said(restarts: int, planned: int) -> str:
    """The restarts the server forced, then mcpfuzz's own planned ones when there were any: "2 restarts (7 planned)"."""
    said = counted(restarts, "restart")
    return f"{said} ({planned} planned)" if planned else said
