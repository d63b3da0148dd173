"""What the judge of a --security case is told: hit files a shell created, and canary tokens that prove nothing."""

from __future__ import annotations

import contextlib
import os
from dataclasses import dataclass, field

from mcpfuzz.jsonrpc.exchange import Exchange
from mcpfuzz.strategies.payloads.canaries import CANARY_TOKEN, HIT_FILE

# Names looked at under the workspace when an answer quotes a canary: a workspace the fuzzer filled with many files
# is looked at in part, never walked whole on every case.
MAX_WORKSPACE_NAMES = 20_000


@dataclass
class CanaryWatch:
    """Hit files seen and not yet claimed by the call whose frame names their token, and the canary tokens the run
    itself put somewhere the server can echo them from.

    A hit file is deleted once a call claims it, so that the same call re-run (while shrinking, or when the
    finding is verified on a fresh server) has to create it again to fail again.
    """

    folder: str  # the hits folder
    workspace: str | None = None  # the folder the server was given; None: no workspace to look in
    pending: set[str] = field(default_factory=set)
    sent: set[str] = field(default_factory=set)  # canary tokens any frame of the run carried

    def look(self, exchange: Exchange) -> None:
        """Tell the exchange every hit file seen so far (the oracle keeps those its own frames name), and the canary
        tokens its answer may hold without proving anything."""
        try:
            names = os.listdir(self.folder)
        except OSError:
            names = []
        self.pending.update(name for name in names if HIT_FILE.fullmatch(name))
        exchange.canary_files = tuple(sorted(self.pending))
        self.sent.update(_tokens(b"".join((*exchange.case.history, *exchange.case.setup, *exchange.frames,
                                           exchange.case.data))))
        quoted = _tokens(b"".join(arrival.incoming.raw for arrival in exchange.arrivals)) - self.sent
        named = self._named_in_workspace() if quoted else set()
        exchange.canaries_echoed = tuple(sorted(self.sent | (quoted & named)))

    def settle(self, exchange: Exchange) -> None:
        """Forget (and delete) the hit files this exchange's own frames name."""
        sent = b"".join(exchange.frames) or exchange.case.data
        for name in exchange.canary_files:
            if name.encode() in sent:
                self.pending.discard(name)
                with contextlib.suppress(OSError):
                    os.remove(os.path.join(self.folder, name))

    def _named_in_workspace(self) -> set[str]:
        """Canary tokens in the names of files and folders inside the workspace: the server did not read those from
        where they were planted, something created them there (a listing of the workspace quotes them)."""
        if self.workspace is None:
            return set()
        found: set[str] = set()
        seen = 0
        for _, folders, files in os.walk(self.workspace):
            for name in (*folders, *files):
                found.update(match.group(0) for match in CANARY_TOKEN.finditer(name))
            seen += len(folders) + len(files)
            if seen >= MAX_WORKSPACE_NAMES:
                break
        return found


def _tokens(data: bytes) -> set[str]:
    """The canary tokens in `data`."""
    return {match.group(0) for match in CANARY_TOKEN.finditer(data.decode("utf-8", "replace"))}
