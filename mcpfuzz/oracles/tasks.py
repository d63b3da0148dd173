"""The tasks extension: task ids answered for what they are, cancelled tasks kept cancelled, removed methods gone,
tasks waiting for input saying what they wait for, and tasks/update acknowledged.

Sources: the `io.modelcontextprotocol/tasks` extension for 2026-07-28 (SEP-2663), and the experimental tasks of
2025-11-25 (basic/utilities/tasks). Only MUSTs are judged above low.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from mcpfuzz.jsonrpc.exchange import Exchange
from mcpfuzz.jsonrpc.oracle_ids import OracleId
from mcpfuzz.jsonrpc.parts.task import TaskCheck
from mcpfuzz.jsonrpc.task_check import TASK_STATUSES, TaskIdKind, TaskStep
from mcpfuzz.jsonrpc.versions import Era
from mcpfuzz.oracles.answers import case_answers, judge_answers
from mcpfuzz.oracles.base import Failure, Severity, failure_class, register

TaskIdsFailure = failure_class(OracleId.TASK_IDS, "Task id or task lifecycle mishandled")
RELATED_TASK = "io.modelcontextprotocol/related-task"


def _results(exchange: Exchange) -> list[Any]:
    """The results the case's own request got."""
    return [a.incoming.message.get("result") for a in case_answers(exchange) if a.incoming.is_result]


def _task_of(result: Any, era: Era) -> dict | None:
    """The task a result describes: 2026-07-28 inlines it, 2025-11-25's CreateTaskResult nests it under `task`."""
    if not isinstance(result, dict):
        return None
    nested = result.get("task")
    if era is Era.LEGACY and isinstance(nested, dict):
        return nested
    return result


@register(TaskIdsFailure, Severity.HIGH)
def task_ids(exchange: Exchange) -> Iterator[Failure]:
    """Task-augmented calls, tasks/get, tasks/cancel and the result path answered as the tasks spec says."""
    expect = exchange.case.expect
    check = expect.part(TaskCheck)
    if check is None or expect.judge != OracleId.TASK_IDS:
        return
    yield from judge_answers(exchange, TaskIdsFailure, None)
    if check.step is TaskStep.UPDATE and check.stale_keys and check.kind is TaskIdKind.VALID \
            and any(a.incoming.is_error for a in case_answers(exchange)):
        # The extension, Task Update Requests: a server SHOULD ignore inputResponses under a key that is not
        # outstanding (never issued, already answered, superseded), so the update is acknowledged.
        yield TaskIdsFailure(Severity.LOW, "tasks/update answering keys the task never asked was refused; the "
                             "extension says a server SHOULD ignore such responses", "stale-keys-refused")
    if check.step is TaskStep.RESULT and check.kind is TaskIdKind.VALID and exchange.era is Era.LEGACY:
        yield from _unrelated_requests(exchange, check.task_id)
    for result in _results(exchange):
        yield from _judge_result(check, result, exchange.era)


def _unrelated_requests(exchange: Exchange, task_id: Any) -> Iterator[Failure]:
    """2025-11-25 basic/utilities/tasks, Associating Task-Related Messages: every request related to a task MUST
    name it in `_meta` (`io.modelcontextprotocol/related-task`); the input a tasks/result asks for is such a request."""
    for incoming in exchange.server_requests:
        message = incoming.message
        if not isinstance(message, dict):
            continue
        params = message.get("params")
        meta = params.get("_meta") if isinstance(params, dict) else None
        related = meta.get(RELATED_TASK) if isinstance(meta, dict) else None
        if not (isinstance(related, dict) and related.get("taskId") == task_id):
            yield TaskIdsFailure(Severity.MEDIUM, f"while tasks/result waited for task {_show(task_id)}, the server "
                                 f"sent {_show(message.get('method'))} without naming the task in "
                                 f"`_meta[\"{RELATED_TASK}\"]` (2025-11-25: every request related to a task MUST)",
                                 "input-unrelated")
            return


