"""Random frames with Hypothesis (part of the fuzz phase): one search per frame family, a few frames per example,
failures shrunk live to one frame."""

from __future__ import annotations

import contextlib
import enum
import json
import time
from contextlib import aclosing
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol, TypeVar, cast

from hypothesis import reject
from hypothesis import strategies as st
from hypothesis.errors import HypothesisException

from mcpfuzz.engine.events import PhaseName
from mcpfuzz.engine.judge import FindingKey
from mcpfuzz.engine.searches.hypothesis_bridge import OutOfTime, on_loop
from mcpfuzz.engine.searches.search import (
    Judge,
    PhaseStopped,
    SearchOptions,
    Verdict,
    database_key,
    search,
    slice_end,
    to_raise,
)
from mcpfuzz.engine.session.session import HarnessError, Session
from mcpfuzz.engine.session.windows import Unsettled, run_in_order
from mcpfuzz.engine.surface.targets import CallTarget
from mcpfuzz.jsonrpc.encode import dumps
from mcpfuzz.jsonrpc.exchange import Exchange
from mcpfuzz.jsonrpc.frame import Case
from mcpfuzz.jsonrpc.ids import ABSENT, Absent, id_text
from mcpfuzz.jsonrpc.json_value import Json
from mcpfuzz.jsonrpc.target_kind import TargetKind
from mcpfuzz.jsonrpc.versions import Era
from mcpfuzz.oracles.base import Failure
from mcpfuzz.strategies.frames.context import FrameContext
from mcpfuzz.strategies.frames.draft import FrameDraft
from mcpfuzz.strategies.frames.mutations import FAMILIES, frame_drafts
from mcpfuzz.transport.errors import ServerStartError

# Fresh ids of frames: far above the harness's (10000+) and the tool calls' (2**32+), below 2**53.
FRAME_FIRST_ID = 2**40
USED_LIMIT = 20_000  # explicit ids remembered per process; past it the next case gets a fresh process
# Frames per example, by family: a batch pays Hypothesis' per-example cost once, and its frames with fresh ids
# may share pipelined windows; a failure still shrinks to one frame (the shrinker deletes the frames before it).
# `id` keeps one: its point is an id written into the frame, so a list would mostly repeat ids on one process.
BATCH = {"id": 1, "envelope": 8, "bytes": 8, "batch": 8, "nesting": 8}
# After each frame of a batched family: 0 ends the example (what the shrinker aims for), anything else draws one more.
MORE = st.integers(0, 7)


class Skipped(enum.Enum):
    """An example none of whose frames went out (each would have repeated an id on this process)."""

    SKIPPED = "skipped"


SKIPPED = Skipped.SKIPPED
T = TypeVar("T")


class Draws(Protocol):
    """What an example draws its frames from: Hypothesis' `st.data()`, or one frame already drawn."""

    def draw(self, strategy: st.SearchStrategy[T]) -> T:
        """The next value."""
        ...


@dataclass(frozen=True)
class Drawn:
    """A family of one frame per example: the frame Hypothesis drew, given back on the one draw asked of it."""

    draft: FrameDraft

    def draw(self, strategy: st.SearchStrategy[T]) -> T:
        """The drawn frame (an example of one frame asks for nothing else)."""
        return cast(T, self.draft)


def frame_context(session: Session, target: CallTarget | None, tools_listed: bool = True) -> FrameContext:
    """The era of the session, and the tool (with its simplest valid arguments) that tools/call frames call."""
    era = session.era or Era.LEGACY
    if target is None or not target.plain:
        return FrameContext(era, session.version, tools_listed=tools_listed)
    return FrameContext(era, session.version, target.declaration, target.plain[0], target.schema.is_valid({}),
                        frozenset({target.name}), tools_listed)


def simplest_tool(targets: list[CallTarget]) -> CallTarget | None:
    """The tool whose simplest valid call is shortest (the plainest tools/call to mutate)."""
    usable = [t for t in targets if t.kind is TargetKind.TOOL and t.plain]
    return min(usable, key=lambda t: len(dumps(t.plain[0])) + len(t.name), default=None)


def dispatchable(data: bytes) -> bool:
    """Whether a server could take these bytes for a request and answer it later: a JSON-RPC 2.0 request object
    with a method name and an id (or a batch holding one)."""
    try:
        message = json.loads(data)
    except ValueError:
        return False
    messages = message if isinstance(message, list) else [message]
    return any(isinstance(m, dict) and m.get("jsonrpc") == "2.0" and isinstance(m.get("method"), str)
               and isinstance(m.get("id"), str | int) and not isinstance(m.get("id"), bool) for m in messages)


