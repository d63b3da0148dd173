"""The record of one case: what was sent, what came back, what the process did."""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from mcpfuzz.jsonrpc.effects import Observation
from mcpfuzz.jsonrpc.frame import Case
from mcpfuzz.jsonrpc.http_reply import HttpReply
from mcpfuzz.jsonrpc.incoming import NOTIFICATION, Incoming
from mcpfuzz.jsonrpc.versions import Era

# How a response's id relates to what was sent.
ID_CURRENT = "current"      # the id of this case's frame
ID_EARLIER = "earlier"      # an id sent before (a late or duplicate answer)
ID_NULL = "null"            # id null
ID_UNKNOWN = "unknown"      # an id never sent
ID_MISSING = "missing"      # no id member


@dataclass(frozen=True)
class Arrival:
    """One message received while the case was open, with its id tagged."""

    incoming: Incoming
    at: float
    id_tag: str = ""
    answer_count: int = 0


@dataclass(frozen=True)
class ProcessEnd:
    """How a server process ended: exit status and the tail of its stderr."""

    returncode: int | None
    stderr_tail: str
    # More of stderr's end than the tail shown: what ended the process may sit above a long usage text the
    # program printed after it (cobra's `Error: ...` then 40 lines of flags); read to tell whose words those are.
    stderr_context: str = ""

    def describe(self) -> str:
        """Exit status in words (negative codes are signals)."""
        code = self.returncode
        if code is None:
            return "the connection closed"
        if code < 0:
            import signal

            try:
                return f"killed by {signal.Signals(-code).name}"
            except ValueError:
                return f"killed by signal {-code}"
        return f"exited with status {code}"


@dataclass
class Exchange:
    """Everything observed for one case, the input of every oracle."""

    case: Case
    era: Era
    protocol_version: str
    frames: list[bytes] = field(default_factory=list)
    arrivals: list[Arrival] = field(default_factory=list)
    server_requests: list[Incoming] = field(default_factory=list)
    barrier_answered: bool | None = None
    timed_out: bool = False
    # The answer was not in within --timeout, the server answered a liveness request (or its process ran on,
    # busy), so the wait went on to the call limit (a slow tool, not a dropped request).
    extended: bool = False
    # The server answered no liveness request either while it ran this call (its one thread busy with it):
    # waited for all the same, since only silence to the end of the call limit is a hang.
    blocked: bool = False
    # The extended wait ended at the phase's deadline, before --call-timeout: no verdict on silence.
    cut_short: bool = False
    # Past the fair wait for its call (--call-timeout, or many times its target's slowest answer), a fresh request
    # went unanswered too while the process ran: stuck, whatever the run's time left.
    wedged: bool = False
    cpu_share: float | None = None  # of one core, used by the process while that fresh request went unanswered
    waited: float = 0.0
    crash: ProcessEnd | None = None
    write_error: str | None = None
    stderr_tail: str = ""
    http: HttpReply | None = None  # over HTTP: what the POST of the case's frame got back
    posts: list[HttpReply] = field(default_factory=list)  # a frame POSTed line by line: each POST's reply, in order
    # --security: the hit files found in the watched canary folder when the case was judged (file names only).
    canary_files: tuple[str, ...] = ()
    # --security: canary tokens no answer can be evidence of: sent by mcpfuzz earlier in the run, or naming a file
    # or folder inside the workspace (something the fuzzer created there), so the server may only be echoing them.
    canaries_echoed: tuple[str, ...] = ()
    # --observe / --security: what the server process was seen doing during the case (None: not observed).
    observation: Observation | None = None
    # When the exchange was made (time.monotonic(), just before its frame went out): side effects after it are its.
    started: float = field(default_factory=time.monotonic)

    def progress_count(self) -> int:
        """How many progress notifications arrived while the case was open (a long call saying it is working)."""
        return sum(1 for a in self.arrivals if a.incoming.kind == NOTIFICATION
                   and a.incoming.message.get("method") == "notifications/progress")

    def responses(self) -> list[Arrival]:
        """Arrivals that are responses (batch arrays already expanded)."""
        return [a for a in self.arrivals if a.incoming.kind == "response"]

