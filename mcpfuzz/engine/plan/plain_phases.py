"""The phases of a plain JSON-RPC 2.0 run (`run --jsonrpc`): no handshake, methods from an OpenRPC document."""

from __future__ import annotations

from dataclasses import dataclass

from mcpfuzz.engine.errors import UnusableServer
from mcpfuzz.engine.events import PhaseName, PhaseStarted, ProbeDone
from mcpfuzz.engine.plan.context import RunContext
from mcpfuzz.engine.plan.finishing import PLAIN_ERA, PLAIN_VERSION
from mcpfuzz.engine.plan.protocol_phases import run_cases
from mcpfuzz.engine.session.session import HarnessError, Session
from mcpfuzz.engine.surface.probe import ProbeResult
from mcpfuzz.jsonrpc.openrpc import OpenRpcError, read_methods
from mcpfuzz.jsonrpc.target_kind import TargetKind
from mcpfuzz.jsonrpc.versions import Era
from mcpfuzz.strategies.jsonrpc_catalogue import jsonrpc_catalogue


@dataclass(frozen=True)
class PlainProbePhase:
    """The server answers; its methods come from the OpenRPC document, given or read with `rpc.discover`."""

    name: str = PhaseName.PROBE.value

    def skip_reason(self, context: RunContext) -> str | None:
        return None

    async def run(self, context: RunContext, session: Session) -> None:
        context.emit(PhaseStarted(PhaseName.PROBE))
        # The legacy era's builders add no `_meta`; the version is what transcripts record (replay reads it back).
        session.era, session.version = Era.LEGACY, PLAIN_VERSION
        await session.ensure_ready()
        methods = context.config.jsonrpc_methods or await _discover_methods(session)
        context.probe = ProbeResult(Era.LEGACY, PLAIN_VERSION, declared={TargetKind.METHOD: list(methods)})
        context.emit(ProbeDone(PLAIN_ERA, PLAIN_VERSION, {}, {}, (), startup=session.startup.first))


async def _discover_methods(session: Session) -> tuple[dict, ...]:
    """The OpenRPC service discovery method `rpc.discover`: the server's own document, read as --openrpc is."""
    tip = "give the server's OpenRPC document with --openrpc FILE"
    try:
        reply = await session.call("rpc.discover")
    except HarnessError as error:
        raise UnusableServer(f"rpc.discover got no answer ({error})", tip=tip) from None
    if not reply.is_result:
        raise UnusableServer(f"rpc.discover was refused: {reply.text(200)}", tip=tip)
    try:
        return tuple(read_methods(reply.message["result"]))
    except OpenRpcError as error:
        raise UnusableServer(f"the document rpc.discover returned cannot be read: {error}", tip=tip) from None


@dataclass(frozen=True)
class PlainCataloguePhase:
    """The JSON-RPC-only catalogue: malformed frames and the rules of JSON-RPC 2.0, no MCP case."""

    name: str = PhaseName.CATALOGUE.value

    def skip_reason(self, context: RunContext) -> str | None:
        return None if PhaseName.CATALOGUE in context.config.phases else "not in --phases"

    async def run(self, context: RunContext, session: Session) -> None:
        assert context.probe is not None
        methods = context.probe.declared[TargetKind.METHOD]
        await run_cases(context, session, PhaseName.CATALOGUE, jsonrpc_catalogue(methods[0]["name"]))
