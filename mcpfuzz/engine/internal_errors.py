"""mcpfuzz's own errors in the field: each ends only the case it happened in, and is reported, never hidden.

A server may send anything; when what it sent (or a strategy's draw) still reaches a bug of mcpfuzz, the run
goes on with the next case and the report lists each distinct error once, with how often it happened, the
case it first ended and where in mcpfuzz it was raised, so that it can be reported and fixed.
"""

from __future__ import annotations

import traceback
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Protocol

PACKAGE_ROOT = Path(__file__).resolve().parent.parent  # mcpfuzz/
MESSAGE_LIMIT = 300  # an exception's message may quote a server's huge line


@dataclass(frozen=True)
class InternalError:
    """One distinct error of mcpfuzz: what, where, the phase and case it first ended, and how often it came."""

    what: str  # the exception type and message: `TypeError: Object of type Absent is not JSON serializable`
    where: str  # the innermost line of mcpfuzz that raised it: `engine/searches/frame_fuzz.py:308 in _note_ids`
    phase: str  # the phase it first happened in (`fuzz`)
    case: str  # the case's target or frame family, and the case in a few words
    count: int = 1

    @property
    def key(self) -> tuple[str, str]:
        """Two errors are the same when they have the same type, message and place."""
        return (self.what, self.where)

    def as_dict(self) -> dict[str, Any]:
        """The JSON report's entry."""
        return {"what": self.what, "where": self.where, "phase": self.phase, "case": self.case, "count": self.count}

    def describe(self) -> str:
        """One line for the console."""
        times = f" ({self.count} times)" if self.count > 1 else ""
        return f"{self.what} at {self.where}, in {self.phase} ({self.case}){times}"


def internal_error(error: BaseException, phase: str, case: str) -> InternalError:
    """The error as a report entry (`case`: the case's target or frame family, and what the case was)."""
    what = f"{type(error).__name__}: {error}"
    if len(what) > MESSAGE_LIMIT:
        what = what[:MESSAGE_LIMIT] + "..."
    return InternalError(what, raised_at(error), phase, case)


def raised_at(error: BaseException) -> str:
    """The innermost frame of mcpfuzz's own code in the traceback (a library's frame when none is ours)."""
    frames = traceback.extract_tb(error.__traceback__)
    if not frames:
        return "unknown"
    ours = [frame for frame in frames if _inside_package(frame.filename)]
    frame = (ours or frames)[-1]
    path = Path(frame.filename)
    shown = path.resolve().relative_to(PACKAGE_ROOT).as_posix() if _inside_package(frame.filename) else path.name
    return f"{shown}:{frame.lineno} in {frame.name}"


def _inside_package(filename: str) -> bool:
    try:
        Path(filename).resolve().relative_to(PACKAGE_ROOT)
    except ValueError:
        return False
    return True


class NoteInternal(Protocol):
    """Where a phase says that one of its cases ended on an error of mcpfuzz (then goes on with the next)."""

    def __call__(self, error: Exception, case: str) -> None:
        """Record `error`, raised while running `case` (its target or frame family and what it was)."""
        ...


class InternalErrors:
    """The run's internal errors, one entry per distinct error (in the order first seen), with counts."""

    LIMIT = 100  # distinct errors kept; more are counted only

    def __init__(self) -> None:
        self._entries: dict[tuple[str, str], InternalError] = {}
        self.total = 0

    def note(self, error: BaseException, phase: str, case: str) -> InternalError:
        """Count `error`; a new one is kept with the case it ended. Returns its entry."""
        self.total += 1
        entry = internal_error(error, phase, case)
        known = self._entries.get(entry.key)
        if known is not None:
            entry = self._entries[entry.key] = replace(known, count=known.count + 1)
        elif len(self._entries) < self.LIMIT:
            self._entries[entry.key] = entry
        return entry

    def entries(self) -> tuple[InternalError, ...]:
        """Every distinct error, first seen first."""
        return tuple(self._entries.values())
