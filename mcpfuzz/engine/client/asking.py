"""The tools seen asking mcpfuzz for input while the call phases ran: a judged observer, read by the client phase."""

from __future__ import annotations

import json
from dataclasses import dataclass, field

from mcpfuzz.engine.client.capabilities import METHOD_CAPABILITY
from mcpfuzz.engine.events import PhaseName
from mcpfuzz.jsonrpc.exchange import ID_CURRENT, Exchange
from mcpfuzz.jsonrpc.target_kind import TargetKind

MISSING_CAPABILITY = -32021  # 2026-07-28: the request needs a client capability that was not declared
MAX_TOOLS = 32  # tools remembered, in the order first seen asking


@dataclass
class AskingBook:
    """Each tool whose call made its server ask for input (a legacy request of elicitation, sampling or roots, an
    `input_required` result, or -32021), with the first arguments that did."""

    tools: dict[str, dict] = field(default_factory=dict)  # tool name -> its arguments

    def __call__(self, phase: PhaseName, exchange: Exchange, judged: object) -> None:
        """Note `exchange`'s tool when its server asked for input on it."""
        case = exchange.case
        if phase is PhaseName.CLIENT or not case.target.startswith(TargetKind.TOOL.label("")) \
                or len(self.tools) >= MAX_TOOLS or not _asked(exchange):
            return
        try:
            message = json.loads(case.data)
        except ValueError:
            return
        params = message.get("params") if isinstance(message, dict) else None
        if not isinstance(params, dict) or not isinstance(params.get("name"), str):
            return
        arguments = params.get("arguments", {})
        if isinstance(arguments, dict):
            self.tools.setdefault(params["name"], arguments)


def _asked(exchange: Exchange) -> bool:
    """Whether the server asked for input during this exchange, or refused for want of a capability."""
    if any(request.message.get("method") in METHOD_CAPABILITY for request in exchange.server_requests):
        return True
    for arrival in exchange.responses():
        if arrival.id_tag != ID_CURRENT:
            continue
        incoming = arrival.incoming
        if incoming.error_code == MISSING_CAPABILITY:
            return True
        result = incoming.message.get("result") if incoming.is_result else None
        if isinstance(result, dict) and result.get("resultType") == "input_required":
            return True
    return False
