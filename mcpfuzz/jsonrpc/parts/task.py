"""A tasks-extension case (read by task-ids)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from mcpfuzz.jsonrpc.parts.part import CasePart, case_part
from mcpfuzz.jsonrpc.task_check import TaskIdKind, TaskStep


@case_part("task")
@dataclass(frozen=True)
class TaskCheck(CasePart):
    """A tasks case (read by task-ids).

    `task_id`: the id sent (None when `kind` is MISSING). `known`: the ids of the tasks the run created, so an
    answer naming another one is told apart. `cancel_acked`: a tasks/cancel of this task was answered with a result.
    `seen_cancelled`: a tasks/get already showed it `cancelled`, a terminal status. `stale_keys`: a tasks/update
    whose inputResponses answer keys the task never asked (the server should ignore them and acknowledge).
    """

    step: TaskStep
    kind: TaskIdKind = TaskIdKind.VALID
    task_id: Any = None
    known: tuple[str, ...] = ()
    cancel_acked: bool = False
    seen_cancelled: bool = False
    method: str = ""
    stale_keys: bool = False
