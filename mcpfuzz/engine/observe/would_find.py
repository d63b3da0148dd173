"""Whether an effect charged to several calls in flight at once would be a finding, were it known to be one's."""

from __future__ import annotations

import copy
from collections.abc import Callable, Collection, Iterable
from dataclasses import replace
from typing import Any

from mcpfuzz.jsonrpc.exchange import Exchange
from mcpfuzz.jsonrpc.oracle_ids import OracleId
from mcpfuzz.oracles.observed import escapes, injections, network_egress, read_only_changes

# Each oracle's judgement of what a call was seen doing (the part of it that reads `Exchange.observation`).
_CHECKS: dict[OracleId, Callable[[Exchange], Iterable[Any]]] = {
    OracleId.SANDBOX_ESCAPE: escapes,
    OracleId.COMMAND_INJECTION: injections,
    OracleId.READ_ONLY_TRUTHFUL: read_only_changes,
    OracleId.NETWORK_EGRESS: network_egress,
}


def would_find(exchange: Exchange, oracles: Collection[str]) -> bool:
    """True when one of `oracles` would fail on the exchange's ambiguous effects taken as its own."""
    observation = exchange.observation
    if observation is None or not any(effect.ambiguous for effect in observation.effects):
        return False
    taken = copy.copy(exchange)
    taken.observation = replace(observation, effects=tuple(replace(effect, ambiguous=False)
                                                           for effect in observation.effects if effect.ambiguous))
    return any(oracle in oracles and next(iter(check(taken)), None) is not None for oracle, check in _CHECKS.items())
