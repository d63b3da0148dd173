"""Cases of the tasks extension: a task-augmented tools/call, then tasks/get, tasks/cancel and the result path with
valid, unknown and malformed task ids, and the methods 2026-07-28 removed. No I/O.

2026-07-28: the client declares `io.modelcontextprotocol/tasks` in each request's client capabilities, and the
server decides whether to answer with a task. 2025-11-25: the client asks for a task with `params.task`.
"""

from __future__ import annotations

from typing import Any

from mcpfuzz.strategies.arguments.tool_calls import TOOL_FAMILY
from mcpfuzz.strategies.messages import FrameBuilder

from mcpfuzz.jsonrpc.expectation import INVALID_PARAMS, METHOD_NOT_FOUND, Expectation, SeverityName
from mcpfuzz.jsonrpc.frame import Case
from mcpfuzz.jsonrpc.oracle_ids import OracleId
from mcpfuzz.jsonrpc.parts.task import TaskCheck
from mcpfuzz.jsonrpc.task_check import MISSING_CAPABILITY, TASKS_EXTENSION, TaskIdKind, TaskStep
from mcpfuzz.jsonrpc.versions import META_CAPABILITIES_KEY, Era

TASKS_FAMILY = "tasks"
UNKNOWN_TASK_ID = "mcpfuzz-no-such-task-0000"
HUGE_LENGTH = 4096  # past any real id, and under the 8 KB header limit of common HTTP stacks (Mcp-Name carries it)
TASK_TTL_MS = 60000
STALE_KEY = "mcpfuzz-never-asked"  # an inputResponses key no task issues (the server should ignore it)
STALE_RESPONSES = {STALE_KEY: {"action": "decline"}}


def malformed_id(kind: TaskIdKind, known: str | None) -> Any:
    """The id a case of `kind` sends; a wrong-typed id is the known id read as a number when it is one."""
    if kind is TaskIdKind.VALID:
        return known
    if kind is TaskIdKind.UNKNOWN:
        return UNKNOWN_TASK_ID
    if kind is TaskIdKind.EMPTY:
        return ""
    if kind is TaskIdKind.HUGE:
        return "t" * HUGE_LENGTH
    if kind is TaskIdKind.WRONG_TYPE:
        digits = "".join(c for c in known or "" if c.isdigit())
        return int(digits[:15]) if digits else 7  # a server coercing numbers to strings may find task "1"
    return None


def _params(builder: FrameBuilder, params: dict, declared: bool) -> dict:
    """Params with the era's `_meta`; in 2026-07-28 declaring the tasks extension (or not)."""
    if builder.era is Era.MODERN:
        extensions: dict[str, Any] = {"extensions": {TASKS_EXTENSION: {}}} if declared else {}
        params = {**params, "_meta": {**(builder.meta or {}), META_CAPABILITIES_KEY: extensions}}
    return params


def call_case(builder: FrameBuilder, tool: str, arguments: dict, *, declared: bool = True) -> Case:
    """A tools/call of `tool` asking for a task (2025-11-25: `params.task`; 2026-07-28: the extension declared), or,
    with `declared` False in 2026-07-28, the same call from a client that does not declare the extension."""
    params: dict[str, Any] = {"name": tool, "arguments": arguments}
    if builder.era is Era.LEGACY:
        params["task"] = {"ttl": TASK_TTL_MS}
    rid = builder.fresh_id()
    step = TaskStep.CREATE if declared else TaskStep.CALL_UNDECLARED
    expect = Expectation(judge=OracleId.TASK_IDS, id=rid, result_ok=True, error_ok=True, well_formed=True,
                         parts=(TaskCheck(step),))
    what = "task-augmented call" if declared else "call without the tasks extension declared"
    return Case(tool, TOOL_FAMILY, f"{tool}: {what}", builder.frame("tools/call", _params(builder, params, declared),
                                                                   rid), expect, patient=True, slow_ok=True)


def task_case(builder: FrameBuilder, method: str, check: TaskCheck, *, history: tuple[bytes, ...] = (),
              declared: bool = True, responses: dict | None = None, patient: bool = False) -> Case:
    """`method` (tasks/get, tasks/cancel, tasks/update, tasks/result, tasks/list) naming the task id `check` says;
    a tasks/update carries `responses` as its inputResponses (none: an empty map). `patient`: waited for as a call
    is (a tasks/result that blocks until its task ends)."""
    rid = builder.fresh_id()
    params: dict[str, Any] = {} if check.kind is TaskIdKind.MISSING or method == "tasks/list" \
        else {"taskId": check.task_id}
    if method == "tasks/update":
        params["inputResponses"] = responses or {}
    codes, wrong, result_ok = _due(builder.era, method, check)
    expect = Expectation(judge=OracleId.TASK_IDS, id=rid, codes=codes, result_ok=result_ok, error_ok=True,
                         well_formed=check.kind.well_formed, wrong_answer=wrong, parts=(check,))
    title = f"{method}: {check.kind.value} task id" + ("" if declared else ", extension not declared")
    if check.cancel_acked:
        title += ", after tasks/cancel"
    if check.stale_keys:
        title += ", answering keys never asked"
    # One label per method (`tasks/get`), so one problem seen with several ids is one finding.
    return Case(method.removeprefix("tasks/"), TASKS_FAMILY, title,
                builder.frame(method, _params(builder, params, declared), rid), expect, history=history,
                patient=patient, slow_ok=patient)


def _due(era: Era, method: str, check: TaskCheck) -> tuple[frozenset[int], SeverityName, bool]:
    """The error codes due (none: any answer), how bad another answer is, and whether a result is right."""
    modern = era is Era.MODERN
    if check.step is TaskStep.REMOVED:
        # SEP-2663: tasks/result is removed and MUST get -32601; tasks/list was never part of the extension.
        return frozenset({METHOD_NOT_FOUND}), "medium" if method == "tasks/result" else "low", False
    if check.step in (TaskStep.GET_UNDECLARED, TaskStep.UPDATE_UNDECLARED):
        return frozenset({MISSING_CAPABILITY}), "medium", False  # the extension's Error Handling: MUST -32021
    if check.kind is TaskIdKind.VALID:
        if check.step is TaskStep.CANCEL and check.seen_cancelled and not modern:
            # 2025-11-25: cancelling a task in a terminal status MUST be rejected with -32602.
            return frozenset({INVALID_PARAMS}), "medium", False
        return frozenset(), "medium", True  # a task may expire (ttl), so an error is allowed too
    # Invalid or nonexistent taskId: -32602, a MUST for tasks/get (and, in 2025-11-25, tasks/result and
    # tasks/cancel); the extension says SHOULD for tasks/update and tasks/cancel.
    should_only = modern and method != "tasks/get"
    return frozenset({INVALID_PARAMS}), "low" if should_only else "medium", False
