"""The warm standby: one more server process started while the current one is in use, so a restart costs no start."""

from __future__ import annotations

from collections.abc import Callable

from mcpfuzz.engine.session.startup import StartupTimes
from mcpfuzz.transport.base import HoldsStandby

# A server that starts faster than this gets no standby: its restart costs about what a standby's bookkeeping
# does, and an extra idle process would buy nothing (mcpfuzz's own test servers start in about 0.05 s).
STANDBY_WORTH = 0.25


class StandbyKeeper:
    """Keeps one standby process beside the current one, for servers slow to start (`always`: for any server).

    A standby is started only once the current process has answered (never two starts at once competing for the
    CPU), is sent nothing until a restart takes it (so it serves a lifecycle case, which needs a process with no
    handshake of ours, and a normal restart alike), and is replaced when it dies on its own.
    """

    def __init__(self, holder: HoldsStandby | None, refusal: str, *, enabled: bool, always: bool = False,
                 notice: Callable[[str], object]) -> None:
        self.holder = holder if enabled else None
        # Whatever the start measured (once measured): the choice of process is then not the machine's speed's.
        self._always = always and self.holder is not None
        self._refusal = refusal if enabled else ""
        self._notice = notice
        self._given_up = False
        self._worth = False  # the server's measured start is slow enough for a standby to buy something

    @property
    def standbys(self) -> int:
        """Standby processes started."""
        return self.holder.standbys if self.holder is not None else 0

    @property
    def warm_starts(self) -> int:
        """Starts that took a standby instead of starting a process."""
        return self.holder.warm_starts if self.holder is not None else 0

    def measured(self, startup: StartupTimes) -> None:
        """A start was measured: is the server slow enough to start for a standby to buy something?"""
        self._worth = startup.median is not None and (self._always or startup.median >= STANDBY_WORTH)

    @property
    def active(self) -> bool:
        """True when `tend` has something to do (checked after every case: a standby held needs nothing)."""
        return self._worth and not self._given_up and (self.holder is None or not self.holder.has_standby)

    async def tend(self, startup: StartupTimes) -> None:
        """The current process has answered: start a standby unless one runs (called after each case)."""
        holder = self.holder
        median = startup.median
        if not self.active or median is None:
            return
        if holder is None:
            self._give_up(f"each restart waits for the server to start ({median:.1f}s): no standby process, since "
                          f"{self._refusal}" if self._refusal else "")
            return
        if not holder.standby_problem:
            await holder.hold_standby()
        if holder.standby_problem:
            self._give_up(f"restarts now wait for the server to start ({median:.1f}s each): {holder.standby_problem}")

    def _give_up(self, why: str) -> None:
        """No standby from now on; `why` said to the user (when there is something to say)."""
        self._given_up = True
        if why:
            self._notice(why)