def reuse_keys(value: Json | Absent) -> set[str]:
    """An id in every form a lax server may answer it under: "007", "7" and 7 count as the same id.

    An answer without an id names none (nothing to remember), and an id of any size or depth a server sent
    has keys (id_text never raises)."""
    if value is ABSENT:
        return set()
    keys = {"json:" + id_text(value)}
    number: int | float | None = value if isinstance(value, int | float) and not isinstance(value, bool) else None
    if isinstance(value, str):
        try:
            number = int(value)
        except ValueError:
            with contextlib.suppress(ValueError):
                number = float(value)
    if number is not None:
        keys.add("number:" + id_text(number))
    return keys


class FrameFuzz:
    """Searches each frame family in turn; every example is one case on the session, judged by the run."""

    def __init__(self, session: Session, judge: Judge, options: SearchOptions, tool: CallTarget | None = None,
                 *, tools_listed: bool = True) -> None:
        self.session = session
        self.judge = judge
        self.options = options
        # tools/list is a valid request only where the server advertises tools (the probe's rule too).
        self.context = frame_context(session, tool, tools_listed)
        self.examples = 0
        self._next_id = FRAME_FIRST_ID
        self._origin = -1  # the process the search starts on (set by fuzz): other phases sent ids on it
        self._tracked = -1  # the process `_used` describes
        self._used: set[str] = set()
        self._stopped: str | None = None
        self._internal: str | None = None
        self._unsettled: dict[str, Unsettled] = {}  # per family: windows sent back (past a few, frames run alone)

    async def fuzz(self, deadline: float) -> None:
        """Each family gets a fair share of the time left; a family done early leaves its time to the next."""
        self.mark_origin()
        for index, family in enumerate(FAMILIES):
            now = time.monotonic()
            if now >= deadline:
                return
            await self.fuzz_family(family, slice_end(self.options, deadline, len(FAMILIES) - index))

    async def fuzz_family(self, family: str, deadline: float, *, epoch: int = 0) -> None:
        """One family's search until the deadline (`epoch`: a soak's slice number, so slices differ)."""

        drafts = frame_drafts(self.context, family)
        single = BATCH.get(family, 1) == 1  # then Hypothesis draws the one frame itself, without st.data()

        def body(value: st.DataObject | FrameDraft, pursued: set[FindingKey]) -> Failure | None:
            drawn: list[FrameDraft] = []
            data = Drawn(value) if isinstance(value, FrameDraft) else value
            try:
                outcome = self._example(data, family, drafts, drawn, pursued, deadline)
            except HypothesisException:
                # Hypothesis' own (a replay that drew differently, as a server answering at another pace makes
                # an example stop drawing elsewhere): Hypothesis deals with it, it is no bug of ours.
                raise
            except Exception as error:  # a bug of ours: Hypothesis must not shrink it as the server's
                frames = " | ".join(draft.title() for draft in drawn)
                note = self.options.on_internal_error
                if note is not None:
                    note(error, f"frames/{family}: {frames}")  # this example ends; the search goes on
                    return None
                self._internal = f"frames/{family}: {type(error).__name__}: {error} (frames: {frames})"
                raise OutOfTime from None
            if self._stopped is not None:
                raise OutOfTime  # ends the run without shrinking; after_round reports it
            if outcome is SKIPPED:
                reject()  # every frame would repeat an id on this process; another draw will do
            return outcome

        strategy: st.SearchStrategy[Any] = drafts if single else st.data()
        await search(strategy, body, options=self.options, name=f"frames/{family}", deadline=deadline, epoch=epoch,
                     database=self._database(family), after_round=self._after_round)

    def _example(self, data: Draws, family: str, drafts: st.SearchStrategy[FrameDraft],
                 drawn: list[FrameDraft], pursued: set[FindingKey], deadline: float) -> Failure | Skipped | None:
        """Up to BATCH[family] frames, drawn one by one (in this thread) and sent in order, each judged alone.

        Frames that may share a window wait for the next one that must run alone (or the end), then go out
        together in one hop to the event loop. Drawing stops at the first failure: nothing after it is ever
        drawn, so the shrinker works only on frames that were sent, and deleting those before it leaves one.
        """
        size = BATCH.get(family, 1)
        pending: list[tuple[Case, tuple[Any, ...]]] = []
        sent = False
        while True:
            draft = data.draw(drafts)
            drawn.append(draft)
            case = draft.case(self.context, self._fresh_id)  # fresh ids handed out as each frame is made
            pending.append((case, draft.explicit_ids))
            last = len(drawn) >= size
            if last or draft.explicit_ids or not case.pipelinable:
                outcome = on_loop(self._send_all, family, pending, pursued, deadline)
                pending = []
                if outcome is not SKIPPED:
                    sent = True
                    if outcome is not None or self._stopped is not None or time.monotonic() >= deadline:
                        return outcome
            if last or data.draw(MORE) == 0:
                break
        if pending:
            outcome = on_loop(self._send_all, family, pending, pursued, deadline)
            if outcome is not SKIPPED:
                return outcome
        return None if sent else SKIPPED

    def _after_round(self) -> None:
        """A bug of ours or a lost server ends the search with its own error."""
        if self._internal is not None:
            raise RuntimeError(f"mcpfuzz bug in the random frames, please report it: {self._internal}")
        if self._stopped is not None:
            raise PhaseStopped(self._stopped)

    async def _send_all(self, family: str, cases: list[tuple[Case, tuple[Any, ...]]], pursued: set[FindingKey],
                        deadline: float) -> Failure | None | Skipped:
        """An example's frames in order, judged as if each ran alone; the first new failure ends the example.

        Frames with fresh ids only go through `run_in_order` (consecutive pipelinable ones share a window);
        a frame with an id written into it runs alone, after the check that it does not repeat an id here.
        """
        sent = 0
        index = 0
        while index < len(cases) and self._stopped is None:
            if sent and time.monotonic() >= deadline:
                return None
            if cases[index][1]:
                case, explicit = cases[index]
                index += 1
                judged = await self._send(case, explicit, bool(pursued))
                if judged is None:
                    continue  # it would repeat an id on this process: left out, as a lone frame is rejected
                sent += 1
                failure = to_raise(judged, pursued)
                if failure is not None:
                    return failure
                continue
            end = index
            while end < len(cases) and not cases[end][1]:
                end += 1
            failure, count = await self._run_fresh(family, [case for case, _ in cases[index:end]], pursued, deadline)
            sent += count
            if failure is not None:
                return failure
            index = end
        return SKIPPED if not sent and self._stopped is None else None

    async def _run_fresh(self, family: str, cases: list[Case], pursued: set[FindingKey],
                         deadline: float) -> tuple[Failure | None, int]:
        """Frames with fresh ids only, in order (windows where they may share one): the failure, and how many ran."""
        count = 0
        unsettled = self._unsettled.setdefault(family, Unsettled())
        try:
            async with aclosing(run_in_order(self.session, cases, unsettled=unsettled)) as exchanges:
                async for exchange in exchanges:
                    count += 1
                    self.examples += 1
                    failure = to_raise(self.judge(PhaseName.FUZZ, exchange), pursued)
                    if failure is not None or time.monotonic() >= deadline:
                        return failure, count
        except (HarnessError, ServerStartError) as error:
            self._stopped = str(error)
        return None, count

    async def _send(self, case: Case, explicit: tuple[Any, ...], shrinking: bool) -> list[Verdict] | None:
        """Run one case, judged; None when it would repeat an id on this process while still generating."""
        keys = {key for value in explicit for key in reuse_keys(value)}
        reuse = self._reuse(keys)
        if reuse == "repeat" and not shrinking:
            return None
        if reuse:
            # Earlier phases may have sent any id on the process we found; while shrinking, the same
            # ids come back on purpose. Either way a fresh process (handshake redone) takes the case.
            self.session.ready = False
        try:
            exchange = await self.session.run_case(case)
        except (HarnessError, ServerStartError) as error:
            self._stopped = str(error)
            return []
        self._note_ids(keys, exchange)
        self.examples += 1
        return self.judge(PhaseName.FUZZ, exchange)

    def _reuse(self, keys: set[str]) -> str:
        """MCP ids are unique per session: a repeated one may rightly be refused, and its answers count twice."""
        if not keys or not (self.session.alive and self.session.ready):
            return ""  # nothing to repeat, or a fresh process comes anyway
        if self.session.process == self._origin:
            return "origin"
        if self.session.process == self._tracked and not keys.isdisjoint(self._used):
            return "repeat"
        return ""

    def _note_ids(self, keys: set[str], exchange: Exchange) -> None:
        """Remember the ids this process has seen; one it dropped unanswered (the barrier proves it) may come
        again, which spares a restart per shrink step on servers that ignore invalid frames.

        Only a frame no server can dispatch counts as dropped: a well-formed request unanswered at the barrier
        may still be running (an async tool answers after a later ping), and its late answer would be counted
        as a second answer of the same id sent again (a `single-response` finding no fresh server repeats).
        """
        if self.session.process != self._tracked:
            self._tracked, self._used = self.session.process, set()
        answered = any(keys & reuse_keys(arrival.incoming.id) for arrival in exchange.responses())
        if answered or not exchange.barrier_answered or dispatchable(exchange.case.data):
            self._used |= keys
        if len(self._used) > USED_LIMIT:
            self.session.recycle()  # a soak keeps one process for hours: the set must not grow without end

    def mark_origin(self) -> None:
        """Other phases may have sent any id on the current process: a frame with an explicit id needs a fresh one."""
        self._origin = self.session.process

    def _fresh_id(self) -> int:
        self._next_id += 1
        return self._next_id

    def _database(self, family: str) -> Path | None:
        """Server + "frames" + family + protocol version: the key of the family's example database."""
        root = self.options.database_root
        if root is None:
            return None
        return root / database_key(self.options.server_label, "frames", family, self.context.version)
