"""What a tasks-extension case checks: which step of a task's life it is, and which task id it names."""

from __future__ import annotations

from enum import Enum

TASKS_EXTENSION = "io.modelcontextprotocol/tasks"
TASK_STATUSES = frozenset({"working", "input_required", "completed", "cancelled", "failed"})
MISSING_CAPABILITY = -32021  # 2026-07-28: Missing Required Client Capability


class TaskStep(str, Enum):
    """The request a tasks case sends."""

    CREATE = "create"  # a task-augmented tools/call
    CALL_UNDECLARED = "call-undeclared"  # 2026-07-28: the same call without the extension declared
    GET = "get"  # tasks/get
    GET_UNDECLARED = "get-undeclared"  # 2026-07-28: tasks/get without the extension declared
    UPDATE = "update"  # 2026-07-28: tasks/update, answering a task's inputRequests with inputResponses
    UPDATE_UNDECLARED = "update-undeclared"  # 2026-07-28: tasks/update without the extension declared
    CANCEL = "cancel"  # tasks/cancel
    RESULT = "result"  # 2025-11-25: tasks/result
    REMOVED = "removed"  # 2026-07-28: a method the extension removed (tasks/result) or never had (tasks/list)


class TaskIdKind(str, Enum):
    """The task id a request names."""

    VALID = "valid"  # a task this run created
    UNKNOWN = "unknown"  # a well-formed id no task has
    EMPTY = "empty"
    HUGE = "huge"  # a 4 KB string
    WRONG_TYPE = "wrong-type"  # a number, not a string
    MISSING = "missing"  # no taskId at all

    @property
    def well_formed(self) -> bool:
        """Whether a conforming client could send this id (an id it kept after the task expired, say)."""
        return self in (TaskIdKind.VALID, TaskIdKind.UNKNOWN)
