"""Last-resort cleanup: every server process group we started dies with mcpfuzz."""

from __future__ import annotations

import atexit
import contextlib
import os
import signal

import psutil

_live_groups: set[int] = set()


def register(pgid: int) -> None:
    """Remember a process group so that it is killed at interpreter exit at the latest."""
    _live_groups.add(pgid)


def kill_group(pgid: int) -> None:
    """SIGKILL a whole process group (the server and anything it spawned) and forget it.

    The server's descendants that left the group (a child in a new session) are found first and killed by pid,
    each checked to be the same process; a daemon that double-forked away before this is out of reach.
    """
    _live_groups.discard(pgid)
    strays = _descendants(pgid)
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signal.SIGKILL)
    for process in strays:
        with contextlib.suppress(psutil.Error):
            if process.is_running():  # same pid and start time: never a stranger that reused the pid
                process.kill()


def _descendants(pid: int) -> list[psutil.Process]:
    """Every process below `pid` (its children, theirs, ...), whatever their process group."""
    try:
        return psutil.Process(pid).children(recursive=True)
    except psutil.Error:
        return []


def kill_all() -> None:
    """Kill every group still registered (atexit and signal paths)."""
    for pgid in list(_live_groups):
        kill_group(pgid)


atexit.register(kill_all)
