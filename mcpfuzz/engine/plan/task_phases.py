"""The tasks extension, where a server declares it: tools called for a task, then tasks/get, tasks/cancel, tasks/update
and the result path with the task's own id, unknown and malformed ids, after a cancel, and the methods 2026-07-28
removed; a 2026-07-28 task waiting for input answered through tasks/update."""

from __future__ import annotations

import time
from dataclasses import dataclass, replace
from typing import Any, ClassVar

import anyio

from mcpfuzz.engine.config import CALL_PHASES
from mcpfuzz.engine.events import PhaseName, PhaseStarted
from mcpfuzz.engine.plan.context import RunContext
from mcpfuzz.engine.plan.phase_cases import PhaseCases, PhaseOver
from mcpfuzz.engine.session.session import Session
from mcpfuzz.engine.surface.probe import ProbeResult
from mcpfuzz.jsonrpc.client_check import AnswerMode
from mcpfuzz.jsonrpc.exchange import ID_CURRENT, Exchange
from mcpfuzz.jsonrpc.frame import Case
from mcpfuzz.jsonrpc.oracle_ids import OracleId
from mcpfuzz.jsonrpc.parts.task import TaskCheck
from mcpfuzz.jsonrpc.target_kind import TargetKind
from mcpfuzz.jsonrpc.task_check import TASKS_EXTENSION, TaskIdKind, TaskStep
from mcpfuzz.jsonrpc.versions import Era
from mcpfuzz.strategies.client_answers import input_responses
from mcpfuzz.strategies.messages import FrameBuilder
from mcpfuzz.strategies.task_cases import STALE_RESPONSES, call_case, malformed_id, task_case

TASKS_FIRST_ID = 2**38  # above the client phase's ids (2**37 on), below the random frames' (2**40 on)
MAX_TOOLS = 3  # tools called for a task until one gives one
SETTLE = 2.5  # seconds after a cancel before the task is looked at again (its work may have finished meanwhile)
BAD_KINDS = (TaskIdKind.UNKNOWN, TaskIdKind.EMPTY, TaskIdKind.HUGE, TaskIdKind.WRONG_TYPE, TaskIdKind.MISSING)
TASK_SUPPORT = ("optional", "required")  # 2025-11-25 tools' execution.taskSupport that allow a task


def declares_tasks(probe: ProbeResult) -> bool:
    """Whether the server declares tasks for tools/call: the 2026-07-28 extension, or 2025-11-25's
    `tasks.requests.tools.call`."""
    capabilities = probe.capabilities if isinstance(probe.capabilities, dict) else {}
    if probe.era is Era.MODERN:
        extensions = capabilities.get("extensions")
        return isinstance(extensions, dict) and TASKS_EXTENSION in extensions
    requests = _dig(capabilities, "tasks", "requests", "tools")
    return isinstance(requests, dict) and "call" in requests


def _dig(value: Any, *keys: str) -> Any:
    for key in keys:
        value = value.get(key) if isinstance(value, dict) else None
    return value


def _tasks_skip(context: RunContext) -> str | None:
    """Why the tasks extension cannot be tried on this run (None: it can)."""
    if OracleId.TASK_IDS not in context.config.oracles:
        return "task-ids is not selected"
    if not any(phase in context.config.phases for phase in CALL_PHASES):
        return "no call phase in --phases"
    if context.probe is None or not declares_tasks(context.probe):
        return "the server declares no tasks (io.modelcontextprotocol/tasks, or 2025-11-25 tasks.requests)"
    return None


def expects_tasks(context: RunContext) -> bool:
    """Whether the tasks phase will run (the call sequences keep its share of the time then)."""
    return _tasks_skip(context) is None


