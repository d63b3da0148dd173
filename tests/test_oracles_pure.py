"""Every oracle's rules on hand-built exchanges: which answers make it fire, at which severity, and which
leave it silent. No server, no subprocess: each case is a few microseconds.

Run-level oracles are tested on their series functions (`judge_growth`, the pile-up's limits).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

import pytest

from mcpfuzz.engine.monitor.pileup import PILEUP_LIMITS
from mcpfuzz.engine.session.collector import Collector
from mcpfuzz.jsonrpc import expectation as ex
from mcpfuzz.jsonrpc.client_check import AnswerMode, RetryKind
from mcpfuzz.jsonrpc.effects import Effect, Observation, Op
from mcpfuzz.jsonrpc.exchange import Exchange, ProcessEnd
from mcpfuzz.jsonrpc.expectation import Expectation, ReaderLimit
from mcpfuzz.jsonrpc.frame import Case
from mcpfuzz.jsonrpc.http_reply import HttpReply
from mcpfuzz.jsonrpc.ids import ABSENT
from mcpfuzz.jsonrpc.incoming import classify, split_batch
from mcpfuzz.jsonrpc.oracle_ids import OracleId
from mcpfuzz.jsonrpc.parts.cancel import CancelCheck
from mcpfuzz.jsonrpc.parts.client import ClientCheck
from mcpfuzz.jsonrpc.parts.concurrency import AloneAnswers, ConcurrencyCheck
from mcpfuzz.jsonrpc.parts.http_rule import HttpRule
from mcpfuzz.jsonrpc.parts.identity import IdentityCheck
from mcpfuzz.jsonrpc.parts.leniency import IsErrorResultOk, Lenient, QuietOk
from mcpfuzz.jsonrpc.parts.listing import ListingCheck
from mcpfuzz.jsonrpc.parts.past_limit import PastLimit
from mcpfuzz.jsonrpc.parts.resource import ResourceCheck
from mcpfuzz.jsonrpc.parts.slow_after import SlowAfter
from mcpfuzz.jsonrpc.parts.state import StateCheck
from mcpfuzz.jsonrpc.parts.task import TaskCheck
from mcpfuzz.jsonrpc.parts.tool_call import ToolCallCheck
from mcpfuzz.jsonrpc.parts.version_check import VersionCheck
from mcpfuzz.jsonrpc.task_check import TaskIdKind, TaskStep
from mcpfuzz.jsonrpc.versions import LATEST_LEGACY, LATEST_MODERN, Era
from mcpfuzz.oracles.base import Scope, Severity, all_oracles, plain_answer, run_checks
from mcpfuzz.oracles.http import SessionPileupFailure
from mcpfuzz.oracles.memory import KIB, MIB, MemoryGrowthFailure, judge_growth

pytestmark = pytest.mark.unit

LOW, MEDIUM, HIGH, CRITICAL = Severity.LOW, Severity.MEDIUM, Severity.HIGH, Severity.CRITICAL
SCHEMA = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}


def exchange(expect: Expectation, *replies: Any, frame: bytes = b'{"jsonrpc":"2.0"}', era: Era = Era.LEGACY,
             barrier: bool | None = True, earlier: Sequence[Any] = (), http: HttpReply | None = None,
             crash: ProcessEnd | None = None, write_error: str | None = None, extended: bool = False) -> Exchange:
    """The exchange a session records when the server writes `replies` (dicts, or raw bytes) to this case.

    Ids are tagged as the session tags them: this case's id (and batch ids), an `earlier` one, null,
    missing, or never sent; each id's answers are counted.
    """
    case = Case("pure", "test", "a hand-built case", frame, expect)
    version = LATEST_MODERN if era is Era.MODERN else LATEST_LEGACY
    collector = Collector(alive=lambda: True)  # the session's own tagging and counting
    for rid in earlier:  # cases sent before on the same server
        collector.open(Exchange(Case("earlier", "test", "", b"", ex.any_answer(rid)), era, version))
        collector.close()
    built = Exchange(case, era, version, frames=[frame], barrier_answered=barrier, waited=0.5, crash=crash,
                     write_error=write_error, http=http, extended=extended)
    collector.open(built)
    for reply in replies:
        line = reply if isinstance(reply, bytes) else json.dumps(reply).encode()
        for incoming in split_batch(classify(line)):
            collector.route(incoming)
    collector.close()
    return built



def result(rid: Any, value: Any = None) -> dict:
    """A result response."""
    return {"jsonrpc": "2.0", "id": rid, "result": {} if value is None else value}


def error(rid: Any, code: int, message: str = "nope", **more: Any) -> dict:
    """An error response."""
    return {"jsonrpc": "2.0", "id": rid, "error": {"code": code, "message": message, **more}}


def http(status: int, **more: Any) -> HttpReply:
    """A finished streamable HTTP reply."""
    return HttpReply(status=status, content_type="application/json", done=True, **more)


def tool_call(rid: int, *, valid: bool = True, schema: dict | None = None, unicode_unsafe: bool = False
              ) -> Expectation:
    """A tools/call of `echo` with valid arguments (judged by valid-input-accepted) or invalid ones."""
    check = ToolCallCheck("echo", valid=valid, output_schema=schema, unicode_unsafe=unicode_unsafe)
    if valid:
        return Expectation(judge=OracleId.VALID_INPUT_ACCEPTED, id=rid, result_ok=True, error_ok=True,
                           well_formed=True, method="tools/call", parts=(check,))
    return Expectation(judge=OracleId.INVALID_PARAMS, id=rid, codes=frozenset({ex.INVALID_PARAMS}), result_ok=True,
                       well_formed=True, method="tools/call", parts=(IsErrorResultOk(), check))


def late(built: Exchange, seconds: float) -> Exchange:
    """`built` as if every answer had come `seconds` after the case was sent (slow-input reads the answer's time)."""
    built.arrivals = [replace(arrival, at=seconds) for arrival in built.arrivals]
    return built


def slow_call(rid: int, limit: float | None) -> Expectation:
    """A valid tools/call the engine saw slow twice (answers from `limit` seconds on are slow-input's)."""
    return tool_call(rid).with_part(SlowAfter(limit))


def observed(rid: int, judge: OracleId, *rounds: tuple[Any, ...], item: str = "") -> Expectation:
    """A valid tools/call sent between observations of one request: `rounds` are the answers before, again, after,
    then (before, after) for each time it was sent again."""
    before, again, after, *resent = rounds
    pairs = tuple(((first,), (second,)) for first, second in resent)
    state = StateCheck(judge, (("tools/call", {"name": "get", "arguments": {"id": item or "x"}}),), item,
                       (before,), (again,), (after,), pairs)
    return tool_call(rid).with_part(state)


def names(*held: str) -> dict:
    """A list tool's result holding `held`."""
    return {"content": [{"type": "text", "text": json.dumps(list(held))}], "structuredContent": {"names": list(held)}}


def call_result(structured: Any = ABSENT, *, is_error: bool = False) -> dict:
    """A tools/call result with text content, and structuredContent when given."""
    value: dict = {"content": [{"type": "text", "text": "ok"}], "isError": is_error}
    if structured is not ABSENT:
        value["structuredContent"] = structured
    return value


def asking(rid: int, mode: AnswerMode = AnswerMode.ACCEPT, declared: tuple[str, ...] = ("elicitation",),
           retry: RetryKind | None = None, baseline: Any = None) -> Expectation:
    """A tools/call whose server asks mcpfuzz for input, answered as `mode` says (or a 2026-07-28 retry)."""
    judge = P.INPUT_REQUIRED if retry is not None else P.CLIENT_REQUESTS
    return Expectation(judge=judge, id=rid, result_ok=True, error_ok=True, method="tools/call",
                       parts=(ClientCheck(mode, declared, retry, baseline),))


ELICIT = {"jsonrpc": "2.0", "id": "e-1", "method": "elicitation/create",
          "params": {"message": "name?", "requestedSchema": {"type": "object", "properties": {}}}}
ASKED = {"resultType": "input_required", "requestState": "s",
         "inputRequests": {"name": {"method": "elicitation/create", "params": ELICIT["params"]}}}
HELLO = {**call_result(), "resultType": "complete"}
OTHER = {"content": [{"type": "text", "text": "other"}], "isError": False, "resultType": "complete"}


def tasked(rid: int, check: TaskCheck, codes: frozenset[int] = frozenset()) -> Expectation:
    """A tasks case: any answer for the task's own id, the `codes` otherwise."""
    return Expectation(judge=OracleId.TASK_IDS, id=rid, codes=codes, result_ok=not codes, error_ok=True,
                       well_formed=check.kind.well_formed, parts=(check,))


TASK = {"taskId": "t-1", "status": "working", "createdAt": "2026-01-01T00:00:00Z",
        "lastUpdatedAt": "2026-01-01T00:00:00Z", "ttlMs": 1000, "resultType": "complete"}
UNKNOWN_GET = TaskCheck(TaskStep.GET, TaskIdKind.UNKNOWN, "none", ("t-1",))
AFTER_CANCEL = TaskCheck(TaskStep.GET, TaskIdKind.VALID, "t-1", ("t-1",), cancel_acked=True)


@dataclass(frozen=True)
class Rule:
    """One rule of one oracle: on this exchange it reports these severities (none: it stays silent)."""

    oracle: OracleId
    exchange: Exchange
    severities: tuple[Severity, ...]


P = OracleId
UNKNOWN_TOOL_CALL = b'{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"mcpfuzz-no-such-tool"}}'
def missing(rid: int) -> Expectation:
    """resources/read of a URI that exists nowhere, the code of the exchange's era due."""
    return Expectation(judge=P.RESOURCE_NOT_FOUND, id=rid, result_ok=True, error_ok=True, well_formed=True,
                       method="resources/read", parts=(ResourceCheck("mem://none", missing=True),))


def listing(rid: int, *, page: int = 1, cursors: tuple[str, ...] = ()) -> Expectation:
    """A page of prompts/list on a server that declares `prompts`."""
    return Expectation(judge=P.DECLARED_SERVED, id=rid, result_ok=True, error_ok=True, well_formed=True,
                       method="prompts/list", parts=(ListingCheck("prompts", page, cursors),))


def identity(rid: int, *baseline: str, ordered: bool = True) -> Expectation:
    """tools/list on a fresh connection, after the connection in use listed tools named `baseline`."""
    return Expectation(judge=P.LIST_IDENTITY, id=rid, result_ok=True, error_ok=True, well_formed=True,
                       method="tools/list", parts=(IdentityCheck("tools", "name", ordered,
                                                                   tuple({"name": name} for name in baseline)),))


def tools(*names: str, more: bool = False) -> dict:
    """A tools/list page of tools with these names."""
    return {"tools": [{"name": name, "_meta": {"n": index}} for index, name in enumerate(names)],
            **({"nextCursor": "2"} if more else {})}


def cancelled() -> Expectation:
    """Request 1, notifications/cancelled for it, then probe 2."""
    return Expectation(judge=P.CANCEL_RESPECTED, id=1, result_ok=True, error_ok=True, batch_ids=(2,),
                       parts=(CancelCheck(1, 2),))


def read(rid: int, name: str) -> dict:
    """A resources/read result for mem://NAME."""
    return result(rid, {"contents": [{"uri": f"mem://{name}", "text": name}]})


def at_once() -> Expectation:
    """tools/list (1) and reads of mem://a (2) and mem://b (3), in one write."""
    requests = ((1, "tools/list", ""), (2, "resources/read", "mem://a"), (3, "resources/read", "mem://b"))
    return Expectation(judge=P.CONCURRENCY, id=1, batch_ids=(1, 2, 3), result_ok=True, error_ok=True,
                       well_formed=True, parts=(ConcurrencyCheck(requests),))


def tools_at_once(alone_a: tuple[object, object], alone_b: tuple[object, object], *,
                  changes_state: bool = False) -> Expectation:
    """Two tool calls (1, 2) in one write, read-only unless `changes_state`, with what each got alone before and
    after the burst."""
    requests = ((1, "tools/call", "a"), (2, "tools/call", "b"))
    alone = (AloneAnswers(1, *alone_a), AloneAnswers(2, *alone_b))
    return Expectation(judge=P.CONCURRENCY, id=1, batch_ids=(1, 2), result_ok=True, error_ok=True,
                       well_formed=True, parts=(ConcurrencyCheck(requests, alone, changes_state=changes_state),))


def text(value: str, **meta: object) -> dict:
    """A tool result of one text item (with `_meta` when given)."""
    return {"content": [{"type": "text", "text": value}], **({"_meta": meta} if meta else {})}


def hooked(*effects: Effect, read_only: bool = False, open_world: bool = False, inputs: tuple[str, ...] = ()
             ) -> Exchange:
    """A tool call answered plainly, with what the hook in the server saw it do."""
    built = exchange(tool_call(5), result(5, text("done")))
    return replace(built, case=replace(built.case, family="tool"),
                   observation=Observation(effects, read_only=read_only, open_world=open_world, inputs=inputs))


OUTSIDE_READ = Effect(Op.READ, path="/tmp/r/linked/linked.txt", pid=4, program="s.py", outside=True)
SHELL_LINE = Effect(Op.EXEC, argv=("/bin/sh", "-c", "wc -l x; touch /tmp/m"), pid=4, program="s.py")
CONNECTION = Effect(Op.CONNECT, address="127.0.0.1:9", pid=4, program="s.py")


def listed(rid: int) -> Expectation:
    """resources/read of mem://a, which resources/list named."""
    return Expectation(judge=P.DECLARED_SERVED, id=rid, result_ok=True, error_ok=True, well_formed=True,
                       method="resources/read", parts=(ResourceCheck("mem://a", listed=True),))


RULES: dict[str, Rule] = {
    # parse-error: JSON-RPC 2.0 section 5.1, -32700 with id null.
    "parse-error answered right": Rule(P.PARSE_ERROR, exchange(ex.parse_error(), error(None, -32700)), ()),
    "parse-error wrong code": Rule(P.PARSE_ERROR, exchange(ex.parse_error(), error(None, -32600)), (MEDIUM,)),
    "parse-error silence is low": Rule(P.PARSE_ERROR, exchange(ex.parse_error()), (LOW,)),
    "parse-error silence on a stuck server": Rule(P.PARSE_ERROR, exchange(ex.parse_error(), barrier=False), ()),
    "parse-error lenient answer with the id": Rule(P.PARSE_ERROR, exchange(Expectation(
        judge=P.PARSE_ERROR, id=7, codes=frozenset({ex.PARSE_ERROR}), result_ok=True, null_id_ok=True,
        parts=(Lenient(),)),
        result(7)), ()),
    "parse-error lenient null-id error not -32700": Rule(P.PARSE_ERROR, exchange(Expectation(
        judge=P.PARSE_ERROR, id=7, codes=frozenset({ex.PARSE_ERROR}), result_ok=True, null_id_ok=True,
        parts=(Lenient(),)),
        error(None, -32600)), (MEDIUM,)),
    "parse-error code misused on a valid request": Rule(P.PARSE_ERROR, exchange(ex.result(5, "ping"),
                                                                                error(5, -32700)), (MEDIUM,)),
    # invalid-request: section 5, -32600 with the id when readable.
    "invalid-request answered right": Rule(P.INVALID_REQUEST, exchange(ex.invalid_request(3), error(3, -32600)), ()),
    # Severity model: a MUST broken only on malformed input is medium, even when a client then waits.
    "invalid-request silent with a readable id": Rule(P.INVALID_REQUEST, exchange(ex.invalid_request(3)), (MEDIUM,)),
    "invalid-request silence past a reader limit is no-hang's": Rule(
        P.INVALID_REQUEST, exchange(ex.invalid_request(3).with_part(PastLimit(ReaderLimit.NESTING))), ()),
    "invalid-request silent, quiet_ok": Rule(P.INVALID_REQUEST, exchange(Expectation(
        judge=P.INVALID_REQUEST, id=3, null_id_ok=True, codes=frozenset({ex.INVALID_REQUEST}), parts=(QuietOk(),))),
        (LOW,)),
    "invalid-request silent, id unreadable": Rule(P.INVALID_REQUEST, exchange(ex.invalid_request(None)), (LOW,)),
    # An error with id null answers no readable id: to a client the request went unanswered.
    # An answer with id null is an answer (the right code here); id-preserved judges the id.
    "invalid-request id lost": Rule(P.INVALID_REQUEST, exchange(ex.invalid_request(3), error(None, -32600)), ()),
    "invalid-request id null allowed": Rule(P.INVALID_REQUEST, exchange(ex.invalid_request(3, null_id_ok=True),
                                                                        error(None, -32600)), ()),
    "invalid-request unreadable id answered with one": Rule(P.INVALID_REQUEST, exchange(
        ex.invalid_request(None), error(9, -32600)), (MEDIUM,)),
    # A refusal came at once (the response ended): no client waits; only the error for its id is lost (low).
    "invalid-request HTTP refusal without the error": Rule(P.INVALID_REQUEST, exchange(
        ex.invalid_request(3), http=http(400)), (LOW,)),
    # 401, 403, 404, 413, 429: judged by status alone, the body is free (plain text, a page, JSON of any shape).
    "invalid-request a 403 with a plain-text body": Rule(P.INVALID_REQUEST, exchange(
        ex.invalid_request(3), http=HttpReply(status=403, content_type="text/plain", body=b"Forbidden\n",
                                              body_size=10, done=True)), ()),
    "invalid-request a 413 with an HTML page": Rule(P.INVALID_REQUEST, exchange(
        ex.invalid_request(3), http=HttpReply(status=413, content_type="text/html", body=b"<html>too large</html>",
                                              body_size=22, done=True)), ()),
    "response-schema a 403 whose JSON body is not JSON-RPC": Rule(P.RESPONSE_SCHEMA, exchange(
        ex.result(1, "ping"), {"error": "forbidden", "id": 1}, http=http(403)), ()),
    "response-schema a 400 whose JSON body is not JSON-RPC": Rule(P.RESPONSE_SCHEMA, exchange(
        ex.result(1, "ping"), {"error": "bad request", "id": 1}, http=http(400)), (MEDIUM,)),
    "id-preserved a 404 refusal's body with id null": Rule(P.ID_PRESERVED, exchange(Expectation(
        judge=P.HTTP_STATUS, reply=False, id=2, parts=(HttpRule((404,)),)), error(None, -32600), http=http(404)), ()),
    # method-not-found: -32601.
    "method-not-found answered right": Rule(P.METHOD_NOT_FOUND, exchange(ex.method_not_found(4), error(4, -32601)),
                                            ()),
    "method-not-found wrong code": Rule(P.METHOD_NOT_FOUND, exchange(ex.method_not_found(4), error(4, -32600)),
                                        (MEDIUM,)),
    "method-not-found a result": Rule(P.METHOD_NOT_FOUND, exchange(ex.method_not_found(4), result(4)), (MEDIUM,)),
    "method-not-found silence": Rule(P.METHOD_NOT_FOUND, exchange(ex.method_not_found(4)), (MEDIUM,)),
    # invalid-params: -32602, or (tool arguments, SEP-1303) an isError result.
    "invalid-params answered right": Rule(P.INVALID_PARAMS, exchange(ex.invalid_params(5), error(5, -32602)), ()),
    "invalid-params wrong code": Rule(P.INVALID_PARAMS, exchange(ex.invalid_params(5), error(5, -32603)), (MEDIUM,)),
    "invalid-params unknown tool as an isError result is low (SEP-2145 is open)": Rule(P.INVALID_PARAMS, exchange(
        ex.invalid_params(5, also=frozenset({-32601})), result(5, {"content": [], "isError": True}),
        frame=UNKNOWN_TOOL_CALL), (LOW,)),
    "invalid-params unknown tool as a successful result": Rule(P.INVALID_PARAMS, exchange(
        ex.invalid_params(5, also=frozenset({-32601})), result(5, {"content": []}), frame=UNKNOWN_TOOL_CALL),
        (MEDIUM,)),
    "invalid-params isError result": Rule(P.INVALID_PARAMS, exchange(tool_call(5, valid=False),
                                                                     result(5, call_result(is_error=True))), ()),
    "invalid-params bad arguments refused by the header check over modern HTTP": Rule(P.INVALID_PARAMS, exchange(
        tool_call(5, valid=False), error(5, -32020), era=Era.MODERN, http=http(400)), ()),
    "invalid-params -32020 on bad arguments before 2026-07-28": Rule(P.INVALID_PARAMS, exchange(
        tool_call(5, valid=False), error(5, -32020), http=http(400)), (MEDIUM,)),
    "invalid-params accepted": Rule(P.INVALID_PARAMS, exchange(tool_call(5, valid=False), result(5, call_result())),
                                    (MEDIUM,)),
    # http-status: streamable HTTP status rules.
    "http-status 5xx": Rule(P.HTTP_STATUS, exchange(ex.result(1, "ping"), result(1), http=http(500)), (MEDIUM,)),
    "http-status 202 for a notification": Rule(P.HTTP_STATUS, exchange(ex.no_reply(), http=http(202)), ()),
    "http-status 200 for a notification": Rule(P.HTTP_STATUS, exchange(ex.no_reply(), http=http(200)), (MEDIUM,)),
    "http-status 2xx for a bad body": Rule(P.HTTP_STATUS, exchange(ex.parse_error(), http=http(200)), (MEDIUM,)),
    "http-status wanted status": Rule(P.HTTP_STATUS, exchange(Expectation(
        judge=P.HTTP_STATUS, reply=False, id=2, parts=(HttpRule((404,)),)), error(2, -32600), http=http(404)), ()),
    "http-status other status, a SHOULD": Rule(P.HTTP_STATUS, exchange(Expectation(
        judge=P.HTTP_STATUS, reply=False, id=2, parts=(HttpRule((400,), "low"),)), result(2), http=http(200)), (LOW,)),
    "http-status right status, wrong code": Rule(P.HTTP_STATUS, exchange(Expectation(
        judge=P.HTTP_STATUS, reply=False, id=2, parts=(HttpRule((400,), "medium", (-32020,)),)), error(2, -32600),
        http=http(400)), (MEDIUM,)),
    "http-status not over legacy SSE": Rule(P.HTTP_STATUS, exchange(ex.no_reply(), http=HttpReply(
        transport="sse", status=200, done=True)), ()),
    # session-leak: a refusal must not open a session.
    "session-leak refusal opened a session": Rule(P.SESSION_LEAK, exchange(ex.result(1, "initialize"), http=http(
        400, session_id="s-1", session_live=True)), (MEDIUM,)),
    "session-leak id that opens nothing": Rule(P.SESSION_LEAK, exchange(ex.result(1, "initialize"), http=http(
        400, session_id="s-1", session_live=False)), ()),
    # origin-check: a foreign Origin gets 403.
    "origin-check accepted": Rule(P.ORIGIN_CHECK, exchange(Expectation(
        judge=P.ORIGIN_CHECK, reply=False, id=1, parts=(HttpRule((403,)),)), result(1), http=http(200)), (MEDIUM,)),
    "origin-check refused": Rule(P.ORIGIN_CHECK, exchange(Expectation(
        judge=P.ORIGIN_CHECK, reply=False, id=1, parts=(HttpRule((403,)),)), http=http(403)), ()),
    # id-preserved: same value, same JSON type.
    "id-preserved same id": Rule(P.ID_PRESERVED, exchange(ex.result(1, "ping"), result(1)), ()),
    "id-preserved type changed": Rule(P.ID_PRESERVED, exchange(ex.result(1, "ping"), result("1")), (HIGH,)),
    "id-preserved an unsent id": Rule(P.ID_PRESERVED, exchange(ex.invalid_request(None), error(77, -32600)),
                                      (MEDIUM,)),
    "id-preserved an unsent id on a valid request": Rule(P.ID_PRESERVED, exchange(ex.result(5, "ping"),
                                                                                  result(77)), (HIGH,)),
    "id-preserved id null for a readable id, valid request": Rule(P.ID_PRESERVED, exchange(
        ex.result(5, "ping"), error(None, -32603)), (HIGH,)),
    "id-preserved id null for a readable id, invalid request": Rule(P.ID_PRESERVED, exchange(
        ex.invalid_request(3), error(None, -32602)), (MEDIUM,)),
    "id-preserved id null where null is allowed": Rule(P.ID_PRESERVED, exchange(
        ex.invalid_request(3, null_id_ok=True), error(None, -32600)), ()),
    "id-preserved an id beyond 2**53 read inexactly is low": Rule(P.ID_PRESERVED, exchange(
        ex.result(2**53 + 1, "ping").with_part(PastLimit(ReaderLimit.BIG_INTEGER)), result(2**53)), (LOW,)),
    "id-preserved late answer to an earlier id": Rule(P.ID_PRESERVED, exchange(ex.result(2, "ping"), result(1),
                                                                              result(2), earlier=[1]), ()),
    "id-preserved HTTP refusal with id null": Rule(P.ID_PRESERVED, exchange(Expectation(
        judge=P.HTTP_STATUS, reply=False, id=2, parts=(HttpRule((400,)),)), error(None, -32600), http=http(400)),
        (MEDIUM,)),
    "id-preserved Origin refusal may drop the id": Rule(P.ID_PRESERVED, exchange(Expectation(
        judge=P.ORIGIN_CHECK, reply=False, id=2, parts=(HttpRule((403,)),)), error(None, -32600), http=http(403)), ()),
    # single-response: one answer per request.
    "single-response once": Rule(P.SINGLE_RESPONSE, exchange(ex.result(1, "ping"), result(1)), ()),
    "single-response twice": Rule(P.SINGLE_RESPONSE, exchange(ex.result(1, "ping"), result(1), result(1)), (HIGH,)),
    # no-internal-leak: no traces or source paths in errors.
    "no-internal-leak a traceback": Rule(P.NO_INTERNAL_LEAK, exchange(ex.invalid_params(5), error(
        5, -32602, 'Traceback (most recent call last):\n  File "/srv/app/server.py", line 3')), (MEDIUM,)),
    "no-internal-leak a source path": Rule(P.NO_INTERNAL_LEAK, exchange(ex.invalid_params(5), error(
        5, -32602, "failed in /srv/app/tools/search.py")), (MEDIUM,)),
    "no-internal-leak a path the request sent": Rule(P.NO_INTERNAL_LEAK, exchange(ex.invalid_params(5), error(
        5, -32602, "no file /srv/app/x.py"), frame=b'{"path":"/srv/app/x.py"}'), ()),
    "no-internal-leak a plain message": Rule(P.NO_INTERNAL_LEAK, exchange(ex.invalid_params(5), error(5, -32602)),
                                             ()),
    # notification-silent: section 4.1, no reply to a notification.
    "notification-silent silence": Rule(P.NOTIFICATION_SILENT, exchange(ex.no_reply()), ()),
    "notification-silent replied": Rule(P.NOTIFICATION_SILENT, exchange(ex.no_reply(), error(None, -32601)),
                                        (MEDIUM,)),
    "notification-silent HTTP refusal may carry an error": Rule(P.NOTIFICATION_SILENT, exchange(
        ex.no_reply(), error(None, -32600), http=http(400)), ()),
    # no-crash: the process survives.
    "no-crash alive": Rule(P.NO_CRASH, exchange(ex.result(1, "ping"), result(1)), ()),
    "no-crash exited": Rule(P.NO_CRASH, exchange(ex.result(1, "ping"), crash=ProcessEnd(1, "KeyError: 'x'")),
                            (CRITICAL,)),
    # no-hang: a valid request gets an answer; the barrier tells dropped from stuck.
    "no-hang answered": Rule(P.NO_HANG, exchange(ex.result(1, "ping"), result(1)), ()),
    "no-hang dropped": Rule(P.NO_HANG, exchange(ex.result(1, "ping")), (CRITICAL,)),
    "no-hang stuck": Rule(P.NO_HANG, exchange(ex.result(1, "ping"), barrier=False), (CRITICAL,)),
    "no-hang dropped past a nesting limit is low": Rule(P.NO_HANG, exchange(
        ex.any_answer(1).with_part(PastLimit(ReaderLimit.NESTING))), (LOW,)),
    "no-hang silent past a nesting limit on an invalid request is low": Rule(P.NO_HANG, exchange(
        ex.invalid_request(3).with_part(PastLimit(ReaderLimit.NESTING))), (LOW,)),
    "no-hang id null answer past a size limit is an answer": Rule(P.NO_HANG, exchange(
        replace(ex.any_answer(1).with_part(PastLimit(ReaderLimit.SIZE)), null_id_ok=True), error(None, -32700)), ()),
    "no-hang stuck past a nesting limit is still critical": Rule(P.NO_HANG, exchange(
        ex.any_answer(1).with_part(PastLimit(ReaderLimit.NESTING)), barrier=False), (CRITICAL,)),
    # Numbers: any JSON integer is an answer (past Python's 4300-digit limit); NaN and Infinity are not JSON.
    "no-hang a result with a 5000-digit integer is an answer": Rule(P.NO_HANG, exchange(
        ex.result(1, "ping"), b'{"jsonrpc":"2.0","id":1,"result":{"n":' + b"9" * 5000 + b"}}"), ()),
    "stdout-clean a 5000-digit integer is JSON": Rule(P.STDOUT_CLEAN, exchange(
        ex.result(1, "ping"), b'{"jsonrpc":"2.0","id":1,"result":{"n":-' + b"9" * 30000 + b"}}"), ()),
    "response-schema NaN in a result is not JSON": Rule(P.RESPONSE_SCHEMA, exchange(
        ex.result(1, "ping"), b'{"jsonrpc":"2.0","id":1,"result":{"n":NaN}}'), (MEDIUM,)),
    "response-schema -Infinity in a result is not JSON": Rule(P.RESPONSE_SCHEMA, exchange(
        ex.result(1, "ping"), b'{"jsonrpc":"2.0","id":1,"result":{"n":-Infinity}}'), (MEDIUM,)),
    "no-hang NaN in a result is still an answer": Rule(P.NO_HANG, exchange(
        ex.result(1, "ping"), b'{"jsonrpc":"2.0","id":1,"result":{"n":NaN}}'), ()),
    # RFC 8259 section 6: a frame with an integer beyond 2**53 may be refused with any error (id null too).
    "parse-error a refusal of an id beyond 2**53 is allowed": Rule(P.PARSE_ERROR, exchange(replace(
        ex.result(2**53 + 1, "ping").with_part(PastLimit(ReaderLimit.BIG_INTEGER)), error_ok=True, null_id_ok=True),
        error(None, -32700)), ()),
    "id-preserved a refusal of an id beyond 2**53 with id null is allowed": Rule(P.ID_PRESERVED, exchange(replace(
        ex.result(2**53 + 1, "ping").with_part(PastLimit(ReaderLimit.BIG_INTEGER)), error_ok=True, null_id_ok=True),
        error(None, -32700)), ()),
    "no-hang late answer is no hang": Rule(P.NO_HANG, exchange(tool_call(1), result(1, call_result()),
                                                               extended=True), ()),
    "no-hang id null answer is an answer": Rule(P.NO_HANG, exchange(ex.result(1, "ping"), error(None, -32603)), ()),
    "no-hang stuck after an invalid frame": Rule(P.NO_HANG, exchange(ex.parse_error(), barrier=False), (CRITICAL,)),
    "no-hang write failed": Rule(P.NO_HANG, exchange(ex.result(1, "ping"), write_error="broken pipe"), (CRITICAL,)),
    "no-hang HTTP refusal is an answer": Rule(P.NO_HANG, exchange(ex.result(1, "ping"), http=http(400)), ()),
    "no-hang a 413 for a frame past a size limit is an answer": Rule(P.NO_HANG, exchange(
        ex.any_answer(1).with_part(PastLimit(ReaderLimit.SIZE)), http=HttpReply(
            status=413, content_type="text/html", body=b"<html>too large</html>", body_size=22, done=True)), ()),
    # stdout-clean: only JSON-RPC on stdout.
    "stdout-clean clean": Rule(P.STDOUT_CLEAN, exchange(ex.result(1, "ping"), result(1)), ()),
    "stdout-clean a log line": Rule(P.STDOUT_CLEAN, exchange(ex.result(1, "ping"), b"INFO started 12", result(1)),
                                    (HIGH,)),
    # response-schema: envelopes and MCP result shapes.
    "response-schema a good initialize": Rule(P.RESPONSE_SCHEMA, exchange(ex.result(1, "initialize"), result(1, {
        "protocolVersion": LATEST_LEGACY, "capabilities": {}, "serverInfo": {"name": "s", "version": "1"}})), ()),
    "response-schema initialize without serverInfo": Rule(P.RESPONSE_SCHEMA, exchange(
        ex.result(1, "initialize"), result(1, {"protocolVersion": LATEST_LEGACY, "capabilities": {}})), (MEDIUM,)),
    "response-schema a broken envelope": Rule(P.RESPONSE_SCHEMA, exchange(ex.result(1, "ping"), {"id": 1,
                                                                                                "result": {}}),
                                              (MEDIUM,)),
    "response-schema modern result without resultType": Rule(P.RESPONSE_SCHEMA, exchange(
        ex.result(1, "ping"), result(1), era=Era.MODERN), (MEDIUM,)),
    # valid-input-accepted: schema-valid arguments are not refused with -32602.
    "valid-input-accepted accepted": Rule(P.VALID_INPUT_ACCEPTED, exchange(tool_call(6), result(6, call_result())),
                                          ()),
    "valid-input-accepted refused by a validator": Rule(P.VALID_INPUT_ACCEPTED, exchange(tool_call(6), error(
        6, -32602, "Invalid arguments: expected string, received number")), (MEDIUM,)),
    "valid-input-accepted refused past a bound": Rule(P.VALID_INPUT_ACCEPTED, exchange(tool_call(6), error(
        6, -32602, "limit must be below 50")), (MEDIUM,)),
    "valid-input-accepted refused without a message": Rule(P.VALID_INPUT_ACCEPTED, exchange(tool_call(6), error(
        6, -32602, "")), (MEDIUM,)),
    "valid-input-accepted refused for a rule of the tool's own": Rule(P.VALID_INPUT_ACCEPTED, exchange(
        tool_call(6), error(6, -32602, "Provide exactly one of url or alexandria")), (LOW,)),
    "valid-input-accepted domain error": Rule(P.VALID_INPUT_ACCEPTED, exchange(tool_call(6), error(6, -32000)), ()),
    "valid-input-accepted lone surrogate": Rule(P.VALID_INPUT_ACCEPTED, exchange(
        tool_call(6, unicode_unsafe=True), error(6, -32602)), ()),
    "valid-input-accepted invalid arguments": Rule(P.VALID_INPUT_ACCEPTED, exchange(
        tool_call(6, valid=False), error(6, -32602)), ()),
    # output-schema: structuredContent conforms to the outputSchema.
    "output-schema conforming": Rule(P.OUTPUT_SCHEMA, exchange(tool_call(8, schema=SCHEMA),
                                                               result(8, call_result({"n": 1}))), ()),
    "output-schema breaks the schema": Rule(P.OUTPUT_SCHEMA, exchange(tool_call(8, schema=SCHEMA),
                                                                      result(8, call_result({"n": "x"}))), (MEDIUM,)),
    "output-schema missing on success": Rule(P.OUTPUT_SCHEMA, exchange(tool_call(8, schema=SCHEMA),
                                                                       result(8, call_result())), (MEDIUM,)),
    "output-schema missing on isError": Rule(P.OUTPUT_SCHEMA, exchange(tool_call(8, schema=SCHEMA),
                                                                       result(8, call_result(is_error=True))), ()),
    "output-schema no schema": Rule(P.OUTPUT_SCHEMA, exchange(tool_call(8), result(8, call_result({"n": "x"}))), ()),
    # version-negotiation.
    "version-negotiation -32022 with data.supported": Rule(P.VERSION_NEGOTIATION, exchange(Expectation(
        judge=P.VERSION_NEGOTIATION, id=9, parts=(VersionCheck(unsupported="2099-01-01"),)),
        error(9, -32022, data={"supported": [LATEST_MODERN]})), ()),
    "version-negotiation served anyway": Rule(P.VERSION_NEGOTIATION, exchange(Expectation(
        judge=P.VERSION_NEGOTIATION, id=9, parts=(VersionCheck(unsupported="2099-01-01"),)), result(9)), (MEDIUM,)),
    "version-negotiation the release candidate's code": Rule(P.VERSION_NEGOTIATION, exchange(Expectation(
        judge=P.VERSION_NEGOTIATION, id=9, parts=(VersionCheck(unsupported="2099-01-01"),)),
        error(9, -32004, data={"supported": [LATEST_MODERN]})), (LOW,)),
    "version-negotiation initialize echoes": Rule(P.VERSION_NEGOTIATION, exchange(Expectation(
        judge=P.VERSION_NEGOTIATION, id=9, parts=(VersionCheck(initialize="1999-01-01"),)),
        result(9, {"protocolVersion": "1999-01-01"})), (MEDIUM,)),
    "version-negotiation initialize refused": Rule(P.VERSION_NEGOTIATION, exchange(Expectation(
        judge=P.VERSION_NEGOTIATION, id=9, parts=(VersionCheck(initialize="1999-01-01"),)), error(9, -32602)),
        (MEDIUM,)),
    "version-negotiation refusal allowed": Rule(P.VERSION_NEGOTIATION, exchange(Expectation(
        judge=P.VERSION_NEGOTIATION, id=9, parts=(VersionCheck(initialize="1999-01-01", refusal_ok=True),)),
        error(9, -32602)), ()),
    "version-negotiation modern without discover": Rule(P.VERSION_NEGOTIATION, exchange(Expectation(
        judge=P.NO_HANG, id=1, parts=(VersionCheck(discover_failed=True),)), result(1, {
            "protocolVersion": LATEST_MODERN})), (MEDIUM,)),
    "version-negotiation bad supportedVersions": Rule(P.VERSION_NEGOTIATION, exchange(
        ex.result(1, "server/discover"), result(1, {"supportedVersions": []}), era=Era.MODERN), (MEDIUM,)),
    # resource-not-found: the era's code for a URI that does not exist.
    "resource-not-found legacy -32002": Rule(P.RESOURCE_NOT_FOUND, exchange(missing(7), error(7, -32002)), ()),
    "resource-not-found legacy other code is low": Rule(P.RESOURCE_NOT_FOUND, exchange(missing(7), error(
        7, -32603)), (LOW,)),
    "resource-not-found modern -32602": Rule(P.RESOURCE_NOT_FOUND, exchange(missing(7), error(7, -32602),
                                                                            era=Era.MODERN), ()),
    "resource-not-found modern -32002 is low": Rule(P.RESOURCE_NOT_FOUND, exchange(missing(7), error(7, -32002),
                                                                                   era=Era.MODERN), (LOW,)),
    "resource-not-found modern other code": Rule(P.RESOURCE_NOT_FOUND, exchange(missing(7), error(7, -32603),
                                                                                era=Era.MODERN), (MEDIUM,)),
    "resource-not-found modern empty contents": Rule(P.RESOURCE_NOT_FOUND, exchange(
        missing(7), result(7, {"contents": []}), era=Era.MODERN), (MEDIUM,)),
    "resource-not-found legacy empty contents": Rule(P.RESOURCE_NOT_FOUND, exchange(
        missing(7), result(7, {"contents": []})), ()),
    # declared-served: list methods of declared capabilities answer and end; listed resources read.
    "declared-served a page": Rule(P.DECLARED_SERVED, exchange(listing(3), result(3, {"prompts": [],
                                                                                      "nextCursor": "b"})), ()),
    "declared-served refused": Rule(P.DECLARED_SERVED, exchange(listing(3), error(3, -32601)), (HIGH,)),
    "declared-served served but failing (a backend away)": Rule(P.DECLARED_SERVED, exchange(listing(3), error(
        3, -32603, "connect ECONNREFUSED 127.0.0.1:5432")), ()),
    "declared-served templates/list missing": Rule(P.DECLARED_SERVED, exchange(Expectation(
        judge=P.DECLARED_SERVED, id=3, result_ok=True, error_ok=True, well_formed=True,
        method="resources/templates/list", parts=(ListingCheck("resources", 1, ()),)), error(3, -32601)), (MEDIUM,)),
    "declared-served later page refused (a stale cursor)": Rule(P.DECLARED_SERVED, exchange(
        listing(3, page=2, cursors=("a",)), error(3, -32602)), ()),
    "declared-served cursor loop": Rule(P.DECLARED_SERVED, exchange(listing(3, page=2, cursors=("a",)), result(
        3, {"prompts": [], "nextCursor": "a"})), (HIGH,)),
    "declared-served listed resource reads": Rule(P.DECLARED_SERVED, exchange(listed(4), result(4, {
        "contents": [{"uri": "mem://a", "text": "x"}]})), ()),
    "declared-served listed resource refused": Rule(P.DECLARED_SERVED, exchange(listed(4), error(4, -32002)),
                                                    (MEDIUM,)),
    "declared-served contents of another URI": Rule(P.DECLARED_SERVED, exchange(listed(4), result(4, {
        "contents": [{"uri": "mem://b", "text": "x"}]})), (MEDIUM,)),
    # response-schema on the surfaces: the specification's JSON schema of the version.
    "response-schema a good resources/read": Rule(P.RESPONSE_SCHEMA, exchange(listed(4), result(4, {
        "contents": [{"uri": "mem://a", "text": "x"}]})), ()),
    "response-schema resources/read without uri": Rule(P.RESPONSE_SCHEMA, exchange(listed(4), result(4, {
        "contents": [{"text": "x"}]})), (MEDIUM,)),
    "response-schema over 100 completion values": Rule(P.RESPONSE_SCHEMA, exchange(ex.any_answer(
        4, "completion/complete"), result(4, {"completion": {"values": ["v"] * 101}})), (MEDIUM,)),
    "response-schema modern read without cache hints": Rule(P.RESPONSE_SCHEMA, exchange(listed(4), result(4, {
        "contents": [], "resultType": "complete"}), era=Era.MODERN), (MEDIUM,)),
    # cancel-respected: the request, its cancel and a probe in one write; the probe's answer proves the cancel read.
    "cancel-respected not answered": Rule(P.CANCEL_RESPECTED, exchange(cancelled(), result(2)), ()),
    "cancel-respected answered before the probe (the race)": Rule(P.CANCEL_RESPECTED, exchange(
        cancelled(), result(1, {"tools": []}), result(2)), ()),
    "cancel-respected answered after the probe": Rule(P.CANCEL_RESPECTED, exchange(
        cancelled(), result(2), result(1, {"tools": []})), (LOW,)),
    # concurrency: requests in flight at once each get their own answer.
    "concurrency each its own": Rule(P.CONCURRENCY, exchange(at_once(), result(1, {"tools": []}), read(2, "a"),
                                                             read(3, "b")), ()),
    "concurrency reads swapped": Rule(P.CONCURRENCY, exchange(at_once(), result(1, {"tools": []}), read(2, "b"),
                                                              read(3, "a")), (HIGH,)),
    "concurrency a list answered with a read": Rule(P.CONCURRENCY, exchange(at_once(), read(1, "a"), read(2, "a"),
                                                                            read(3, "b")), (HIGH,)),
    "concurrency one lost": Rule(P.CONCURRENCY, exchange(at_once(), result(1, {"tools": []}), read(2, "a")), (HIGH,)),
    "concurrency answers equal to alone, _meta aside": Rule(P.CONCURRENCY, exchange(
        tools_at_once((text("A"), text("A")), (text("B"), text("B"))), result(1, text("A", at=1)),
        result(2, text("B", at=2))), ()),
    "concurrency tool answers swapped (each the other's answer alone)": Rule(P.CONCURRENCY, exchange(
        tools_at_once((text("A"), text("A")), (text("B"), text("B"))), result(1, text("B")), result(2, text("A"))),
        (HIGH,)),
    "concurrency one answer duplicated onto the other": Rule(P.CONCURRENCY, exchange(
        tools_at_once((text("A"), text("A")), (text("B"), text("B"))), result(1, text("A")), result(2, text("A"))),
        (HIGH,)),
    "concurrency answer alone not stable (before and after differ)": Rule(P.CONCURRENCY, exchange(
        tools_at_once((text("A"), text("A2")), (text("B"), text("B"))), result(1, text("B")), result(2, text("B"))),
        ()),
    "concurrency an answer no request gets alone (a state that changed)": Rule(P.CONCURRENCY, exchange(
        tools_at_once((text("A"), text("A")), (text("B"), text("B"))), result(1, text("C")), result(2, text("B"))),
        ()),
    "concurrency no answer alone (an error then)": Rule(P.CONCURRENCY, exchange(
        tools_at_once((None, None), (text("B"), text("B"))), result(1, text("B")), result(2, text("B"))), ()),
    "concurrency of calls that may change state: never compared with answers alone": Rule(P.CONCURRENCY, exchange(
        tools_at_once((text("A"), text("A")), (text("B"), text("B")), changes_state=True), result(1, text("B")),
        result(2, text("A"))), ()),
    "concurrency of calls that may change state: one lost": Rule(P.CONCURRENCY, exchange(
        tools_at_once((None, None), (None, None), changes_state=True), result(1, text("B"))), (HIGH,)),
    "slow-input past its limit": Rule(P.SLOW_INPUT, late(exchange(slow_call(1, 1.0), result(1, call_result())), 1.5),
                                      (LOW,)),
    "slow-input past 10 s is medium": Rule(P.SLOW_INPUT, late(exchange(slow_call(1, 1.0), result(1, call_result())),
                                                              12.0), (MEDIUM,)),
    "slow-input within its limit": Rule(P.SLOW_INPUT, late(exchange(slow_call(1, 1.0), result(1, call_result())),
                                                           0.5), ()),
    "slow-input no limit: never judged on time": Rule(P.SLOW_INPUT, late(exchange(
        tool_call(1), result(1, call_result())), 30.0), ()),
    "slow-input unanswered is no-hang's": Rule(P.SLOW_INPUT, exchange(slow_call(1, 1.0), barrier=False), ()),
    # invalid-params where the spec says SHOULD (prompts): another code is low.
    "invalid-params a prompt's missing argument, wrong code": Rule(P.INVALID_PARAMS, exchange(Expectation(
        judge=P.INVALID_PARAMS, id=5, codes=frozenset({-32602}), well_formed=True, method="prompts/get",
        wrong_answer="low"), error(5, -32603)), (LOW,)),
    # sandbox-escape and command-injection: canaries only --security plants, tied to this call.
    "sandbox-escape a sibling canary read": Rule(P.SANDBOX_ESCAPE, exchange(tool_call(5), result(5, text(
        "mcpfuzz-canary-sibling-0123456789abcdef\n"))), (HIGH,)),
    "sandbox-escape the workspace's own canary": Rule(P.SANDBOX_ESCAPE, exchange(tool_call(5), result(5, text(
        "mcpfuzz-canary-workspace-0123456789abcdef\n"))), ()),
    "sandbox-escape a token the run created inside the workspace": Rule(P.SANDBOX_ESCAPE, replace(exchange(
        tool_call(5), result(5, text("[DIR] mcpfuzz-canary-sibling-0123456789abcdef"))),
        canaries_echoed=("mcpfuzz-canary-sibling-0123456789abcdef",)), ()),
    "sandbox-escape another token than the one echoed": Rule(P.SANDBOX_ESCAPE, replace(exchange(
        tool_call(5), result(5, text("mcpfuzz-canary-parent-0123456789abcdef\n"))),
        canaries_echoed=("mcpfuzz-canary-sibling-0123456789abcdef",)), (HIGH,)),
    "sandbox-escape a token the call sent itself": Rule(P.SANDBOX_ESCAPE, exchange(tool_call(5), result(5, text(
        "mcpfuzz-canary-parent-0123456789abcdef")), frame=b'{"q":"mcpfuzz-canary-parent-0123456789abcdef"}'), ()),
    "command-injection the call's own hit file": Rule(P.COMMAND_INJECTION, replace(exchange(
        tool_call(5), result(5, text("hello")), frame=b'{"name":"$(touch /tmp/c/hit-0123456789abcdef)"}'),
        canary_files=("hit-0123456789abcdef",)), (HIGH,)),
    "command-injection another call's hit file": Rule(P.COMMAND_INJECTION, replace(exchange(
        tool_call(5), result(5, text("hello"))), canary_files=("hit-0123456789abcdef",)), ()),
    # Seen by the hook in the server (--observe, --security): what the call did, whatever it answered.
    "sandbox-escape a read outside seen": Rule(P.SANDBOX_ESCAPE, hooked(OUTSIDE_READ), (HIGH,)),
    "sandbox-escape a read inside seen": Rule(P.SANDBOX_ESCAPE, hooked(replace(OUTSIDE_READ, outside=False)), ()),
    "command-injection a shell line holding the input": Rule(P.COMMAND_INJECTION, hooked(
        SHELL_LINE, inputs=("x; touch /tmp/m",)), (HIGH,)),
    "command-injection a shell line without the input": Rule(P.COMMAND_INJECTION, hooked(
        SHELL_LINE, inputs=("hello",)), ()),
    "read-only-truthful a read-only tool's shell": Rule(P.READ_ONLY_TRUTHFUL, hooked(SHELL_LINE, read_only=True),
                                                        (MEDIUM,)),
    "network-egress a closed-world tool connects": Rule(P.NETWORK_EGRESS, hooked(CONNECTION), (MEDIUM,)),
    "network-egress an open-world tool connects": Rule(P.NETWORK_EGRESS, hooked(CONNECTION, open_world=True), ()),
    # client-requests: legacy, the call whose server asked for input is answered, whatever mcpfuzz answered.
    "client-requests dropped after a valid answer": Rule(P.CLIENT_REQUESTS, exchange(asking(1), ELICIT), (CRITICAL,)),
    "client-requests dropped after a bad answer": Rule(P.CLIENT_REQUESTS, exchange(
        asking(1, AnswerMode.WRONG_TYPES), ELICIT), (MEDIUM,)),
    "client-requests dropped after an oversized answer": Rule(P.CLIENT_REQUESTS, exchange(
        asking(1, AnswerMode.OVERSIZED), ELICIT), (LOW,)),
    "client-requests no answer given: waiting is allowed": Rule(P.CLIENT_REQUESTS, exchange(
        asking(1, AnswerMode.SILENCE), ELICIT), ()),
    "client-requests a bad answer turned into an error": Rule(P.CLIENT_REQUESTS, exchange(
        asking(1, AnswerMode.ERROR), ELICIT, result(1, call_result(is_error=True))), ()),
    "client-requests stuck server is no-hang's": Rule(P.CLIENT_REQUESTS, exchange(
        asking(1), ELICIT, barrier=False), ()),
    # input-required: 2026-07-28 retries after input_required.
    "input-required valid retry dropped": Rule(P.INPUT_REQUIRED, exchange(
        asking(1, retry=RetryKind.VALID), era=Era.MODERN), (CRITICAL,)),
    "input-required valid retry refused -32602": Rule(P.INPUT_REQUIRED, exchange(
        asking(1, retry=RetryKind.VALID), error(1, -32602), era=Era.MODERN), (MEDIUM,)),
    "input-required valid retry served": Rule(P.INPUT_REQUIRED, exchange(
        asking(1, retry=RetryKind.VALID), result(1, HELLO), era=Era.MODERN), ()),
    "input-required tampered state changes a successful result": Rule(P.INPUT_REQUIRED, exchange(
        asking(1, retry=RetryKind.EDITED_STATE, baseline=HELLO), result(1, OTHER), era=Era.MODERN), (MEDIUM,)),
    "input-required tampered state, same result: not provably used": Rule(P.INPUT_REQUIRED, exchange(
        asking(1, retry=RetryKind.FLIPPED_STATE, baseline=HELLO), result(1, HELLO), era=Era.MODERN), ()),
    "input-required tampered state rejected": Rule(P.INPUT_REQUIRED, exchange(
        asking(1, retry=RetryKind.FLIPPED_STATE, baseline=HELLO), error(1, -32602), era=Era.MODERN), ()),
    "input-required tampered state without a baseline": Rule(P.INPUT_REQUIRED, exchange(
        asking(1, retry=RetryKind.EDITED_STATE), result(1, OTHER), era=Era.MODERN), ()),
    "input-required broken retry refused": Rule(P.INPUT_REQUIRED, exchange(
        asking(1, retry=RetryKind.WRONG_KEYS), error(1, -32602), era=Era.MODERN), ()),
    # missing-capability: input asked only for declared capabilities.
    "missing-capability legacy request undeclared": Rule(P.MISSING_CAPABILITY, exchange(
        asking(1, declared=()), ELICIT, result(1, call_result())), (HIGH,)),
    "missing-capability legacy request declared": Rule(P.MISSING_CAPABILITY, exchange(
        asking(1), ELICIT, result(1, call_result())), ()),
    "missing-capability input_required undeclared": Rule(P.MISSING_CAPABILITY, exchange(
        asking(1, declared=()), result(1, ASKED), era=Era.MODERN), (HIGH,)),
    "missing-capability refused with -32021": Rule(P.MISSING_CAPABILITY, exchange(
        asking(1, declared=()), error(1, -32021), era=Era.MODERN), ()),
    # read-only-truthful, idempotent-retry: an observation stable before, changed after, and again each time resent.
    "read-only-truthful changed with each call": Rule(P.READ_ONLY_TRUTHFUL, exchange(
        observed(1, P.READ_ONLY_TRUTHFUL, names("a"), names("a"), names("b"), (names("b"), names("c")),
                 (names("c"), names("d"))), result(1, call_result())), (MEDIUM,)),
    "read-only-truthful changing by itself": Rule(P.READ_ONLY_TRUTHFUL, exchange(
        observed(1, P.READ_ONLY_TRUTHFUL, names("a"), names("b"), names("c"), (names("c"), names("d"))),
        result(1, call_result())), ()),
    "read-only-truthful changed once, not again": Rule(P.READ_ONLY_TRUTHFUL, exchange(
        observed(1, P.READ_ONLY_TRUTHFUL, names("a"), names("a"), names("b"), (names("b"), names("b"))),
        result(1, call_result())), ()),
    "idempotent-retry changed again": Rule(P.IDEMPOTENT_RETRY, exchange(
        observed(1, P.IDEMPOTENT_RETRY, names("t"), names("t"), names("t", "t"),
                 (names("t", "t"), names("t", "t", "t")), (names("t", "t", "t"), names("t", "t", "t", "t"))),
        result(1, call_result())), (MEDIUM,)),
    "idempotent-retry unchanged": Rule(P.IDEMPOTENT_RETRY, exchange(
        observed(1, P.IDEMPOTENT_RETRY, names("t"), names("t"), names("t")), result(1, call_result())), ()),
    # use-after-delete: a delete that answered success, and the item still returned.
    "use-after-delete still listed": Rule(P.USE_AFTER_DELETE, exchange(
        observed(1, P.USE_AFTER_DELETE, names("n3"), names("n3"), names("n3"), item="n3"),
        result(1, call_result())), (MEDIUM,)),
    "use-after-delete gone": Rule(P.USE_AFTER_DELETE, exchange(
        observed(1, P.USE_AFTER_DELETE, names("n3"), names("n3"), names(), item="n3"), result(1, call_result())), ()),
    "use-after-delete refused": Rule(P.USE_AFTER_DELETE, exchange(
        observed(1, P.USE_AFTER_DELETE, names("n3"), names("n3"), names("n3"), item="n3"),
        result(1, call_result(is_error=True))), ()),
    # task-ids: the tasks extension (2026-07-28) and 2025-11-25's experimental tasks.
    "task-ids unknown id refused -32602": Rule(P.TASK_IDS, exchange(
        tasked(1, UNKNOWN_GET, frozenset({-32602})), error(1, -32602), era=Era.MODERN), ()),
    "task-ids unknown id answered with another task": Rule(P.TASK_IDS, exchange(
        tasked(1, UNKNOWN_GET, frozenset({-32602})), result(1, TASK), era=Era.MODERN), (MEDIUM, HIGH)),
    "task-ids own id answered with another task": Rule(P.TASK_IDS, exchange(
        tasked(1, TaskCheck(TaskStep.GET, TaskIdKind.VALID, "t-2", ("t-1", "t-2"))), result(1, TASK),
        era=Era.MODERN), (HIGH,)),
    "task-ids 2025-11-25 cancelled task still working": Rule(P.TASK_IDS, exchange(
        tasked(1, AFTER_CANCEL), result(1, {k: v for k, v in TASK.items() if k != "resultType"})), (HIGH,)),
    "task-ids 2026-07-28 cancel is eventually consistent": Rule(P.TASK_IDS, exchange(
        tasked(1, AFTER_CANCEL), result(1, TASK), era=Era.MODERN), ()),
    "task-ids task for a client that did not declare the extension": Rule(P.TASK_IDS, exchange(
        tasked(1, TaskCheck(TaskStep.CALL_UNDECLARED)), result(1, {**TASK, "resultType": "task"}),
        era=Era.MODERN), (HIGH,)),
    "task-ids removed tasks/result served": Rule(P.TASK_IDS, exchange(
        tasked(1, TaskCheck(TaskStep.REMOVED, TaskIdKind.VALID, "t-1"), frozenset({-32601})),
        result(1, call_result()), era=Era.MODERN), (MEDIUM,)),
    "list-identity the same list": Rule(P.LIST_IDENTITY, exchange(identity(5, "a", "b"), result(5, tools("a", "b"))),
                                        ()),
    "list-identity a first page of the list": Rule(P.LIST_IDENTITY, exchange(identity(5, "a", "b", "c"), result(
        5, tools("a", more=True))), ()),
    "list-identity nothing to compare with": Rule(P.LIST_IDENTITY, exchange(identity(5).with_part(IdentityCheck(
        "tools", "name")), result(5, tools("x"))), ()),
    "list-identity refused": Rule(P.LIST_IDENTITY, exchange(identity(5, "a"), error(5, -32601)), ()),
    "list-identity another tool": Rule(P.LIST_IDENTITY, exchange(identity(5, "a", "b"), result(5, tools("a", "c"))),
                                       (HIGH,)),
    "list-identity an unknown tool on a first page": Rule(P.LIST_IDENTITY, exchange(identity(5, "a", "b"), result(
        5, tools("z", more=True))), (HIGH,)),
    "list-identity another order": Rule(P.LIST_IDENTITY, exchange(identity(5, "a", "b"), result(5, tools("b", "a"))),
                                        (LOW,)),
    "list-identity order not compared": Rule(P.LIST_IDENTITY, exchange(identity(5, "a", "b", ordered=False), result(
        5, tools("b", "a"))), ()),
}


def severities(rule: Rule) -> tuple[Severity, ...]:
    """What the rule's oracle reports on its exchange."""
    return tuple(failure.severity for failure in run_checks(rule.exchange, [rule.oracle.value]))


@pytest.mark.parametrize("name", sorted(RULES))
def test_oracle_rule(name: str) -> None:
    """Each rule: the oracle fires at the listed severities, or stays silent."""
    rule = RULES[name]
    assert severities(rule) == rule.severities


def test_every_exchange_oracle_has_rules_that_fire_and_rules_that_stay_silent() -> None:
    """No oracle that judges exchanges goes untested, in either direction."""
    exchange_level = {o.id for o in all_oracles().values() if o.scope & Scope.EXCHANGE}
    fires = {rule.oracle.value for rule in RULES.values() if rule.severities}
    silent = {rule.oracle.value for rule in RULES.values() if not rule.severities}
    assert fires == silent == exchange_level


def test_no_oracle_reports_above_its_registered_severity() -> None:
    """The registered severity is the worst an oracle reports (SARIF's default level, docs/oracles.md's table)."""
    oracles = all_oracles()
    for name, rule in RULES.items():
        for failure in run_checks(rule.exchange, list(oracles)):
            assert failure.severity <= oracles[failure.oracle].severity, (name, failure.oracle, failure.message)


def test_a_crash_silences_every_oracle_but_no_crash() -> None:
    """One finding per crash: the other oracles do not judge what a dying server wrote."""
    dying = exchange(ex.result(1, "ping"), result("1"), b"noise", crash=ProcessEnd(-9, ""))
    failures = list(run_checks(dying, list(all_oracles())))
    assert [(f.oracle, f.severity) for f in failures] == [("no-crash", CRITICAL)]
    assert "killed by SIGKILL" in failures[0].message and "stderr was empty" in failures[0].message


Verdict = tuple[str, Severity, str, str, bool]


def in_full(exchange: Exchange, selected: Sequence[str]) -> list[Verdict]:
    """Every selected oracle's verdicts with no shortcut but the crash rule: what the plain-answer path must match."""
    oracles = all_oracles()
    found: list[Verdict] = []
    for oracle_id in selected:
        check = oracles[oracle_id].check
        if check is not None and (exchange.crash is None or oracle_id == OracleId.NO_CRASH):
            found += [(f.oracle, f.severity, f.key, f.message, f.server_wide) for f in check(exchange)]
    return found


def as_run(exchange: Exchange, selected: Sequence[str]) -> list[Verdict]:
    """The verdicts as a run gets them (a plain answer skips the oracles quiet on one)."""
    return [(f.oracle, f.severity, f.key, f.message, f.server_wide) for f in run_checks(exchange, tuple(selected))]


def test_the_plain_answer_path_gives_every_rules_verdicts() -> None:
    """On every hand-built exchange, skipping the oracles quiet on a plain answer changes no verdict."""
    every = list(all_oracles())
    plain = [name for name, rule in RULES.items() if plain_answer(rule.exchange)]
    assert len(plain) >= 20  # the shortcut is taken on many rules, so this test can fail
    for name, rule in RULES.items():
        assert as_run(rule.exchange, every) == in_full(rule.exchange, every), name


# Requests whose single answer may be plain, and answers of every kind to them (the id is 1 throughout).
PLAIN_REQUESTS = [
    ex.result(1, "ping"), ex.result(1, "tools/list"), ex.result(1, "initialize"), ex.result(1, "server/discover"),
    ex.result(1, "resources/read", error_ok=True), ex.result(1, "prompts/get"), ex.any_answer(1, "tools/call"),
    tool_call(1), tool_call(1, valid=False), tool_call(1, schema=SCHEMA), tool_call(1, unicode_unsafe=True),
    ex.invalid_params(1), ex.method_not_found(1), ex.invalid_request(1), ex.invalid_request(1, null_id_ok=True),
    Expectation(judge=P.VERSION_NEGOTIATION, id=1, parts=(VersionCheck(unsupported="2099-01-01"),)),
    Expectation(judge=P.VERSION_NEGOTIATION, id=1, method="initialize", result_ok=True, well_formed=True,
                parts=(VersionCheck(initialize="1999-01-01"),)),
    # Not plain (a listing, a resource, cancellation, concurrency): the full path, compared all the same.
    listing(1), missing(1), listed(1), cancelled(), at_once(),
]
PLAIN_REPLIES: list[Any] = [
    result(1), result(1, call_result()), result(1, call_result(is_error=True)), result(1, call_result({"n": 1})),
    result(1, call_result({"n": "x"})), result(1, {"content": "not a list"}), result(1, []),
    result(1, {"protocolVersion": "1999-01-01", "capabilities": {}, "serverInfo": {"name": "s", "version": "1"}}),
    result(1, {"supportedVersions": []}), result(1, {"contents": []}), result(1, {"resultType": "complete"}),
    result(1, text('Traceback (most recent call last):\n  File "/srv/app.py", line 3', isError=True)),
    result(1, {**call_result(is_error=True), "content": [{"type": "text", "text": "at /srv/tool/app.py line 3"}]}),
    error(1, -32602), error(1, -32601), error(1, -32600), error(1, -32700), error(1, -32603), error(1, -32002),
    error(1, -32022, data={"supported": ["2025-06-18"]}), error(1, -32022),
    error(1, -32603, 'Traceback (most recent call last):\n  File "/srv/app.py", line 3, in run'),
    error(1, -32603, "failed", data={"file": "/srv/app/main.py"}),
    {"jsonrpc": "2.0", "id": 1}, {"jsonrpc": "1.0", "id": 1, "result": {}}, {"id": 1, "result": {}},
    {"jsonrpc": "2.0", "id": 1, "result": {}, "error": {"code": -32603, "message": "both"}},
    {"jsonrpc": "2.0", "id": 1, "error": {"code": "x", "message": 5}},
    b'{"jsonrpc":"2.0","id":1,"result":{"v":NaN}}',
]


@pytest.mark.parametrize("era", [Era.LEGACY, Era.MODERN])
@pytest.mark.parametrize("barrier", [True, None])
def test_plain_answers_of_every_kind_get_the_full_paths_verdicts(era: Era, barrier: bool | None) -> None:
    """Every request above answered once by every reply above: the plain path and the full path agree, and the
    oracles registered quiet on a plain answer say nothing on any plain one."""
    every = list(all_oracles())
    quiet = [oracle.id for oracle in all_oracles().values() if oracle.quiet_on_plain]
    plain = found = 0
    for expect in PLAIN_REQUESTS:
        for reply in PLAIN_REPLIES:
            built = exchange(expect, reply, era=era, barrier=barrier)
            verdicts = as_run(built, every)
            assert verdicts == in_full(built, every), (expect, reply)
            if plain_answer(built):
                plain += 1
                found += bool(verdicts)
                assert in_full(built, quiet) == [], (expect, reply)
    assert plain >= 300 and found >= 100  # most are plain, and many plain ones still fail an answer oracle


def test_what_is_not_a_plain_answer() -> None:
    """Anything but one answer with the case's own id to a request of the case takes the full path."""
    assert plain_answer(exchange(ex.result(1, "ping"), result(1)))
    assert plain_answer(exchange(ex.result(1, "ping"), error(1, -32601)))
    assert not plain_answer(exchange(ex.result(1, "ping")))  # silence
    assert not plain_answer(exchange(ex.result(1, "ping"), result(1), result(1)))  # twice
    assert not plain_answer(exchange(ex.result(1, "ping"), result(2)))  # a stranger's id
    assert not plain_answer(exchange(ex.result(1, "ping"), result(None)))
    assert not plain_answer(exchange(ex.result(1, "ping"), result(1), b"noise"))
    assert not plain_answer(exchange(ex.result(1, "ping"), {"jsonrpc": "2.0", "method": "notifications/message"},
                                     result(1)))
    assert not plain_answer(exchange(ex.result(1, "ping"), result(1), barrier=False))
    assert not plain_answer(exchange(ex.result(1, "ping"), result(1), write_error="broken pipe"))
    assert not plain_answer(exchange(ex.result(1, "ping"), result(1), http=http(200)))
    assert not plain_answer(exchange(ex.result(1, "ping"), result(1), crash=ProcessEnd(1, "")))
    assert not plain_answer(exchange(ex.no_reply(), result(1)))
    assert not plain_answer(exchange(listing(1), result(1, {"prompts": []})))
    assert not plain_answer(exchange(missing(1), error(1, -32002)))
    assert not plain_answer(exchange(cancelled(), result(1), result(2)))


class Sample:
    """One RSS sample of a series."""

    def __init__(self, t: float, requests: int, rss: float) -> None:
        self.t, self.requests, self.rss = t, requests, int(rss)


def rss_series(per_request: float, *, samples: int = 40, per: int = 50) -> list[Sample]:
    """`samples` samples, `per` requests apart, the RSS rising by `per_request` bytes a request (a sawtooth added)."""
    return [Sample(i * 0.5, i * per, 40 * MIB + i * per * per_request + (i % 3) * 64 * KIB) for i in range(samples)]


def test_memory_growth_on_its_series() -> None:
    """memory-growth (run-level): a steady rise is a leak reported high; flat memory is not."""
    growth = judge_growth(rss_series(100 * KIB))
    assert growth is not None
    failure = MemoryGrowthFailure(growth)
    assert (failure.oracle, failure.severity, failure.server_wide) == ("memory-growth", HIGH, True)
    assert judge_growth(rss_series(0)) is None
    assert judge_growth(rss_series(100 * KIB, samples=8)) is None  # too short to judge


def test_session_pileup_on_its_series() -> None:
    """session-leak's run-level part: refusals that pile up memory are reported medium, under session-leak."""
    growth = judge_growth(rss_series(32 * KIB, samples=60, per=10), PILEUP_LIMITS)
    assert growth is not None
    failure = SessionPileupFailure(600, growth)
    assert (failure.oracle, failure.severity, failure.key) == ("session-leak", MEDIUM, "pileup")
    assert failure.severity <= all_oracles()["session-leak"].severity
    assert failure.message.startswith("600 refused requests")
    assert judge_growth(rss_series(0, samples=60, per=10), PILEUP_LIMITS) is None
