"""The context frames are built for, and the two expectations where the spec fixes little."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from mcpfuzz.jsonrpc import expectation as ex
from mcpfuzz.jsonrpc.expectation import Expectation
from mcpfuzz.jsonrpc.ids import ABSENT
from mcpfuzz.jsonrpc.oracle_ids import OracleId
from mcpfuzz.jsonrpc.parts.leniency import QuietOk
from mcpfuzz.jsonrpc.versions import Era

UNKNOWN_PREFIX = "mcpfuzz/"  # every unknown method we send starts with it, so none is real
INT64 = 2**63


@dataclass(frozen=True)
class FrameContext:
    """What the frames are built for: the era, and the tool `tools/call` frames call (if any)."""

    era: Era
    version: str
    tool: dict | None = None
    arguments: dict | None = None  # the tool's simplest valid arguments
    empty_arguments_valid: bool = False
    tool_names: frozenset[str] = field(default_factory=frozenset)
    tools_listed: bool = True  # the server advertises tools, so tools/list is a valid request

    @property
    def barrier_method(self) -> str:
        """ping (legacy) or server/discover (modern): the simplest request of the era."""
        return "ping" if self.era is Era.LEGACY else "server/discover"

    @property
    def methods(self) -> tuple[str, ...]:
        """The known methods frames are built on, simplest first."""
        listed = ("tools/list",) if self.tools_listed else ()
        return (self.barrier_method, *listed) + (("tools/call",) if self.tool is not None else ())


def anything(note: str, ids: tuple[Any, ...] = ()) -> Expectation:
    """The spec leaves the answer open: only a crash, a hang or noise is a finding.

    `ids` are the ids the frame carried, so that a late answer to them is not blamed on the next case.
    """
    return Expectation(judge=OracleId.NO_HANG, reply=False, id=ABSENT, id_recoverable=False, batch_ids=ids, note=note)


def quiet_invalid(id: Any) -> Expectation:
    """An MCP-invalid id (fraction, boolean, object, array): -32600, echoed or null; silence is low."""
    return Expectation(judge=OracleId.INVALID_REQUEST, id=id, id_recoverable=True, null_id_ok=True,
                       codes=frozenset({ex.INVALID_REQUEST}), parts=(QuietOk(),))