@dataclass(frozen=True)
class TasksPhase:
    """Task ids answered for what they are, cancelled tasks kept cancelled, removed methods answered -32601."""

    name: str = PhaseName.TASKS.value
    share: ClassVar[float] = 0.15  # of what the fuzz phase leaves, kept from call sequences when tasks are declared

    def kept_share(self, context: RunContext) -> float:
        return self.share if expects_tasks(context) else 0.0

    def skip_reason(self, context: RunContext) -> str | None:
        return _tasks_skip(context)

    async def run(self, context: RunContext, session: Session) -> None:
        probe = context.probe
        assert probe is not None
        runner = _Runner(context, session, FrameBuilder(probe.era, probe.version, next_id=TASKS_FIRST_ID))
        tools = _tools(context, probe)
        context.emit(PhaseStarted(PhaseName.TASKS, detail=f"{len(tools)} tools to call for a task"))
        try:
            await runner.all(tools)
        except PhaseOver:
            return


def _tools(context: RunContext, probe: ProbeResult) -> list[tuple[str, dict]]:
    """The selected tools a task may be asked of, each with its simplest valid arguments."""
    plan = context.targets
    if plan is None:
        return []
    chosen = []
    for target in plan.of_kind(TargetKind.TOOL):
        if probe.era is Era.LEGACY and _dig(target.declaration, "execution", "taskSupport") not in TASK_SUPPORT:
            continue  # 2025-11-25: a client MUST NOT ask a task of such a tool
        try:
            arguments = target.prepare().plain[0]
        except Exception:  # noqa: BLE001 - a schema that resists drawing was already said in the call phases
            continue
        chosen.append((target.name, arguments))
    return chosen[:MAX_TOOLS]



