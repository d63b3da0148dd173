"""A call judged on what the server was seen doing (`--observe`, `--security`): what a replay needs to judge it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from mcpfuzz.jsonrpc.oracle_ids import OracleId
from mcpfuzz.jsonrpc.parts.part import CasePart, case_part

if TYPE_CHECKING:
    from mcpfuzz.jsonrpc.expectation import Expectation

# The oracles a hook's records can make fail: a finding of one of them on an observed case replays only observed.
OBSERVED_ORACLES = frozenset({OracleId.SANDBOX_ESCAPE, OracleId.COMMAND_INJECTION, OracleId.READ_ONLY_TRUTHFUL,
                              OracleId.NETWORK_EGRESS})


@case_part("observed")
@dataclass(frozen=True)
class ObservedCall(CasePart):
    """A call whose side effects a hook in the server reported (read by sandbox-escape, command-injection,
    read-only-truthful and network-egress).

    `read_only` and `open_world`: its tool's `readOnlyHint` and `openWorldHint` as the server declared them when it
    was called (a replay does not list the tools); `allowed`: the folders the server was given besides its workspace
    and working folder (--allow-path). The effects themselves are never saved: a replay observes again.
    """

    read_only: bool = False
    open_world: bool = False
    allowed: tuple[str, ...] = ()


def needs_observation(expect: Expectation, oracle: str) -> bool:
    """True when a finding of `oracle` on this case can only be judged again with a hook in the server."""
    return oracle in OBSERVED_ORACLES and expect.has(ObservedCall)
