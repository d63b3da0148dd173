"""Concurrent clients over streamable HTTP: every answer and request-scoped notification reaches only its client.

The isolation phase (`mcpfuzz.engine.concurrent_clients`) opens several clients (sessions, or concurrent connections
on a stateless 2026-07-28 server) and sends requests with the same JSON-RPC id on each at once; this module judges
what each client's answer stream carried. JSON-RPC ids are per client: a server that routes by id alone across clients
hands one user's answer to another (the TypeScript SDK's GHSA-345p-7cg4-v4c7, CVE-2026-25536, where one server
instance was shared). The rules and their sources are in docs/oracles.md ("Concurrent clients").
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from mcpfuzz.jsonrpc.oracle_ids import OracleId
from mcpfuzz.oracles.base import Failure, Severity, failure_class, register_run_check

SessionIsolationFailure = failure_class(OracleId.SESSION_ISOLATION,
                                        "An answer or notification reached a client that did not ask for it")

register_run_check(SessionIsolationFailure, Severity.HIGH,
                   "clients sending requests with the same JSON-RPC id at once over streamable HTTP: an answer, or a "
                   "progress notification, reaches another client than the one that asked (or is lost to it); "
                   "2026-07-28: a log message below a request's own log level, or for a request that asked none")

# The log levels of the spec (RFC 5424's severities), least severe first.
LOG_LEVELS = ("debug", "info", "notice", "warning", "error", "critical", "alert", "emergency")
# The key only a result of each method carries: an answer that has another method's key answers another request.
RESULT_MARKERS = {"tools/list": "tools", "resources/list": "resources", "prompts/list": "prompts",
                  "resources/templates/list": "resourceTemplates", "server/discover": "supportedVersions"}
ANSWERS, PROGRESS, LOG_LEVEL = "answers", "progress", "log-level"


@dataclass(frozen=True)
class Asked:
    """One client's request of a round: its id (the same on every client), method, progress token and log level."""

    client: int
    rid: int
    method: str
    progress_token: str | None = None
    log_level: str | None = None  # the 2026-07-28 per-request level asked; None: none (no log may come)
    judge_logs: bool = False  # True in the 2026-07-28 era, where the level is per request

    def describe(self) -> str:
        """`client 2's tools/list (id 1)`."""
        return f"client {self.client}'s {self.method} (id {self.rid})"


@dataclass
class Heard:
    """What one client's answer to one request carried (a JSON body or an SSE stream), and how it ended."""

    asked: Asked
    messages: list[Any] = field(default_factory=list)
    status: int | None = None
    ended: str = ""  # "" when the answer ended by itself, else why it was cut ("no answer within 5s")
    # Unanswered here: were the same requests all answered when sent again at once with distinct ids?
    answered_apart: bool | None = None
    answered_at: float | None = None  # seconds from the round's start to this request's answer; None: none came

    def answers(self) -> list[dict[str, Any]]:
        """The responses carrying this request's id (value and JSON type)."""
        rid = self.asked.rid
        return [m for m in self.messages if isinstance(m, dict) and "method" not in m
                and ("result" in m or "error" in m) and type(m.get("id")) is type(rid) and m.get("id") == rid]

    def notifications(self, method: str) -> list[dict[str, Any]]:
        """The notifications of `method` on this answer's stream."""
        return [m for m in self.messages if isinstance(m, dict) and m.get("method") == method and "id" not in m]

    def lines(self) -> tuple[str, ...]:
        """What the finding shows as received: the request and each message its stream carried."""
        asked = self.asked
        head = (f"<{asked.describe()}, progress token {asked.progress_token!r}"
                + (f", log level {asked.log_level or 'none'}" if asked.judge_logs else "")
                + f": HTTP {self.status}{', ' + self.ended if self.ended else ''}>")
        return (head, *(json.dumps(m, sort_keys=True)[:300] for m in self.messages))


def judge_round(heard: Sequence[Heard]) -> Iterator[tuple[Failure, tuple[str, ...]]]:
    """One round of requests sent at once with the same id: each failure with the lines it shows, at most one per
    kind. Notifications that crossed along with the answers are the same routing: one finding, the answers'."""
    found: dict[str, tuple[Failure, tuple[str, ...]]] = {}
    for failure, lines in _failures(heard):
        found.setdefault(failure.key, (failure, lines))
    crossed = [what for key, what in ((PROGRESS, "progress notifications"), (LOG_LEVEL, "log messages"))
               if key in found]
    if ANSWERS in found and crossed:
        for key in (PROGRESS, LOG_LEVEL):
            found.pop(key, None)
        answers, lines = found[ANSWERS]
        found[ANSWERS] = (SessionIsolationFailure(answers.severity, f"{answers.message}; {' and '.join(crossed)} "
                                                  "went astray too", ANSWERS, server_wide=True), lines)
    yield from found.values()


