"""Requests in flight at once over HTTP, for http_server.py's concurrency and cancellation modes.

Threads of one server process meet here: tool calls wait for a partner call in flight (and may swap results
with it), a deferred list request waits for its cancel, and a cancelled request ignored waits until a later
request has been answered. Every wait is bounded.
"""

from __future__ import annotations

import threading
import time
from typing import Any

PARTNER_SECONDS = 3.0  # how long a tool call waits for another one in flight (an alone call pays it once)
DEFER_SECONDS = 10.0  # how long a deferred list request waits for its cancel before it is answered
GATHER_SECONDS = 10.0  # how long a POST waits for the others of its group (--gather)
PAIRED_TOOLS = ("count_notes", "find_notes")
# How long after the next answer a cancelled request is answered anyway: longer than a loaded machine may stall
# the client between reading two answers, so the late one is read clearly after the other.
AFTER_SECONDS = 2.5
LIST_METHODS = ("tools/list", "resources/list", "prompts/list")


class InFlight:
    """The shared state of the requests a server is handling."""

    def __init__(self) -> None:
        """Nothing in flight."""
        self.changed = threading.Condition()
        self.waiting: list[dict[str, Any]] = []  # tool calls waiting for a partner: {"reply", "partner"}
        self.cancelled: set[Any] = set()
        self.answers = 0  # requests answered so far
        self.posts = 0  # POSTs being handled now
        self.peak_posts = 0  # the most POSTs ever handled at once

    def note(self, value: Any) -> None:
        """A notifications/cancelled POST: remember the id it cancels."""
        if isinstance(value, dict) and value.get("method") == "notifications/cancelled" and "id" not in value:
            params = value.get("params")
            if isinstance(params, dict):
                with self.changed:
                    self.cancelled.add(params.get("requestId"))
                    self.changed.notify_all()

    def answered(self) -> None:
        """A request got its answer."""
        with self.changed:
            self.answers += 1
            self.changed.notify_all()

    def pair_tool_call(self, value: Any, replies: list[Any], *, swap: bool) -> list[Any]:
        """A call of a paired tool waits for a call of the other one in flight; `swap`: they trade results."""
        params = value.get("params") if isinstance(value, dict) and value.get("method") == "tools/call" else None
        if not isinstance(params, dict) or params.get("name") not in PAIRED_TOOLS or len(replies) != 1:
            return replies
        mine = {"name": params["name"], "reply": replies[0], "partner": None}
        with self.changed:
            partner = next((w for w in self.waiting if w["name"] != mine["name"] and w["partner"] is None), None)
            if partner is not None:
                partner["partner"], mine["partner"] = mine, partner
                self.changed.notify_all()
            else:
                self.waiting.append(mine)
                self.changed.wait_for(lambda: mine["partner"] is not None, PARTNER_SECONDS)
                self.waiting.remove(mine)
        other = mine["partner"]
        if not swap or other is None or "result" not in other["reply"] or "result" not in replies[0]:
            return replies
        return [{**replies[0], "result": other["reply"]["result"]}]

    def post_started(self, gather: int) -> int:
        """A POST arrived: count it; with `gather` > 1 it waits (bounded) until that many are in flight at once.

        Returns the peak so far, which the server logs: clients that send one POST at a time never get past 1.
        """
        with self.changed:
            self.posts += 1
            self.peak_posts = max(self.peak_posts, self.posts)
            self.changed.notify_all()
            self.changed.wait_for(lambda: self.peak_posts >= gather, GATHER_SECONDS)
            return self.peak_posts

    def post_ended(self) -> None:
        """A POST was answered (or failed)."""
        with self.changed:
            self.posts -= 1

    @staticmethod
    def deferred(value: Any) -> bool:
        """A list request carrying a progressToken: work a server may do in the background."""
        if not isinstance(value, dict) or value.get("method") not in LIST_METHODS or "id" not in value:
            return False
        params = value.get("params")
        meta = params.get("_meta") if isinstance(params, dict) else None
        return isinstance(meta, dict) and "progressToken" in meta

    def wait_cancel(self, rid: Any) -> bool:
        """Wait for a cancel of `rid` (bounded); whether it came."""
        with self.changed:
            return self.changed.wait_for(lambda: rid in self.cancelled, DEFER_SECONDS)

    def wait_next_answer(self) -> None:
        """Wait until one more request has been answered (bounded), then a moment more: that answer was read by
        the client on its own connection, and this one must come clearly after it."""
        with self.changed:
            seen = self.answers
            self.changed.wait_for(lambda: self.answers > seen, DEFER_SECONDS)
        time.sleep(AFTER_SECONDS)
