"""`--compare` over the call phases: the calls the first server got, sent again to the second in the same order,
and every whole envelope compared (key order aside, the `--compare-ignore` paths left out)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import anyio

from mcpfuzz.engine.config import RunConfig
from mcpfuzz.engine.errors import UnusableServer
from mcpfuzz.engine.json_paths import Step, without
from mcpfuzz.engine.session.session import HarnessError, Session, SessionOptions
from mcpfuzz.engine.surface.probe import probe
from mcpfuzz.jsonrpc.exchange import ID_EARLIER, Exchange
from mcpfuzz.jsonrpc.frame import Case
from mcpfuzz.transport.errors import ServerStartError

DIED = "<the server died>"


@dataclass(frozen=True)
class RecordedCall:
    """One call of the first server's coverage or stateful phase: its case and the envelopes that came back."""

    case: Case
    envelopes: tuple[Any, ...]


def envelopes(exchange: Exchange) -> tuple[Any, ...]:
    """Every response that came back for the case (late answers to earlier requests aside), decoded."""
    found: list[Any] = [a.incoming.message for a in exchange.responses() if a.id_tag != ID_EARLIER]
    if exchange.crash is not None:
        found.append(DIED)
    return tuple(found)


def normalised(values: tuple[Any, ...], ignore: tuple[tuple[Step, ...], ...]) -> str:
    """The envelopes as canonical JSON (sorted keys), the ignored members removed."""
    kept = []
    for value in values:
        for path in ignore:
            value = without(value, path)
        kept.append(value)
    return json.dumps(kept, sort_keys=True)  # ASCII: a lone surrogate must print too


async def replay_calls(config: RunConfig, calls: list[RecordedCall]) -> tuple[list[tuple[Any, ...]], str]:
    """The second server's envelopes for each recorded call, in order; and why it stopped early ("" when not)."""
    options = SessionOptions(timeout=config.timeout, grace=config.grace, max_line=config.max_line,
                             env=config.env or None)
    answers: list[tuple[Any, ...]] = []
    with anyio.move_on_after(config.budget):
        try:
            async with Session(config.target, options) as session:
                await probe(session, config.protocol_version)
                for call in calls:
                    answers.append(envelopes(await session.run_case(call.case)))
        except (HarnessError, ServerStartError, UnusableServer) as error:
            return answers, f"the second server stopped: {error}"
    return answers, "" if len(answers) == len(calls) else "the budget ran out"
