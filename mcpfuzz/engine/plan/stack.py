"""The MCP stack the server runs, settled once the handshake is done: what the live process tree shows, else what
the command's files say (read when the run started), else unknown; told once, in the run header."""

from __future__ import annotations

import anyio.to_thread

from mcpfuzz.engine.attribution.running import running_stack
from mcpfuzz.engine.events import StackFound
from mcpfuzz.engine.plan.context import RunContext
from mcpfuzz.engine.session.session import Session

UNKNOWN = ("unknown: no known MCP SDK or framework in the server's processes or its command's files; "
           "no finding is marked as a known SDK behaviour")
NOT_OURS = ("unknown: mcpfuzz did not start the server, so no process of it could be read (give --launch to have "
            "it started); no finding is marked as a known SDK behaviour")


async def settle_stack(context: RunContext, session: Session) -> None:
    """Read the stack from the running server's processes (it wins over the command's files), then say it."""
    pid = session.server.pid
    if pid is not None:
        found = await anyio.to_thread.run_sync(running_stack, pid)
        if found is not None:
            context.sdk = found
    if not context.config.shard.lead:
        return
    sdk = context.sdk
    if sdk is None:
        context.emit(StackFound(None, UNKNOWN if pid is not None else NOT_OURS))
        return
    summary = sdk.name() if sdk.base is None else f"{sdk.name()} on {sdk.base.name()}"
    context.emit(StackFound(sdk.to_json(), f"{summary} ({sdk.evidence()}): findings that are its known behaviours "
                                           "are marked as such"))
