"""A server's surface read as a run's probe reads it: start, negotiate the era, list every declared kind."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import anyio

from mcpfuzz.engine.errors import UnusableServer
from mcpfuzz.engine.runner import session_options
from mcpfuzz.engine.session.session import HarnessError, Session
from mcpfuzz.engine.snapshot.surface import KIND_OF_SECTION, build_surface
from mcpfuzz.engine.surface.probe import ProbeResult, probe
from mcpfuzz.jsonrpc.target_kind import TargetKind
from mcpfuzz.transport.errors import ServerStartError

if TYPE_CHECKING:
    from mcpfuzz.engine.config import RunConfig


@dataclass
class Capture:
    """The surface read (None when the server could not be probed), the probe's notes, and why it failed."""

    server: str
    surface: dict[str, Any] | None = None
    notes: list[str] = field(default_factory=list)
    error: str = ""


def surface_of(found: ProbeResult) -> dict[str, Any]:
    """The normalised snapshot of a probe's result."""
    declared = {section: list(found.declared.get(TargetKind(kind), [])) for section, kind in KIND_OF_SECTION.items()}
    return build_surface(era=found.era.value, version=found.version, server_info=found.server_info,
                         capabilities=found.capabilities, declared=declared)


async def capture(config: RunConfig) -> Capture:
    """Probe the server of `config` within its budget; the surface or why not (the server's stderr tail, a tip)."""
    outcome = Capture(config.public().server_label)
    with anyio.move_on_after(config.budget) as scope:
        try:
            async with Session(config.target, session_options(config)) as session:
                found = await probe(session, config.protocol_version)
                outcome.surface, outcome.notes = surface_of(found), list(found.notes)
        except ServerStartError as error:
            outcome.error = f"{error}\ntip: check the command after `--` (or the URL)"
        except UnusableServer as error:
            outcome.error = error.explained()
        except HarnessError as error:
            outcome.error = f"the server stopped answering while its surface was read: {error}"
    if scope.cancelled_caught:
        outcome.error = f"the surface was not read within {config.budget:g}s\ntip: raise --budget or --startup-timeout"
    return outcome
