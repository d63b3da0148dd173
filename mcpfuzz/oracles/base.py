"""Severities, failure classes with identity, and the oracle registry."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from enum import IntEnum

from mcpfuzz.jsonrpc.exchange import Exchange


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


class Failure(Exception):
    """One oracle's verdict on one exchange. Subclassed once per oracle (distinct bugs stay apart)."""

    oracle: str = ""
    title: str = ""

    def __init__(self, severity: Severity, message: str, key: str = "", *, server_wide: bool = False) -> None:
        super().__init__(message)
        self.severity = severity
        self.message = message
        # Two failures of one oracle on one target with the same key are the same bug; a
        # server-wide failure (noise on stdout, silence on every bad frame) is one bug whatever
        # the target, so it is reported once, not once per frame.
        self.key = key
        self.server_wide = server_wide


Check = Callable[[Exchange], Iterable[Failure]]


@dataclass(frozen=True)
class Oracle:
    """A registered check: its stable id, what it looks for, and its failure class."""

    id: str
    title: str
    failure: type[Failure]
    check: Check


REGISTRY: dict[str, Oracle] = {}


def failure_class(oracle_id: str, title: str) -> type[Failure]:
    """Make the failure class of an oracle (named after the id, e.g. `ParseErrorFailure`)."""
    name = "".join(part.capitalize() for part in oracle_id.split("-")) + "Failure"
    return type(name, (Failure,), {"oracle": oracle_id, "title": title})


def register(failure: type[Failure]) -> Callable[[Check], Check]:
    """Register a check function under its failure class's oracle id."""

    def decorate(check: Check) -> Check:
        if failure.oracle in REGISTRY:
            raise ValueError(f"oracle {failure.oracle!r} registered twice")
        REGISTRY[failure.oracle] = Oracle(failure.oracle, failure.title, failure, check)
        return check

    return decorate


def all_oracles() -> dict[str, Oracle]:
    """Every oracle, with the built-in ones imported."""
    from mcpfuzz.oracles import builtin  # noqa: F401  (registers on import)

    return REGISTRY


def run_checks(exchange: Exchange, selected: Iterable[str]) -> Iterator[Failure]:
    """Run the selected oracles on one exchange. A crash silences all but `no-crash` (one finding)."""
    oracles = all_oracles()
    for oracle_id in selected:
        if exchange.crash is not None and oracle_id != "no-crash":
            continue
        yield from oracles[oracle_id].check(exchange)