class _Runner(PhaseCases):
    """Runs and judges the phase's cases in order, each later one built from what the earlier ones got."""

    def __init__(self, context: RunContext, session: Session, builder: FrameBuilder) -> None:
        super().__init__(context, session, PhaseName.TASKS)
        self.builder = builder
        self.modern = builder.era is Era.MODERN


    async def all(self, tools: list[tuple[str, dict]]) -> None:
        """The task made and cancelled first (its work may end soon), then the bad ids and removed methods, which
        also give the cancel time to settle, then the task looked at once more."""
        task_id: str | None = None
        history: tuple[bytes, ...] = ()
        undeclared: list[Case] = []
        for tool, arguments in tools:
            create = call_case(self.builder, tool, arguments)
            task_id = _created_id(_answer(await self.run(create)), self.builder.era)
            if self.modern:
                undeclared.append(call_case(self.builder, tool, arguments, declared=False))
            if task_id is not None:
                history = (create.data,)
                break
        known = (task_id,) if task_id is not None else ()
        settle = await self.cancel(task_id, known, history) if task_id is not None else None
        for case in undeclared:
            await self.run(case)
        await self.bad_ids("tasks/get", TaskStep.GET, known, history)
        if not self.modern:
            await self.bad_ids("tasks/result", TaskStep.RESULT, known, history)
        for method in ("tasks/result", "tasks/list") if self.modern else ():
            check = TaskCheck(TaskStep.REMOVED, TaskIdKind.VALID if task_id else TaskIdKind.UNKNOWN,
                              task_id or malformed_id(TaskIdKind.UNKNOWN, None), known, method=method)
            await self.run(task_case(self.builder, method, check, history=history))
        await self.bad_ids("tasks/cancel", TaskStep.CANCEL, known, history, kinds=BAD_KINDS[:4])
        if self.modern:
            await self.bad_ids("tasks/update", TaskStep.UPDATE, known, history, kinds=BAD_KINDS[:4])
        if settle is not None:
            await self.after_settling(*settle)

    async def bad_ids(self, method: str, step: TaskStep, known: tuple[str, ...], history: tuple[bytes, ...], *,
                      kinds: tuple[TaskIdKind, ...] = BAD_KINDS) -> None:
        for kind in kinds:
            check = TaskCheck(step, kind, malformed_id(kind, known[0] if known else None), known, method=method)
            await self.run(task_case(self.builder, method, check, history=history))

    async def cancel(self, task_id: str, known: tuple[str, ...], history: tuple[bytes, ...]
                     ) -> tuple[TaskCheck, tuple[bytes, ...], float]:
        """The task looked at, cancelled and looked at again at once; what the look after settling needs."""
        get = TaskCheck(TaskStep.GET, TaskIdKind.VALID, task_id, known, method="tasks/get")
        looked = _answer(await self.run(task_case(self.builder, "tasks/get", get, history=history)))
        if _status(looked, self.builder.era) == "input_required":
            if self.modern:
                await self.answer_input(task_id, looked, known, history)
            else:
                # 2025-11-25 Input Required Status: the requestor SHOULD call tasks/result, whose requests to the
                # client the session answers (an accepting client), and which ends once the task does.
                result = TaskCheck(TaskStep.RESULT, TaskIdKind.VALID, task_id, known, method="tasks/result")
                await self.run(task_case(self.builder, "tasks/result", result, history=history, patient=True))
        cancel = task_case(self.builder, "tasks/cancel", replace(get, step=TaskStep.CANCEL, method="tasks/cancel"),
                           history=history)
        acked = isinstance(_answer(await self.run(cancel)), dict)
        cancelled_at = time.monotonic()
        history = (*history, cancel.data)
        after = replace(get, cancel_acked=acked)
        status = _status(_answer(await self.run(task_case(self.builder, "tasks/get", after, history=history))),
                         self.builder.era)
        if self.modern:
            undeclared = replace(get, step=TaskStep.GET_UNDECLARED)
            await self.run(task_case(self.builder, "tasks/get", undeclared, history=history, declared=False))
        return replace(after, seen_cancelled=status == "cancelled"), history, cancelled_at

    async def answer_input(self, task_id: str, looked: dict, known: tuple[str, ...], history: tuple[bytes, ...]
                           ) -> None:
        """A 2026-07-28 task waiting for input: tasks/update from a client that did not declare the extension, then
        answering keys the task never asked, then each outstanding request answered as an accepting client would
        (the extension, Task Update Requests), and the task looked at again."""
        responses = input_responses(looked.get("inputRequests"), AnswerMode.ACCEPT, ())
        update = TaskCheck(TaskStep.UPDATE, TaskIdKind.VALID, task_id, known, method="tasks/update")
        await self.run(task_case(self.builder, "tasks/update", replace(update, step=TaskStep.UPDATE_UNDECLARED),
                                 history=history, declared=False, responses=responses or STALE_RESPONSES))
        await self.run(task_case(self.builder, "tasks/update", replace(update, stale_keys=True), history=history,
                                 responses=STALE_RESPONSES))
        if responses:
            await self.run(task_case(self.builder, "tasks/update", update, history=history, responses=responses))
        await self.run(task_case(self.builder, "tasks/get", replace(update, step=TaskStep.GET, method="tasks/get"),
                                 history=history))

    async def after_settling(self, check: TaskCheck, history: tuple[bytes, ...], cancelled_at: float) -> None:
        """The task looked at SETTLE seconds after its cancel (its work may have ended meanwhile), and (2025-11-25)
        cancelled again, which a terminal status must refuse."""
        await anyio.sleep(max(0.0, min(cancelled_at + SETTLE, self.until) - time.monotonic()))
        await self.run(task_case(self.builder, "tasks/get", check, history=history))
        if check.seen_cancelled and check.cancel_acked and not self.modern:
            again = replace(check, step=TaskStep.CANCEL, method="tasks/cancel")
            await self.run(task_case(self.builder, "tasks/cancel", again, history=history))


def _answer(exchange: Exchange) -> Any:
    """The result the case's own request got (None: an error, or no answer)."""
    for arrival in exchange.responses():
        if arrival.id_tag == ID_CURRENT and arrival.incoming.is_result:
            return arrival.incoming.message.get("result")
    return None


def _task(result: Any, era: Era) -> dict | None:
    if not isinstance(result, dict):
        return None
    nested = result.get("task")
    return nested if era is Era.LEGACY and isinstance(nested, dict) else result


def _created_id(result: Any, era: Era) -> str | None:
    """The id of the task a tools/call created (None: it answered a plain result)."""
    if not isinstance(result, dict):
        return None
    if era is Era.MODERN and result.get("resultType") != "task" or era is Era.LEGACY and "task" not in result:
        return None
    task = _task(result, era)
    task_id = task.get("taskId") if task is not None else None
    return task_id if isinstance(task_id, str) and task_id else None


def _status(result: Any, era: Era) -> Any:
    task = _task(result, era)
    return task.get("status") if task is not None else None
