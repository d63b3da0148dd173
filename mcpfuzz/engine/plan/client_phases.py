"""mcpfuzz as a full client: while the earlier phases run, the requests whose server asks for input are noted
(tool calls, prompt gets, resource and template reads; legacy: elicitation, sampling or roots requests; 2026-07-28:
an `input_required` result, or -32021); after them, each is sent again as it was, its server's requests answered
in every way, or its `input_required` retried valid, tampered and broken; and, in 2026-07-28, sent declaring no
client capability, which it may only refuse (-32021). A soak runs the same cases as one of its slices."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, ClassVar

from mcpfuzz.engine.client.asking import AskingBook
from mcpfuzz.engine.client.capabilities import METHOD_CAPABILITY, ClientCapability, declared_capabilities
from mcpfuzz.engine.config import CALL_PHASES
from mcpfuzz.engine.events import PhaseName, PhaseStarted
from mcpfuzz.engine.plan.context import RunContext
from mcpfuzz.engine.plan.phase_cases import PhaseCases, PhaseOver
from mcpfuzz.engine.session.modes import patient_until
from mcpfuzz.engine.session.session import Session
from mcpfuzz.jsonrpc.client_check import FUZZ_MODES, VALID_MODES, AnswerMode, AskingRequest, RetryKind
from mcpfuzz.jsonrpc.exchange import ID_CURRENT, Exchange
from mcpfuzz.jsonrpc.frame import Case
from mcpfuzz.jsonrpc.oracle_ids import OracleId
from mcpfuzz.jsonrpc.parts.client import ClientCheck
from mcpfuzz.jsonrpc.versions import Era
from mcpfuzz.strategies.client_cases import client_request_case, request_params, retry_case
from mcpfuzz.strategies.messages import FrameBuilder

CLIENT_FIRST_ID = 2**37  # above the flight phase's ids (2**36 on), below the random frames' (2**40 on)
CLIENT_ID_STRIDE = 2**20  # ids per soak slice of the client cases: a slice sends far fewer, so no id is reused
MAX_ROUNDS = 3  # valid retries in a row while the server keeps answering input_required
ASKING = frozenset(METHOD_CAPABILITY)
CLIENT_ORACLES = (OracleId.CLIENT_REQUESTS, OracleId.INPUT_REQUIRED, OracleId.MISSING_CAPABILITY)


def asking_book(context: RunContext) -> AskingBook | None:
    """The run's book of requests seen asking for input, when `WatchAskingPhase` installed one."""
    return next((o for o in context.judged_observers if isinstance(o, AskingBook)), None)


def asks_for_input(context: RunContext) -> bool:
    """Whether the client phase will have requests to work on (the call sequences keep its share of the time then)."""
    book = asking_book(context)
    return book is not None and bool(book.asking)


def client_skip(context: RunContext) -> str | None:
    """Why the client side cannot be tried on this run (None: it can)."""
    if not any(phase in context.config.phases for phase in CALL_PHASES):
        return "no call phase in --phases (the calls find the requests that ask for input)"
    if not any(oracle in context.config.oracles for oracle in CLIENT_ORACLES):
        return "none of client-requests, input-required and missing-capability is selected"
    return None


@dataclass(frozen=True)
class WatchAskingPhase:
    """Start noting the requests whose server asks for input as the calls are judged."""

    name: str = "asking"

    def skip_reason(self, context: RunContext) -> str | None:
        return client_skip(context)

    async def run(self, context: RunContext, session: Session) -> None:
        if asking_book(context) is None:
            context.judged_observers.append(AskingBook())



@dataclass(frozen=True)
class ClientPhase:
    """The server's requests for input answered in every way, and its 2026-07-28 retries fuzzed."""

    name: str = PhaseName.CLIENT.value
    share: ClassVar[float] = 0.2  # of what the fuzz phase leaves, kept from call sequences when a tool asked

    def kept_share(self, context: RunContext) -> float:
        return self.share if asks_for_input(context) else 0.0

    def skip_reason(self, context: RunContext) -> str | None:
        reason = client_skip(context)
        if reason is None and not asks_for_input(context):
            return "no request asked for input"
        return reason

    async def run(self, context: RunContext, session: Session) -> None:
        await client_cases(context, session, context.budget.deadline, CLIENT_FIRST_ID)


