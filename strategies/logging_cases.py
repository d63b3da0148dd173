"""`logging/setLevel` (legacy era, when the server declares `logging`): every level, and one that does not exist."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from mcpfuzz.strategies.messages import FrameBuilder

from mcpfuzz.jsonrpc import expectation as ex
from mcpfuzz.jsonrpc.expectation import Expectation
from mcpfuzz.jsonrpc.frame import Case
from mcpfuzz.jsonrpc.oracle_ids import OracleId
from mcpfuzz.jsonrpc.versions import Era

SET_LEVEL = "logging/setLevel"
# RFC 5424 severities, as MCP server/utilities/logging names them; the quietest last, so the server is left quiet.
LEVELS = ("debug", "info", "notice", "warning", "error", "critical", "alert", "emergency")


def logging_family(b: FrameBuilder, ctx: Any) -> Iterator[Case]:
    """Each level gets an (empty) result; an unknown level -32602 (a SHOULD, so another answer is low).

    2026-07-28 removed logging/setLevel, so the modern era sends nothing here.
    """
    if ctx.era is not Era.LEGACY or "logging" not in ctx.capabilities:
        return
    rid = b.fresh_id()
    yield Case("unknown-level", "logging", "logging/setLevel with a level that does not exist",
               b.frame(SET_LEVEL, {"level": "mcpfuzz-loud"}, rid),
               Expectation(judge=OracleId.INVALID_PARAMS, id=rid, codes=frozenset({ex.INVALID_PARAMS}),
                           well_formed=True, method=SET_LEVEL, note="MCP logging: an invalid log level",
                           wrong_answer="low"))
    for level in LEVELS:
        rid = b.fresh_id()
        yield Case(f"level-{level}", "logging", f"logging/setLevel {level}", b.frame(SET_LEVEL, {"level": level}, rid),
                   ex.result(rid, SET_LEVEL))
