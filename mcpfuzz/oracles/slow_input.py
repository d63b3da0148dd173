"""`slow-input`: a call answered far later than its target's usual, an algorithmic blow-up (a regular expression
that backtracks, `9**9**9`) that a client waits out while the server's worker is busy.

The engine sets `SlowAfter` part only on a small call it saw slow three times on the same server (at
least 1 s and 20 times the median of the target's answered calls), the target's simplest call quick after each
repeat: a loaded machine is not a finding. A call never answered stays `no-hang`'s.
"""

from __future__ import annotations

from collections.abc import Iterator

from mcpfuzz.jsonrpc.exchange import ID_CURRENT, Exchange
from mcpfuzz.jsonrpc.oracle_ids import OracleId
from mcpfuzz.jsonrpc.parts.slow_after import SlowAfter
from mcpfuzz.oracles.base import Failure, Severity, failure_class, register

SlowInputFailure = failure_class(OracleId.SLOW_INPUT, "Input makes the server slow")
# An answer this late is past the request timeout of common clients: they give up, the server's work goes on.
MEDIUM_AFTER = 10.0


@register(SlowInputFailure, Severity.MEDIUM)
def slow_input(exchange: Exchange) -> Iterator[Failure]:
    """A call is answered far later than its target's usual (1 s and 20x its median) and as slow again when repeated."""
    slow = exchange.case.expect.part(SlowAfter)
    if slow is None:
        return
    limit = slow.seconds
    answer = next((arrival for arrival in exchange.responses() if arrival.id_tag == ID_CURRENT), None)
    if answer is None or answer.at < limit:
        return
    severity = Severity.MEDIUM if answer.at >= MEDIUM_AFTER else Severity.LOW
    yield SlowInputFailure(severity, f"answered after {answer.at:.1f} s, far above this target's usual "
                                     f"(slow from {limit:.1f} s); repeated, it was as slow again")
