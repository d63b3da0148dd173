"""The stateful search: sequences of calls across targets that reuse what earlier results returned (ids above
all), some judged on the state the server shows around them."""

from __future__ import annotations

from collections.abc import Callable, Coroutine
from dataclasses import replace
from functools import partial
from typing import Any

import anyio.from_thread
from hypothesis import strategies as st

from mcpfuzz.engine.events import PhaseName
from mcpfuzz.engine.judge import FindingKey
from mcpfuzz.engine.searches.caller import Caller
from mcpfuzz.engine.searches.hypothesis_bridge import check_deadline, on_loop
from mcpfuzz.engine.searches.search import Verdict, search, to_raise
from mcpfuzz.engine.searches.state_checks import read_only, state_check
from mcpfuzz.engine.session.modes import patient_until
from mcpfuzz.engine.surface.targets import CallTarget
from mcpfuzz.jsonrpc.exchange import Exchange
from mcpfuzz.jsonrpc.frame import Case
from mcpfuzz.jsonrpc.oracle_ids import OracleId
from mcpfuzz.oracles.base import Failure
from mcpfuzz.strategies.arguments.call import POSITIVE, ArgumentCall
from mcpfuzz.strategies.arguments.harvest import harvest, linked_uris, substitute, takes_ids
from mcpfuzz.strategies.surfaces.resources import linked_read_case

MAX_SEQUENCE = 6
STATEFUL = "stateful"  # the name of the call-sequence search (its seeds, a soak's target list)


class StatefulSearch:
    """Sequences of calls drawn by Hypothesis, made through the shared caller."""

    def __init__(self, caller: Caller) -> None:
        self.caller = caller
        self._consumers: list[CallTarget] | None = None  # the targets that take ids, found before the sequences

    async def stateful(self, deadline: float, *, epoch: int = 0) -> None:
        """Sequences of calls across targets that reuse strings earlier results returned (ids above all)."""

        def body(data: Any, pursued: set[FindingKey]) -> Failure | None:
            return self._sequence(data, deadline, pursued)

        if self._consumers is None:
            self._consumers = await anyio.to_thread.run_sync(self._taking_ids)
        with patient_until(self.caller.session, deadline):
            await search(st.data(), body, options=self.caller.options, name=STATEFUL, deadline=deadline, epoch=epoch)

    def _taking_ids(self) -> list[CallTarget]:
        """The targets with a parameter an id harvested from an earlier result may fill."""
        return [target for target in self.caller.targets if takes_ids(target.schema)]

    def _sequence(self, data: Any, deadline: float, pursued: set[FindingKey]) -> Failure | None:
        """One sequence (runs in the Hypothesis thread; calls go through the event loop)."""
        caller = self.caller
        pool: list[Any] = []
        created: list[Any] = []  # what this sequence's calls of tools that are not read-only returned (its creates)
        links: list[str] = []  # URIs earlier results linked to: a sequence may read them (across surfaces)
        history: list[bytes] = []
        process = caller.session.process
        for step in range(data.draw(st.integers(2, MAX_SEQUENCE), label="steps")):
            check_deadline(deadline)
            if links and data.draw(st.integers(0, 2), label="follow a link") == 0:
                uri = data.draw(st.sampled_from(links), label="linked uri")
                case = linked_read_case(caller.builder, uri, history=tuple(history))
                went_on, failure = self._step(partial(self._run_linked, case), process, history, pursued)
                if went_on is None:
                    return failure
                continue
            # Once results have given ids back, favour the targets that take ids (3 times in 4).
            consumers = self._consumers or []
            feed = pool and consumers and data.draw(st.integers(0, 3), label="feed") > 0
            target = data.draw(st.sampled_from(consumers if feed else caller.targets), label="tool")
            given = caller.arguments.given(target) if target.label in caller.arguments.known_arguments else []
            # The user's arguments (--args) start a third of the steps of targets they were given for.
            if given and data.draw(st.integers(0, 2), label="given") == 0:
                arguments = data.draw(st.sampled_from(given), label="given arguments").arguments
            else:
                arguments = data.draw(target.schema.positive, label="arguments")
            arguments = substitute(target.schema, arguments, pool, data)
            if caller.wedging.known(target.label, arguments):
                continue
            call = ArgumentCall(POSITIVE, arguments, f"step {step + 1} of a sequence")
            state = state_check(caller.targets, target, arguments, created)
            if state is not None and caller.oracles is not None and state.judge.value not in caller.oracles:
                state = None
            if state is not None and state.judge is OracleId.IDEMPOTENT_RETRY:
                # The first call as any step's; the same call again (a client's retry) is judged on the state.
                first, failure = self._step(partial(caller.call, PhaseName.STATEFUL, target, call,
                                                    history=tuple(history)), process, history, pursued)
                if first is None:
                    return failure
                call = replace(call, description=f"{call.description}, sent again as a client retries")
            exchange, failure = self._step(partial(caller.call, PhaseName.STATEFUL, target, call,
                                                   history=tuple(history), state=state), process, history, pursued)
            if exchange is None:
                return failure
            pool = harvest(exchange, pool)
            if not read_only(target):
                created = harvest(exchange, created)
            links = linked_uris(exchange, links)
        return None

    def _step(self, run: Callable[[], Coroutine[Any, Any, tuple[Exchange, list[Verdict]]]], process: object,
              history: list[bytes], pursued: set[FindingKey]) -> tuple[Exchange | None, Failure | None]:
        """One step of a sequence run on the event loop: (its exchange, None) to go on, with its frame added to
        `history`; (None, the failure to raise); or (None, None) when the step crashed the server or it restarted,
        since the sequence's state is gone with its process."""
        exchange, judged = on_loop(run)
        failure = to_raise(judged, pursued)
        if failure is not None:
            return None, failure
        if self.caller.session.process != process or exchange.crash is not None:
            return None, None
        history.append(exchange.case.data)
        return exchange, None

    async def _run_linked(self, case: Case) -> tuple[Exchange, list[Verdict]]:
        """A read of a URI an earlier call linked to, judged like any call of the sequence."""
        exchange = await self.caller.run_case(case)
        self.caller.calls += 1
        return exchange, self.caller.judge(PhaseName.STATEFUL, exchange)
