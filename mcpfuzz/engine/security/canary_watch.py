"""The hits folder watched between calls: files a shell running a payload created, handed to the judge."""

from __future__ import annotations

import contextlib
import os
from dataclasses import dataclass, field

from mcpfuzz.jsonrpc.exchange import Exchange
from mcpfuzz.strategies.payloads.canaries import HIT_FILE


@dataclass
class CanaryWatch:
    """Hit files seen and not yet claimed by the call whose frame names their token.

    A hit file is deleted once a call claims it, so that the same call re-run (while shrinking, or when the
    finding is verified on a fresh server) has to create it again to fail again.
    """

    folder: str
    pending: set[str] = field(default_factory=set)

    def look(self, exchange: Exchange) -> None:
        """Tell the exchange every hit file seen so far (the oracle keeps those its own frames name)."""
        try:
            names = os.listdir(self.folder)
        except OSError:
            names = []
        self.pending.update(name for name in names if HIT_FILE.fullmatch(name))
        exchange.canary_files = tuple(sorted(self.pending))

    def settle(self, exchange: Exchange) -> None:
        """Forget (and delete) the hit files this exchange's own frames name."""
        sent = b"".join(exchange.frames) or exchange.case.data
        for name in exchange.canary_files:
            if name.encode() in sent:
                self.pending.discard(name)
                with contextlib.suppress(OSError):
                    os.remove(os.path.join(self.folder, name))
