"""`mcpfuzz run --compare`: the same catalogue against two servers, and every frame whose outcome differs."""

from __future__ import annotations

from dataclasses import dataclass, replace

from mcpfuzz.engine.compare_calls import RecordedCall, envelopes, normalised, replay_calls
from mcpfuzz.engine.config import RunConfig
from mcpfuzz.engine.events import CaseDone, Event, EventSink, PhaseName, RunFinished
from mcpfuzz.engine.json_paths import Step
from mcpfuzz.engine.runner import run
from mcpfuzz.jsonrpc.exchange import ID_CURRENT, ID_EARLIER, Exchange
from mcpfuzz.jsonrpc.ids import show_id
from mcpfuzz.strategies.http_cases import FAMILY as HTTP_FAMILY
from mcpfuzz.transport.target import ServerKind

COMPARED_PHASES = (PhaseName.PROBE, PhaseName.CATALOGUE, PhaseName.LIFECYCLE)
# The call phases whose calls the second server gets too, byte for byte and in the same order.
REPLAYED_PHASES = (PhaseName.COVERAGE, PhaseName.STATEFUL)
# Examples per search when the call phases are compared: counted, not timed, so the first run is bounded.
COMPARE_EXAMPLES = 20
# HTTP-only cases have no stdio counterpart; they are compared only between two HTTP servers.
TRANSPORT_FAMILIES = (HTTP_FAMILY,)


@dataclass(frozen=True)
class Difference:
    """One case whose outcome differs between the two servers."""

    target: str
    title: str
    frame: bytes
    first: str
    second: str


@dataclass
class Comparison:
    """Both runs and their differences."""

    first: RunFinished
    second: RunFinished
    differences: list[Difference]
    compared: int
    only_one: list[str]
    calls: int = 0  # calls of the call phases sent to both servers
    stopped: str = ""  # why the second server did not get every call


def outcome_of(exchange: Exchange) -> str:
    """What a client sees for a frame, independent of transport: answers (kind, code, id relation), or not."""
    if exchange.crash is not None:
        return "the server died"
    parts = []
    for arrival in exchange.arrivals:
        incoming = arrival.incoming
        if incoming.kind != "response" or arrival.id_tag == ID_EARLIER:
            continue
        relation = "its id" if arrival.id_tag == ID_CURRENT else f"id {show_id(incoming.id)}"
        if incoming.is_error:
            parts.append(f"error {incoming.error_code} with {relation}")
        elif incoming.is_result:
            parts.append(f"a result with {relation}")
        else:
            parts.append(f"a malformed response with {relation}")
    if not parts:
        return "no answer (timed out)" if exchange.timed_out else "no answer"
    return "; ".join(parts)


async def _outcomes(config: RunConfig, emit: EventSink, calls: list[RecordedCall] | None = None
                    ) -> tuple[RunFinished, dict[str, tuple[str, bytes, str]]]:
    outcomes: dict[str, tuple[str, bytes, str]] = {}

    def collect(event: Event) -> None:
        if isinstance(event, CaseDone) and event.phase in COMPARED_PHASES[1:]:
            case = event.exchange.case
            outcomes[case.target] = (case.title, case.data, outcome_of(event.exchange))
        elif isinstance(event, CaseDone) and event.phase in REPLAYED_PHASES and calls is not None:
            calls.append(RecordedCall(event.exchange.case, envelopes(event.exchange)))
        emit(event)

    finished = await run(config, collect)
    return finished, outcomes


async def compare(first: RunConfig, second: RunConfig, emit: EventSink,
                  ignore: tuple[tuple[Step, ...], ...] = ()) -> Comparison:
    """Run the protocol phases against both servers (one after the other) and diff the outcomes by case; then send
    the first server's coverage and stateful calls (when asked for) to the second and diff whole envelopes."""
    replayed = tuple(phase for phase in REPLAYED_PHASES if phase in first.phases)
    calls: list[RecordedCall] = []
    first = replace(first, phases=COMPARED_PHASES + replayed, corpus=None,
                    max_examples=first.max_examples or COMPARE_EXAMPLES)
    second = replace(second, phases=COMPARED_PHASES, corpus=None, protocol_version=first.protocol_version)
    finished_a, outcomes_a = await _outcomes(first, emit, calls)
    if second.protocol_version is None and finished_a.protocol_version:
        # Same era and version on both sides, or every frame would differ for that reason alone.
        second = replace(second, protocol_version=finished_a.protocol_version)
    finished_b, outcomes_b = await _outcomes(second, emit)
    both_urls = first.target.kind is ServerKind.URL and second.target.kind is ServerKind.URL
    skip = () if both_urls else TRANSPORT_FAMILIES
    shared = [t for t in outcomes_a if t in outcomes_b and t.split("/")[0] not in skip]
    only_one = sorted((set(outcomes_a) ^ set(outcomes_b)) - {t for t in outcomes_a if t.split("/")[0] in skip}
                      - {t for t in outcomes_b if t.split("/")[0] in skip})
    differences = [Difference(t, outcomes_a[t][0], outcomes_a[t][1], outcomes_a[t][2], outcomes_b[t][2])
                   for t in shared if outcomes_a[t][2] != outcomes_b[t][2]]
    stopped = ""
    if calls and not finished_b.error:
        answers, stopped = await replay_calls(second, calls)
        for number, (call, answer) in enumerate(zip(calls, answers, strict=False), 1):
            mine, theirs = normalised(call.envelopes, ignore), normalised(answer, ignore)
            if mine != theirs:
                differences.append(Difference(f"{call.case.target} (call {number})", call.case.title, call.case.data,
                                              _shown(mine), _shown(theirs)))
    return Comparison(finished_a, finished_b, differences, len(shared), only_one, len(calls), stopped)


def _shown(text: str, limit: int = 400) -> str:
    return text if len(text) <= limit else f"{text[:limit]}... ({len(text)} chars)"