def _failures(heard: Sequence[Heard]) -> Iterator[tuple[Failure, tuple[str, ...]]]:
    for index, one in enumerate(heard):
        others = [h for i, h in enumerate(heard) if i != index]
        yield from ((f, one.lines()) for f in _crossed_answers(one, others))
        yield from ((f, one.lines()) for f in _crossed_progress(one, others))
        if one.asked.judge_logs:
            yield from ((f, one.lines()) for f in _log_levels(one))


def _crossed_answers(one: Heard, others: list[Heard]) -> Iterator[Failure]:
    asked, answers = one.asked, one.answers()
    if len(answers) > 1:
        yield SessionIsolationFailure(Severity.HIGH, f"{asked.describe()} got {len(answers)} answers on its stream "
                                      f"while {len(others)} other clients sent id {asked.rid} at the same time: "
                                      "another client's answer reached it (JSON-RPC ids are per client)", ANSWERS,
                                      server_wide=True)
        return
    for answer in answers:
        result = answer.get("result")
        theirs = [o.asked for o in others if o.asked.method != asked.method and fits(o.asked.method, result)]
        if theirs and is_shaped(asked.method) and not fits(asked.method, result):
            yield SessionIsolationFailure(Severity.HIGH, f"{asked.describe()} was answered with a result of "
                                          f"{theirs[0].method}, which {theirs[0].describe()} asked at the same time "
                                          "with the same id: one client's answer reached another", ANSWERS,
                                          server_wide=True)
            return
    if not answers and one.answered_apart and any(o.answers() for o in others):
        ended = one.ended or "its stream ended"
        yield SessionIsolationFailure(Severity.HIGH, f"{asked.describe()} got no answer ({ended}) while other clients "
                                      f"sent id {asked.rid} at the same time and were answered; the same requests "
                                      "sent at once with distinct ids were all answered: its answer went to another "
                                      "client", ANSWERS, server_wide=True)


def _crossed_progress(one: Heard, others: list[Heard]) -> Iterator[Failure]:
    tokens = {o.asked.progress_token: o.asked for o in others if o.asked.progress_token is not None}
    for note in one.notifications("notifications/progress"):
        params = note.get("params")
        token = params.get("progressToken") if isinstance(params, dict) else None
        if token != one.asked.progress_token and isinstance(token, str) and token in tokens:
            yield SessionIsolationFailure(Severity.HIGH, f"a progress notification for {tokens[token].describe()} "
                                          f"(token {token!r}) reached {one.asked.describe()}: request-scoped "
                                          "notifications go only to the client that sent the request", PROGRESS,
                                          server_wide=True)
            return


def _log_levels(one: Heard) -> Iterator[Failure]:
    asked = one.asked
    for note in one.notifications("notifications/message"):
        params = note.get("params")
        level = params.get("level") if isinstance(params, dict) else None
        if asked.log_level is None:
            yield SessionIsolationFailure(Severity.MEDIUM, f"{asked.describe()} asked for no log level (no "
                                          "io.modelcontextprotocol/logLevel in its _meta), yet its stream carried a "
                                          f"{level} log message: the server MUST NOT send logs for such a request "
                                          "(2026-07-28); another client's log, or one sent regardless", LOG_LEVEL,
                                          server_wide=True)
            return
        if level in LOG_LEVELS and LOG_LEVELS.index(level) < LOG_LEVELS.index(asked.log_level):
            yield SessionIsolationFailure(Severity.MEDIUM, f"{asked.describe()} asked for log level "
                                          f"{asked.log_level}, yet its stream carried a {level} log message, below "
                                          "it: another client's log, or the request's level ignored", LOG_LEVEL,
                                          server_wide=True)
            return


def fits(method: str, result: Any) -> bool:
    """True when `result` has the shape only `method`'s result has (ping: an empty result, `_meta` aside)."""
    if not isinstance(result, dict):
        return False
    if method == "ping":
        return not [key for key in result if key != "_meta"]
    marker = RESULT_MARKERS.get(method)
    return marker is not None and marker in result


def is_shaped(method: str) -> bool:
    """True for the methods whose result `fits` tells apart."""
    return method == "ping" or method in RESULT_MARKERS
