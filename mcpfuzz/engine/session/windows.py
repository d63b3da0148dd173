"""Cases run in order, consecutive pipelinable ones sharing windows; what a window cannot attribute is run alone."""

from __future__ import annotations

from collections.abc import AsyncGenerator, Awaitable, Callable, Sequence
from dataclasses import dataclass

from mcpfuzz.engine.session.collector import case_ids
from mcpfuzz.engine.session.session import Session
from mcpfuzz.jsonrpc.exchange import Exchange
from mcpfuzz.jsonrpc.frame import Case

# Cases in flight at once: enough to keep the pipe busy; a window sent back costs at most this many re-runs.
WINDOW = 32
# Windows sent back to be run alone before the rest of the cases go out one by one (a server that logs or
# answers with id null all the time would pay a restart and a re-run per window).
MAX_UNSETTLED = 2


@dataclass
class Unsettled:
    """Windows sent back so far, kept by a caller whose cases come in many short runs (past MAX_UNSETTLED, none)."""

    count: int = 0


async def run_in_order(session: Session, cases: Sequence[Case], *, window: int = WINDOW,
                       run_alone: Callable[[Session, Case], Awaitable[Exchange]] = Session.run_case,
                       unsettled: Unsettled | None = None) -> AsyncGenerator[Exchange, None]:
    """Each case's exchange, in the order of `cases`, each recorded as an isolated run would record it.

    Consecutive pipelinable cases with fresh ids go out as one window (`Session.run_window`); a window
    that cannot attribute everything it saw is run again case by case, and only those runs are yielded.
    `run_alone` runs one case by itself (the runner's also asks a concurrent case's requests alone);
    `unsettled` counts the windows sent back across calls (a fresh count per call when not given).
    """
    tally = unsettled if unsettled is not None else Unsettled()
    index = 0
    while index < len(cases):
        group = _window_at(session, cases, index, window) if session.pipelines and tally.count < MAX_UNSETTLED else ()
        if len(group) < 2:
            yield await run_alone(session, cases[index])
            index += 1
            continue
        exchanges = await session.run_window(group)
        if exchanges is None:
            tally.count += 1
            exchanges = []
            for case in group:
                yield await run_alone(session, case)
        for exchange in exchanges:
            yield exchange
        index += len(group)


def _window_at(session: Session, cases: Sequence[Case], start: int, size: int) -> tuple[Case, ...]:
    """The cases from `start` on that may share a window, up to `size`, whose ids are fresh and distinct."""
    taken: list[Case] = []
    ids: set[str] = set()
    for case in cases[start:start + size]:
        if not session.may_share(case):
            break
        # Loosely distinct: a server that reads "1" as 1 must not answer one case with another's id.
        keys = {str(value) for _, value in case_ids(case.expect)}
        token = case.progress_token
        if token is not None:
            keys.add(f"progress token {token}")
        if ids & keys or not session.fresh_ids(case):
            break
        ids |= keys
        taken.append(case)
    return tuple(taken)
