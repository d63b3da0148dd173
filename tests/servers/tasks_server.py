"""MCP server implementing tasks for its ``double`` tool: the 2026-07-28 extension (``io.modelcontextprotocol/tasks``)
and the 2025-11-25 experimental tasks, in whichever era a request speaks.

Usage: ``python tests/servers/tasks_server.py [--bug NAME]...``

``double`` (``{"n": integer}``) answers ``2n``. Asked for a task (2026-07-28: the extension declared in the request's
client capabilities; 2025-11-25: ``params.task``), it answers a task ``task-K`` that completes WORK seconds later,
worked out when the task is looked at (no thread). tasks/get, tasks/cancel (and, 2025-11-25, tasks/result) follow the
specs: an unknown or malformed id is -32602, a cancelled task stays cancelled, 2026-07-28's tasks/result is -32601.
With ``--bug asks-input`` (not a bug) a task first waits for input. 2026-07-28: ``input_required``, its one
elicitation in ``inputRequests``, until a tasks/update answers it (keys it never asked ignored); then it works WORK
seconds. 2025-11-25: ``input_required`` until the client calls tasks/result, which sends the elicitation to the client
(``_meta`` naming the task) and is answered with the task's result once the client's answer is in.
Without a bug it gives no finding.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from mcp_server import META_CAPS, RpcError, Server, main, text_item  # noqa: E402

EXTENSION = "io.modelcontextprotocol/tasks"
WORK = 2.0  # seconds a task works before it completes (mcpfuzz looks again 2.5 s after its cancel)
TOOLS: list[dict[str, Any]] = [
    {"name": "double", "description": "Double an integer, as a task when the client supports tasks.",
     "inputSchema": {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"],
                     "additionalProperties": False},
     "annotations": {"readOnlyHint": True}, "execution": {"taskSupport": "optional"}},
]
STAMP = "2026-01-01T00:00:00Z"


class TasksServer(Server):
    """Tasks of `double`, kept in memory by id."""

    TOOLS = TOOLS
    SERVER_INFO = {"name": "tasks", "version": "1.0"}
    CAPABILITIES = {"tools": {}, "extensions": {EXTENSION: {}},
                    "tasks": {"cancel": {}, "requests": {"tools": {"call": {}}}}}
    BUGS = {"cancelled-completes": "a cancelled task is reported completed, with its result, once its work is done",
            "cancel-ignored": "tasks/cancel is acknowledged but the task is not cancelled",
            "unknown-returns-other": "tasks/get of an unknown task id answers the newest task",
            "removed-method": "2026-07-28: tasks/result is still served",
            "malformed-crash": "a taskId that is not a string crashes the server",
            "ignores-capability": "2026-07-28: a task is created for a client that did not declare the extension",
            "legacy-only": "not a bug: serves only the legacy era (2025-11-25 tasks)",
            "asks-input": "not a bug: a task waits for input (input_required): 2026-07-28 until tasks/update answers, "
                          "2025-11-25 until tasks/result has sent the elicitation and the client has answered it",
            "input-unrelated": "with asks-input, 2025-11-25: the elicitation tasks/result sends does not name its task",
            "input-without-requests": "with asks-input: a task waiting for input is shown without inputRequests",
            "update-stale-key-crash": "tasks/update answering a key the task never asked crashes the server",
            "update-undeclared": "tasks/update is served to a client that did not declare the extension",
            "update-unknown-acked": "tasks/update of an unknown task id is acknowledged"}

    # Served over HTTP, each modern POST gets a server object of its own: one store keeps the tasks for all of them.
    STORE: dict[str, dict[str, Any]] | None = None

    def __init__(self, bugs: set[str]) -> None:
        super().__init__(bugs)
        self.tasks: dict[str, dict[str, Any]] = self.STORE if self.STORE is not None else {}
        self.pending: dict[str, tuple[Any, str]] = {}  # 2025-11-25: our elicitation's id -> (tasks/result id, task)

    def handle_modern(self, rid: Any, method: str, params: dict[str, Any], meta: dict[str, Any]) -> list[Any]:
        caps = meta.get(META_CAPS)
        extensions = caps.get("extensions") if isinstance(caps, dict) else None
        declared = isinstance(extensions, dict) and EXTENSION in extensions
        served = ("tasks/get", "tasks/cancel", "tasks/update")
        if "removed-method" in self.bugs:
            served += ("tasks/result",)
        if method in served:
            if method == "tasks/update" and "update-unknown-acked" in self.bugs \
                    and params.get("taskId") not in self.tasks:
                return self.result(rid, {"resultType": "complete"})
            undeclared_ok = method == "tasks/result" or method == "tasks/update" and "update-undeclared" in self.bugs
            if not declared and not undeclared_ok:
                return self.error(rid, -32021, "Missing required client capability",
                                  {"requiredCapabilities": {"extensions": {EXTENSION: {}}}})
            return self.result(rid, {**self.task_method(method, params, modern=True), "resultType": "complete"})
        if method == "tools/call" and (declared or "ignores-capability" in self.bugs) and self.callable(params):
            return self.result(rid, {**self.create(params, asks="asks-input" in self.bugs), "resultType": "task"})
        return super().handle_modern(rid, method, params, meta)

    def handle_message(self, msg: Any, *, first: bool) -> list[dict[str, Any]]:
        if isinstance(msg, dict) and "method" not in msg and msg.get("id") in self.pending:
            return self.resume(*self.pending.pop(msg["id"]))
        return super().handle_message(msg, first=first)

    def handle_legacy(self, rid: Any, method: str, params: dict[str, Any]) -> list[Any]:
        if self.legacy_version is not None and method == "tasks/result" and params.get("taskId") in self.tasks \
                and self.status(params["taskId"]) == "input_required":
            return self.ask(rid, params["taskId"])
        if self.legacy_version is not None and method in ("tasks/get", "tasks/cancel", "tasks/result"):
            return self.result(rid, self.task_method(method, params, modern=False))
        if self.legacy_version is not None and method == "tools/call" and isinstance(params.get("task"), dict) \
                and self.callable(params):
            return self.result(rid, {"task": self.create(params, asks="asks-input" in self.bugs)})
        return super().handle_legacy(rid, method, params)

    def call_tool(self, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        n = arguments.get("n")
        if set(arguments) != {"n"} or not isinstance(n, int) or isinstance(n, bool):
            return {"content": [text_item("n must be an integer")], "isError": True}
        return {"content": [text_item(str(2 * n))], "isError": False}

    def callable(self, params: dict[str, Any]) -> bool:
        arguments = params.get("arguments")
        return params.get("name") == "double" and isinstance(arguments, dict) and \
            isinstance(arguments.get("n"), int) and not isinstance(arguments.get("n"), bool)

    def create(self, params: dict[str, Any], *, asks: bool = False) -> dict[str, Any]:
        task_id = f"task-{len(self.tasks) + 1}"
        n = params["arguments"]["n"]
        asks_for = {f"confirm-{task_id}": {"method": "elicitation/create", "params": {
            "mode": "form", "message": f"Double {n}?", "requestedSchema": {
                "type": "object", "properties": {"sure": {"type": "boolean"}}, "required": ["sure"]}}}}
        self.tasks[task_id] = {"started": time.monotonic(), "cancelled": False,
                               "waiting": asks_for if asks else {},
                               "result": {"content": [text_item(str(2 * n))], "isError": False}}
        return self.view(task_id, modern=True, inline=False)

    def status(self, task_id: str) -> str:
        task = self.tasks[task_id]
        done = time.monotonic() - task["started"] >= WORK
        if task["cancelled"] and not ("cancelled-completes" in self.bugs and done):
            return "cancelled"
        if task["waiting"]:
            return "input_required"
        return "completed" if done else "working"

    def view(self, task_id: str, *, modern: bool, inline: bool = True) -> dict[str, Any]:
        status = self.status(task_id)
        view: dict[str, Any] = {"taskId": task_id, "status": status, "createdAt": STAMP, "lastUpdatedAt": STAMP}
        view.update({"ttlMs": 60000, "pollIntervalMs": 100} if modern else {"ttl": 60000, "pollInterval": 100})
        if inline and modern and status == "completed":
            view["result"] = self.tasks[task_id]["result"]
        if inline and modern and status == "input_required" and "input-without-requests" not in self.bugs:
            view["inputRequests"] = self.tasks[task_id]["waiting"]
        return view

    def ask(self, rid: Any, task_id: str) -> list[Any]:
        """2025-11-25 Input Required Status: tasks/result sends the task's requests to the client, each naming the
        task in its `_meta`, and is answered once the client's answers are in (see `resume`)."""
        key, asked = next(iter(self.tasks[task_id]["waiting"].items()))
        params = dict(asked["params"])
        del params["mode"]  # 2025-11-25 form elicitation: message and requestedSchema
        if "input-unrelated" not in self.bugs:
            params["_meta"] = {"io.modelcontextprotocol/related-task": {"taskId": task_id}}
        self.pending[key] = (rid, task_id)
        return [{"jsonrpc": "2.0", "id": key, "method": asked["method"], "params": params}]

    def resume(self, rid: Any, task_id: str) -> list[Any]:
        """The client answered: the task no longer waits, its work done at once; tasks/result gets its result."""
        task = self.tasks[task_id]
        task["waiting"], task["started"] = {}, time.monotonic() - WORK
        related = {"io.modelcontextprotocol/related-task": {"taskId": task_id}}
        return self.result(rid, {**task["result"], "_meta": related})

    def update(self, task: dict[str, Any], responses: Any) -> None:
        """The extension's Task Update Requests: each answered key no longer waited for, a key not outstanding ignored
        (a SHOULD); once nothing is waited for, the work starts."""
        if not isinstance(responses, dict) or not task["waiting"]:
            return
        for key in responses:
            if key in task["waiting"]:
                del task["waiting"][key]
            elif "update-stale-key-crash" in self.bugs:
                raise KeyError(key)  # the bug: every key looked up as if it had been asked
        if not task["waiting"]:
            task["started"] = time.monotonic()

    def find(self, params: dict[str, Any]) -> str:
        task_id = params.get("taskId")
        if "malformed-crash" in self.bugs:
            task_id.strip()  # the bug: a number has no strip
        if task_id in self.tasks:
            return task_id
        if "unknown-returns-other" in self.bugs and self.tasks:
            return list(self.tasks)[-1]
        raise RpcError(-32602, "Failed to retrieve task: Task not found")

    def task_method(self, method: str, params: dict[str, Any], *, modern: bool) -> dict[str, Any]:
        task_id = self.find(params)
        if method == "tasks/get":
            return self.view(task_id, modern=modern)
        if method == "tasks/cancel":
            if self.status(task_id) in ("completed", "cancelled", "failed"):
                raise RpcError(-32602, "Task is already in a terminal status")
            self.tasks[task_id]["cancelled"] = "cancel-ignored" not in self.bugs
            return {} if modern else self.view(task_id, modern=False)
        if method == "tasks/update":
            self.update(self.tasks[task_id], params.get("inputResponses"))
            return {}
        # tasks/result (2025-11-25, and 2026-07-28 under removed-method): blocks until the task is terminal.
        while self.status(task_id) == "working":
            time.sleep(0.05)
        if self.status(task_id) == "cancelled":
            raise RpcError(-32602, "Task was cancelled")
        related = {"io.modelcontextprotocol/related-task": {"taskId": task_id}}
        return {**self.tasks[task_id]["result"], "_meta": related}


if __name__ == "__main__":
    sys.exit(main(server_class=TasksServer))