def _judge_result(check: TaskCheck, result: Any, era: Era) -> Iterator[Failure]:
    task = _task_of(result, era)
    if check.step is TaskStep.CALL_UNDECLARED:
        if isinstance(result, dict) and result.get("resultType") == "task":
            yield TaskIdsFailure(Severity.HIGH, "a tools/call that did not declare the tasks extension was answered "
                                 "with a task (the extension: a server MUST NOT return CreateTaskResult to such a "
                                 "client)", "task-undeclared")
        return
    if check.step is TaskStep.CREATE:
        if not isinstance(result, dict) or not (result.get("resultType") == "task" if era is Era.MODERN
                                                else isinstance(result.get("task"), dict)):
            return  # a plain result: the server did not make a task (judged as a tool call elsewhere)
        if task is None or not isinstance(task.get("taskId"), str) or task.get("status") not in TASK_STATUSES:
            yield TaskIdsFailure(Severity.MEDIUM, "a task was created without a string taskId and a known status",
                                 "create-shape")
        return
    if check.step is TaskStep.UPDATE:
        if era is Era.MODERN and isinstance(result, dict) and result.get("resultType") != "complete":
            yield TaskIdsFailure(Severity.MEDIUM, f"tasks/update answered resultType "
                                 f"{_show(result.get('resultType'))}; the extension says it MUST be \"complete\"",
                                 "update-result-type")
        return
    if check.step is not TaskStep.GET or task is None:
        return
    if not check.kind.well_formed or check.kind is TaskIdKind.UNKNOWN:
        # judge_answers already said a result is wrong here; one naming a real task is worse: another caller's data.
        named = task.get("taskId")
        if isinstance(named, str) and named in check.known:
            yield TaskIdsFailure(Severity.HIGH, f"tasks/get of {check.kind.value} task id {_show(check.task_id)} was "
                                 f"answered with task {_show(named)}: another task's data", "other-task")
        return
    named = task.get("taskId")
    if named != check.task_id:
        yield TaskIdsFailure(Severity.HIGH, f"tasks/get of task {_show(check.task_id)} was answered with task "
                             f"{_show(named)}", "other-task")
        return
    status = task.get("status")
    if status not in TASK_STATUSES:
        yield TaskIdsFailure(Severity.MEDIUM, f"tasks/get answered status {_show(status)}, none of the task statuses",
                             "status")
        return
    if status == "input_required" and era is Era.MODERN and not _asks(task.get("inputRequests")):
        yield TaskIdsFailure(Severity.MEDIUM, "a task waiting for input (input_required) came back without "
                             "`inputRequests` naming what it waits for, each a request with its method (the "
                             "extension: tasks/get MUST include every outstanding request)", "input-no-requests")
    if status == "completed" and "result" not in task and era is Era.MODERN:
        yield TaskIdsFailure(Severity.MEDIUM, "a completed task came back without its `result` (the extension: "
                             "tasks/get MUST inline the final result)", "completed-no-result")
    if era is Era.MODERN and result.get("resultType") != "complete":
        yield TaskIdsFailure(Severity.MEDIUM, f"tasks/get answered resultType {_show(result.get('resultType'))}; "
                             "the extension says it MUST be \"complete\"", "get-result-type")
    if status == "cancelled":
        return
    if check.cancel_acked and era is Era.LEGACY:
        yield TaskIdsFailure(Severity.HIGH, f"a task whose tasks/cancel was acknowledged is {status!r}, not "
                             "cancelled (2025-11-25: the receiver MUST move it to cancelled before answering, and "
                             "it MUST stay cancelled even if its work completes)", "cancelled-not-kept")
    elif check.seen_cancelled:
        # 2026-07-28 makes cancellation eventually consistent, but a task seen cancelled is terminal (the status
        # diagram); the text has no MUST, so low.
        yield TaskIdsFailure(Severity.LOW, f"a task tasks/get showed cancelled is {status!r} later; cancelled is a "
                             "terminal status", "cancelled-left")


def _asks(requests: Any) -> bool:
    """Whether `inputRequests` is what an input_required task must carry: a non-empty map of key to a request
    object with its method (the shape of multi round-trip requests)."""
    return isinstance(requests, dict) and bool(requests) and all(
        isinstance(asked, dict) and isinstance(asked.get("method"), str) for asked in requests.values())


def _show(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."
