"""Last-resort cleanup: every server process group we started dies with mcpfuzz."""

from __future__ import annotations

import atexit
import contextlib
import os
import signal

_live_groups: set[int] = set()


def register(pgid: int) -> None:
    """Remember a process group so that it is killed at interpreter exit at the latest."""
    _live_groups.add(pgid)


def kill_group(pgid: int) -> None:
    """SIGKILL a whole process group (the server and anything it spawned) and forget it."""
    _live_groups.discard(pgid)
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signal.SIGKILL)


def kill_all() -> None:
    """Kill every group still registered (atexit and signal paths)."""
    for pgid in list(_live_groups):
        kill_group(pgid)


atexit.register(kill_all)
