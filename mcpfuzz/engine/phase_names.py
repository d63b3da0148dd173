"""The names a run's phases go by, apart from the events so that the configuration can use them cheaply."""

from __future__ import annotations

from enum import Enum


class Name(str, Enum):
    """A name that is its own string: reports, checkpoints and worker messages hold the plain value."""

    def __str__(self) -> str:
        # Python 3.11 formats a mixed-in enum as `Class.MEMBER`; console lines and f-strings want the value.
        return str(self.value)

    def __format__(self, spec: str) -> str:
        return format(str(self.value), spec)


class PhaseName(Name):
    """The phases of a run, as `PhaseStarted`, `CaseDone` and `stats.phases` name them."""

    PROBE = "probe"
    REGRESSION = "regression"  # the corpus replayed before the catalogue
    CATALOGUE = "catalogue"
    LIFECYCLE = "lifecycle"
    COVERAGE = "coverage"
    FUZZ = "fuzz"
    STATEFUL = "stateful"
    SOAK = "soak"  # a soak's slices after its once-only phases
    LINT = "lint"  # the lint rules on what the probe read, before the catalogue
    FLIGHT = "flight"  # work in flight: calls cancelled inside their measured latency, one target at once
    CLIENT = "client"  # mcpfuzz as a client: the server's requests for input answered in every way, retries fuzzed
    TASKS = "tasks"  # the tasks extension: task ids valid, unknown, malformed and cancelled
