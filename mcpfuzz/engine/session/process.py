"""The server's processes as a session uses them: each start timed, the standby kept and lent, comebacks counted."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

from mcpfuzz.engine.session.comebacks import Comebacks
from mcpfuzz.engine.session.patience import startup_deadline
from mcpfuzz.engine.session.standby import StandbyKeeper
from mcpfuzz.engine.session.startup import StartupTimes
from mcpfuzz.transport.base import HoldsStandby, ServerConnection


@dataclass(frozen=True)
class Borrowed:
    """A standby lent for one case: when the process set aside meanwhile was spawned."""

    spawned_at: float | None


class ProcessKeeper:
    """When the current process was spawned and asked for, until its first answer measures its start; the standby
    process beside it (StandbyKeeper); failed comebacks in a row (Comebacks)."""

    def __init__(self, startup_timeout: float) -> None:
        self.startup_timeout = startup_timeout
        self.startup = StartupTimes()  # spawn to first answer, per process started cold
        self.comebacks = Comebacks()  # failed comebacks in a row: back-off, and a server given up on
        self.standby: StandbyKeeper = StandbyKeeper(None, "", enabled=False, notice=lambda _: None)
        self._spawned_at: float | None = None  # the current process' spawn (monotonic; None: not a process of ours)
        self._cold_spawn: float | None = None  # a cold start's spawn, until its first answer measures the start
        self._asked_at: float | None = None  # when the current process was asked for, until its first answer

    def keep_standby(self, holder: HoldsStandby | None, refusal: str, *, enabled: bool, always: bool = False,
                     notice: Callable[[str], object]) -> None:
        """Standbys for this connection (`holder`: None when it cannot keep one, `refusal` says why; `always`: for
        a server of any start time, StandbyKeeper)."""
        self.standby = StandbyKeeper(holder, refusal, enabled=enabled, always=always, notice=notice)

    @property
    def standbys(self) -> int:
        """Standby processes started (see StandbyKeeper)."""
        return self.standby.standbys

    @property
    def warm_restarts(self) -> int:
        """Starts that took a standby process instead of starting one and waiting for it."""
        return self.standby.warm_starts

    @property
    def standby_pid(self) -> int | None:
        """The standby process' pid, while one is held."""
        holder = self.standby.holder
        return holder.standby_pid if holder is not None else None

    @property
    def standby_warm(self) -> bool:
        """True when a standby has run as long as the server's measured start: a restart now waits for nothing (a
        plan may keep cases that need a fresh process until then)."""
        holder, median = self.standby.holder, self.startup.median
        spawned = holder.standby_spawned_at if holder is not None and holder.has_standby else None
        return spawned is not None and median is not None and time.monotonic() - spawned >= median

    async def start(self, server: ServerConnection) -> None:
        """A fresh process (the standby when one is held), its spawn and the moment it was asked for noted."""
        holder, asked = self.standby.holder, time.monotonic()
        warm = self.warm_restarts
        await server.start()
        if server.pid is None:
            # No process of ours: its start is not ours to wait for.
            self._spawned_at = self._cold_spawn = self._asked_at = None
        else:
            spawned = holder.spawned_at if holder is not None else None
            self._spawned_at = asked if spawned is None else spawned
            self._cold_spawn = None if self.warm_restarts > warm else self._spawned_at
            self._asked_at = asked

    def startup_until(self, first_answer: float | None) -> float | None:
        """While the current process has answered nothing yet: the latest its first answer may come (its start may
        be slow; --startup-timeout counts from its spawn, a standby's too)."""
        if self._asked_at is None or self._spawned_at is None or first_answer is not None:
            return None
        return startup_deadline(self._spawned_at, self.startup_timeout, self.startup.median)

    @property
    def tending(self) -> bool:
        """True when `answered` has something to do (rarely: after a start, or to keep a standby)."""
        return self._asked_at is not None or self.standby.active

    async def answered(self, first_answer: float | None) -> None:
        """After a case or the handshake: once the current process has answered, its start is measured (a cold
        one) and a standby is kept for the next restart."""
        if first_answer is None:
            return
        if self._asked_at is not None:
            self.startup.add_wait(max(0.0, first_answer - self._asked_at))
            if self._cold_spawn is not None:
                self.startup.add(first_answer - self._cold_spawn)
                self.standby.measured(self.startup)
            self._asked_at = self._cold_spawn = None
        await self.standby.tend(self.startup)

    async def borrow(self, ready: bool) -> Borrowed | None:
        """The standby in use for one case while the ready process is kept aside; None when there is none."""
        holder = self.standby.holder
        if holder is None or not (ready and holder.has_standby):
            return None
        asked = time.monotonic()
        if not await holder.borrow_standby():
            return None
        borrowed = Borrowed(self._spawned_at)
        self._spawned_at, self._asked_at, self._cold_spawn = holder.spawned_at, asked, None
        return borrowed

    async def give_back(self, borrowed: Borrowed) -> None:
        """The borrowed process is killed; the one set aside is in use again, as it was (if it still runs)."""
        holder = self.standby.holder
        assert holder is not None
        await holder.return_borrowed()
        self._spawned_at, self._asked_at, self._cold_spawn = borrowed.spawned_at, None, None


def failed_comeback(server: ServerConnection, error: Exception) -> str:
    """What a restart that did not come back ran into: the error, the exit status, the last stderr line."""
    end = server.end if not server.alive else None
    parts = [str(error)] + ([end.describe()] if end is not None else [])
    stderr = server.stderr.text(1).strip()
    return "; ".join(parts + ([f"stderr: {stderr[:200]}"] if stderr else []))
