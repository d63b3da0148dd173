"""Restarts of a server that does not come back: back-off between them, and a limit after which it is lost."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class RestartPolicy:
    """How a server that fails to come back is restarted.

    A comeback is a restart followed by the handshake; it fails when the new process exits or never completes the
    handshake. After the n-th failed comeback in a row the next start waits `first_wait * growth ** (n - 1)`
    seconds (at most `longest_wait`), and after `max_failed` in a row the server is lost for the rest of the
    session. A comeback that completes the handshake resets the count, so a server that crashes on many cases but
    always comes back is restarted as often as it needs, at once: the limit is on consecutive failed comebacks,
    never on restarts.
    """

    max_failed: int = 5
    first_wait: float = 0.25
    growth: float = 2.0
    longest_wait: float = 4.0

    def wait(self, failed: int) -> float:
        """Seconds before the next start after `failed` failed comebacks in a row (none after a success)."""
        if failed <= 0:
            return 0.0
        return min(self.longest_wait, self.first_wait * self.growth ** (failed - 1))


class Comebacks:
    """Consecutive failed comebacks of one session's server, under a RestartPolicy; `lost` once past its limit."""

    def __init__(self, policy: RestartPolicy | None = None) -> None:
        self.policy = policy or RestartPolicy()
        self.failed = 0  # failed comebacks since the last one that worked
        self.last_failure = ""  # what the latest failed comeback ran into
        self.lost_after: int | None = None  # the session's restarts when the server was given up on

    @property
    def lost(self) -> bool:
        """True once the server failed to come back `max_failed` times in a row (it is not started again)."""
        return self.lost_after is not None

    def wait(self) -> float:
        """The back-off before the next start."""
        return self.policy.wait(self.failed)

    def came_back(self) -> None:
        """A restart completed the handshake: the count starts over."""
        self.failed = 0

    def failed_once(self, why: str, restarts: int) -> None:
        """A restart did not come back (`why`); past the limit the server is lost after `restarts` restarts."""
        self.failed += 1
        self.last_failure = why
        if self.failed >= self.policy.max_failed:
            self.lost_after = restarts

    def as_dict(self) -> dict[str, object]:
        """The report's record of a lost server (`stats.lost`)."""
        return {"failed_in_a_row": self.failed, "restarts": self.lost_after, "last_failure": self.last_failure}

    def verdict(self) -> str:
        """The words for a lost server: how many restarts, and what the last one ran into."""
        return (f"server lost after {self.failed} restarts in a row that did not come back, {self.lost_after} "
                f"restarts in all (last: {self.last_failure})")
