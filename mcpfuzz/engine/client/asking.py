"""The requests seen asking mcpfuzz for input while the earlier phases ran: a judged observer, read by the client
phase. Any request 2026-07-28 lets ask (tools/call, prompts/get, resources/read), one per target."""

from __future__ import annotations

import json
from dataclasses import dataclass, field

from mcpfuzz.engine.client.capabilities import METHOD_CAPABILITY
from mcpfuzz.engine.events import PhaseName
from mcpfuzz.jsonrpc.client_check import MISSING_CAPABILITY, MRTR_METHODS, AskingRequest
from mcpfuzz.jsonrpc.exchange import ID_CURRENT, Exchange
from mcpfuzz.jsonrpc.target_kind import TargetKind

MAX_ASKING = 32  # targets remembered, in the order first seen asking
SET_PER_CASE = ("_meta", "inputResponses", "requestState")  # params the client phase writes itself
# The targets whose calls may ask (a catalogue or concurrency case of the same request would be a second label).
ASKING_KINDS = frozenset(kind.value for kind in (TargetKind.TOOL, TargetKind.PROMPT, TargetKind.RESOURCE,
                                                 TargetKind.TEMPLATE))


@dataclass
class AskingBook:
    """Each target whose request made its server ask for input (a legacy request of elicitation, sampling or roots,
    an `input_required` result, or -32021), with the first request that did, by the target's label."""

    asking: dict[str, AskingRequest] = field(default_factory=dict)

    def __call__(self, phase: PhaseName, exchange: Exchange, judged: object) -> None:
        """Note `exchange`'s request when its server asked for input on it."""
        case = exchange.case
        if phase is PhaseName.CLIENT or case.family not in ASKING_KINDS or len(self.asking) >= MAX_ASKING \
                or case.target in self.asking:
            return
        if not _asked(exchange):  # first: most exchanges asked nothing, and reading the frame parses it again
            return
        request = _asking_request(case.family, case.id, case.data)
        if request is not None:
            self.asking[case.target] = request


def _asking_request(family: str, name: str, data: bytes) -> AskingRequest | None:
    """The request a case's frame sends, when it is one request of a method that may ask for input."""
    try:
        message = json.loads(data)
    except ValueError:
        return None  # several lines (a concurrency case), or a malformed frame
    if not isinstance(message, dict) or message.get("method") not in MRTR_METHODS:
        return None
    params = message.get("params")
    if not isinstance(params, dict):
        return None
    kept = {key: value for key, value in params.items() if key not in SET_PER_CASE}
    return AskingRequest(family, name, str(message["method"]), kept)


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
