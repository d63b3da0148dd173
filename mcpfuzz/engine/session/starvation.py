"""How long a server's threads waited for a CPU while runnable (Linux schedstat): on a loaded machine an answer
comes late because the server was not scheduled, which is the machine's time, not the server's own."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import psutil

PROC = Path("/proc")


@dataclass(frozen=True)
class RunQueueWaits:
    """Each thread's seconds spent runnable but waiting for a CPU so far, over a process and its children."""

    waits: dict[int, float]  # thread id -> seconds

    @staticmethod
    def take(pid: int | None) -> RunQueueWaits | None:
        """The waits of the process `pid` and its children now, or None where the kernel does not say (no /proc
        schedstat, a process gone, a server mcpfuzz did not start)."""
        if pid is None:
            return None
        try:
            pids = [pid, *(child.pid for child in psutil.Process(pid).children(recursive=True))]
        except psutil.Error:
            return None
        waits: dict[int, float] = {}
        for process in pids:
            for stat in (PROC / str(process) / "task").glob("*/schedstat"):
                try:
                    waits[int(stat.parent.name)] = int(stat.read_text().split()[1]) / 1e9
                except (OSError, ValueError, IndexError):
                    continue
        return RunQueueWaits(waits) if waits else None

    def longest_since(self, earlier: RunQueueWaits | None) -> float:
        """The longest any one thread waited for a CPU between `earlier` and now (0.0 when it cannot be told):
        the answer of a call came at most that much later than the server's own work made it."""
        if earlier is None:
            return 0.0
        return max((wait - earlier.waits[thread] for thread, wait in self.waits.items() if thread in earlier.waits),
                   default=0.0)
