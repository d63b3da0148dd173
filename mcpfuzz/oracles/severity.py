"""How bad a finding is, apart from the registry so that the command line reads `--fail-on` without the oracles."""

from __future__ import annotations

from enum import IntEnum


class Severity(IntEnum):
    """How bad a finding is; `--fail-on` compares against this order."""

    LOW = 1
    MEDIUM = 2
    HIGH = 3
    CRITICAL = 4

    @classmethod
    def parse(cls, text: str) -> Severity:
        """Read a severity name given on the command line."""
        return cls[text.strip().upper()]

    def __str__(self) -> str:
        return self.name.lower()
