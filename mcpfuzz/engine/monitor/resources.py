"""Resource samples of a server's process tree over a run: RSS, open file descriptors, threads."""

from __future__ import annotations

import time
from dataclasses import dataclass

import psutil


@dataclass(frozen=True)
class Sample:
    """What the process tree held at one moment, and how many requests had been sent by then."""

    t: float  # seconds since the sampler started (monotonic clock)
    requests: int
    rss: int  # bytes, summed over the tree
    fds: int | None  # open file descriptors summed over the tree; None where the OS has no such count
    threads: int = 0
    processes: int = 0
    v8: bool = False  # a process of the tree runs V8 (Node.js, Deno), whose heap sizes itself up lazily


class ResourceSampler:
    """Samples one root process and, unless `tree=False`, all its descendants.

    About 2 ms per sample on Linux with ~80 processes on the machine (psutil finds children by reading
    every process's parent), so sample on a clock (every second or few), not after every request.
    A sampler belongs to one process: after a restart, make a new one (a fresh process starts small,
    and mixing two lifetimes in one series would hide or fake growth).
    """

    def __init__(self, pid: int, *, tree: bool = True) -> None:
        self.pid = pid
        self.tree = tree
        self._root: psutil.Process | None = None
        self._started = time.monotonic()
        try:
            self._root = psutil.Process(pid)
        except psutil.Error:
            self._root = None  # already gone: every sample is None

    def sample(self, requests: int) -> Sample | None:
        """One sample, or None when the root process is gone (or a zombie); never raises for a child."""
        root = self._root
        if root is None:
            return None
        try:
            with root.oneshot():  # status and usage from one read of /proc/<pid>/stat
                if root.status() == psutil.STATUS_ZOMBIE:
                    return None  # exited, not yet reaped: it holds no memory worth judging
                rss, fds, threads, v8 = _usage(root)
            members = root.children(recursive=True) if self.tree else []
        except psutil.Error:
            return None  # the root died between two reads
        processes = 1
        for child in members:
            try:
                child_rss, child_fds, child_threads, child_v8 = _usage(child)
            except psutil.Error:
                continue  # it ended (or became unreadable) while we looked: it holds nothing now
            processes += 1
            rss += child_rss
            threads += child_threads
            v8 = v8 or child_v8
            if fds is not None and child_fds is not None:
                fds += child_fds
        return Sample(time.monotonic() - self._started, requests, rss, fds, threads, processes, v8)


V8_PROGRAMS = frozenset({"node", "nodejs", "deno"})


def _usage(process: psutil.Process) -> tuple[int, int | None, int, bool]:
    """RSS, open fds, thread count of one process and whether it runs V8 (one /proc pass for all)."""
    with process.oneshot():
        rss = process.memory_info().rss
        threads = process.num_threads()
        fds: int | None = process.num_fds() if hasattr(process, "num_fds") else None  # POSIX only
        v8 = process.name() in V8_PROGRAMS
    return rss, fds, threads, v8