async def client_cases(context: RunContext, session: Session, until: float, first_id: int) -> None:
    """Every asking request's client cases, in the order first seen asking, until `until` (the first always runs);
    ids from `first_id` on."""
    probe, book = context.probe, asking_book(context)
    if probe is None or book is None or not book.asking:
        return
    runner = _Runner(context, session, FrameBuilder(probe.era, probe.version, next_id=first_id), until)
    asking = list(book.asking.values())
    context.emit(PhaseStarted(PhaseName.CLIENT, detail=f"{len(asking)} requests asked for input: "
                                                       f"{', '.join(f'{a.family}/{a.name}' for a in asking)}"))
    try:
        # A slow call waits as in every call phase: up to --call-timeout, never past the phase's end (then unjudged).
        with patient_until(session, until):
            await _each_request(runner, probe.era, asking)
    except PhaseOver:
        return


async def _each_request(runner: _Runner, era: Era, asking: list[AskingRequest]) -> None:
    """Every asking request's client cases, in order."""
    for request in asking:
        if era is Era.MODERN:
            await runner.modern(request)
        else:
            await runner.legacy(request)


class _Runner(PhaseCases):
    """The client phase's cases, with the capabilities the session declared."""

    def __init__(self, context: RunContext, session: Session, builder: FrameBuilder, until: float) -> None:
        super().__init__(context, session, PhaseName.CLIENT)
        self.until = until
        self.builder = builder
        self.capabilities = session.options.client_capabilities
        self.declared = tuple(c.value for c in ClientCapability if c in self.capabilities)

    def send(self, asking: AskingRequest, mode: AnswerMode, declared: tuple[str, ...] | None = None) -> Case:
        names = self.declared if declared is None else declared
        capabilities = frozenset(ClientCapability(name) for name in names)
        params = request_params(self.builder, asking, declared_capabilities(capabilities))
        return client_request_case(self.builder, asking, params, ClientCheck(mode, names))

    async def legacy(self, asking: AskingRequest) -> None:
        """A request whose server sent a request mcpfuzz serves, sent again with every other answer mode."""
        first = await self.run(self.send(asking, AnswerMode.ACCEPT))
        methods = {str(request.message.get("method")) for request in first.server_requests}
        served = {method for method in methods & ASKING if METHOD_CAPABILITY[method] in self.capabilities}
        if not served or first.crash is not None:
            return  # asks for nothing mcpfuzz serves (missing-capability judged what it asked for)
        for mode in (*VALID_MODES[1:], *FUZZ_MODES):
            await self.run(self.send(asking, mode))

    async def modern(self, asking: AskingRequest) -> None:
        """A request answered input_required, retried valid for a few rounds and then with each broken retry; and
        sent declaring no client capability."""
        case = self.send(asking, AnswerMode.ACCEPT)
        asked = _input_required(await self.run(case))
        if asked is None:
            return
        original = _params(case)
        baseline, current = None, asked
        roots = self.session.responder.roots()
        for _ in range(MAX_ROUNDS):
            retried = _answer(await self.run(retry_case(self.builder, asking, original, current, RetryKind.VALID,
                                                        self.declared, roots)))
            if not isinstance(retried, dict) or retried.get("resultType") != "input_required":
                baseline = retried if current is asked else None  # tampering is compared on the first round only
                break
            current = retried
        for kind in RetryKind:
            if kind is not RetryKind.VALID:
                await self.run(retry_case(self.builder, asking, original, asked, kind, self.declared, roots,
                                          baseline if kind.tampered else None))
        if self.declared:
            await self.run(self.send(asking, AnswerMode.ACCEPT, declared=()))


def _answer(exchange: Exchange) -> Any:
    """The result the case's own request got (None: an error, or no answer)."""
    for arrival in exchange.responses():
        if arrival.id_tag == ID_CURRENT and arrival.incoming.is_result:
            return arrival.incoming.message.get("result")
    return None


def _input_required(exchange: Exchange) -> dict | None:
    """The `input_required` result the case got, if it got one."""
    result = _answer(exchange)
    return result if isinstance(result, dict) and result.get("resultType") == "input_required" else None


def _params(case: Case) -> dict:
    """The params of the request a case sends."""
    params = json.loads(case.data).get("params")
    return params if isinstance(params, dict) else {}
