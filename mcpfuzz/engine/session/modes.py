"""A session's modes, each set for one block and put back on every way out of it (return, error, cancellation).

A mode written as a plain attribute by one phase and reset by another leaks into the phases after it when the
first one stops early; these blocks make that impossible.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

from mcpfuzz.jsonrpc.versions import Era

if TYPE_CHECKING:
    from mcpfuzz.engine.session.session import Session


@contextmanager
def thorough(session: Session) -> Iterator[None]:
    """Each valid answer is followed by a barrier, so a second answer lands in its own case (probe, lifecycle,
    verification, replay)."""
    before = session.thorough
    session.thorough = True
    try:
        yield
    finally:
        session.thorough = before


@contextmanager
def speaking(session: Session, era: Era | None, version: str | None) -> Iterator[None]:
    """Frames of another era and version (a saved case replayed as it was recorded); `None` keeps the session's."""
    before = session.era, session.version
    session.era, session.version = era or session.era, version or session.version
    try:
        yield
    finally:
        session.era, session.version = before


@contextmanager
def patient_until(session: Session, deadline: float) -> Iterator[None]:
    """A slow call is waited for until `deadline` at most (the end of its phase or its target's share)."""
    before = session.patience.until
    session.patience.until = deadline
    try:
        yield
    finally:
        session.patience.until = before
