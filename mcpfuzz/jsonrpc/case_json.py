"""Cases and frames as JSON, for corpus transcripts that replay exactly what was sent."""

from __future__ import annotations

from typing import Any

from mcpfuzz.jsonrpc.client_check import AnswerMode, ClientCheck, RetryKind
from mcpfuzz.jsonrpc.expectation import (
    CancelCheck,
    ConcurrencyCheck,
    Expectation,
    HttpRule,
    IdentityCheck,
    ListingCheck,
    ReaderLimit,
    ResourceCheck,
    StateCheck,
    ToolCallCheck,
    VersionCheck,
)
from mcpfuzz.jsonrpc.frame import Case, Posting
from mcpfuzz.jsonrpc.ids import ABSENT
from mcpfuzz.jsonrpc.oracle_ids import OracleId
from mcpfuzz.jsonrpc.task_check import TaskCheck, TaskIdKind, TaskStep
from mcpfuzz.jsonrpc.versions import Era

_ABSENT_MARK = {"$absent": True}
# How `extra.arguments` names valid and invalid tool arguments (the strategies' `ArgumentCall.kind`).
POSITIVE, NEGATIVE = "positive", "negative"


class CaseFormatError(ValueError):
    """A transcript's case or frames cannot be read back."""


def frame_to_json(frame: bytes) -> Any:
    """A frame as JSON: its text when it is UTF-8, else {"hex": ...}."""
    try:
        return frame.decode("utf-8")
    except UnicodeDecodeError:
        return {"hex": frame.hex()}


def frame_from_json(value: Any) -> bytes:
    """The exact bytes of a frame written by `frame_to_json`."""
    if isinstance(value, str):
        return value.encode("utf-8", "surrogatepass")
    if isinstance(value, dict) and isinstance(value.get("hex"), str):
        try:
            return bytes.fromhex(value["hex"])
        except ValueError:
            raise CaseFormatError(f"frame {value['hex'][:40]!r}... is not valid hex") from None
    raise CaseFormatError(f"a frame must be a string or {{\"hex\": ...}}, not {type(value).__name__}")


def _value(value: Any) -> Any:
    return _ABSENT_MARK if value is ABSENT else value


def _unvalue(value: Any) -> Any:
    return ABSENT if value == _ABSENT_MARK else value


def expectation_to_json(expect: Expectation) -> dict:
    """Every field of an expectation, JSON-ready, in the transcript's shape (the oracles' parts in `extra`)."""
    return {
        "judge": expect.judge.value, "reply": expect.reply, "id": _value(expect.id),
        "id_recoverable": expect.id_recoverable, "codes": sorted(expect.codes), "error_ok": expect.error_ok,
        "result_ok": expect.result_ok, "null_id_ok": expect.null_id_ok, "well_formed": expect.well_formed,
        "method": expect.method, "batch_ids": [_value(v) for v in expect.batch_ids],
        # Never set any more, still written: transcripts keep the shape earlier versions wrote and read.
        "batch_replies_ok": False,
        "note": expect.note, "extra": _extra_to_json(expect),
    }


def _extra_to_json(expect: Expectation) -> dict[str, Any]:
    """The oracle-specific parts as the free `extra` dict of earlier transcripts, key for key and in order."""
    extra: dict[str, Any] = {}
    call = expect.tool_call
    if call is not None:
        extra.update(tool=call.tool, arguments=POSITIVE if call.valid else NEGATIVE, rule=call.rule,
                     output_schema=None if call.output_schema is None else dict(call.output_schema))
        if call.result_schema is not None:
            extra["result_schema"] = dict(call.result_schema)
        if call.declared_errors is not None:
            extra["declared_errors"] = list(call.declared_errors)
    if expect.lenient:
        extra["lenient"] = True
    if call is not None and call.unicode_unsafe:
        extra["unicode_unsafe"] = True
    if expect.is_error_result_ok:
        extra["is_error_result_ok"] = True
    if expect.quiet_ok:
        extra["quiet_ok"] = True
    if expect.past_limit is not None:
        extra["past_limit"] = expect.past_limit.value
    if expect.http is not None:
        extra.update(http_status=list(expect.http.statuses), http_severity=expect.http.severity)
        if expect.http.codes:
            extra["codes"] = list(expect.http.codes)
        if expect.http.served_ok:
            extra["http_served_ok"] = True
    versions = expect.versions
    if versions is not None:
        if versions.initialize is not None:
            extra.update(initialize_version=versions.initialize, refusal_ok=versions.refusal_ok)
        if versions.unsupported is not None:
            extra["unsupported_version"] = versions.unsupported
        if versions.discover_failed:
            extra["discover_failed"] = True
    if expect.listing is not None:
        extra["listing"] = {"capability": expect.listing.capability, "page": expect.listing.page,
                            "cursors": list(expect.listing.cursors)}
    if expect.resource is not None:
        extra["resource"] = {"uri": expect.resource.uri, "listed": expect.resource.listed,
                             "missing": expect.resource.missing}
    if expect.cancel is not None:
        extra["cancel"] = {"request": expect.cancel.request, "probe": expect.cancel.probe}
        if expect.cancel.running is not None:
            extra["cancel"].update(running=expect.cancel.running, pause=expect.cancel.pause,
                                   latency=expect.cancel.latency)
    if expect.concurrent is not None:
        extra["concurrent"] = [list(request) for request in expect.concurrent.requests]
        if expect.concurrent.changes_state:
            extra["concurrent_changes_state"] = True
    if expect.client is not None:
        client = expect.client
        extra["client"] = {"mode": client.mode.value, "declared": list(client.declared)}
        if client.retry is not None:
            extra["client"].update(retry=client.retry.value, baseline=client.baseline)
    if expect.task is not None:
        task = expect.task
        extra["task"] = {"step": task.step.value, "kind": task.kind.value, "task_id": task.task_id,
                         "known": list(task.known), "cancel_acked": task.cancel_acked,
                         "seen_cancelled": task.seen_cancelled, "method": task.method, "stale_keys": task.stale_keys}
    if expect.identity is not None:
        extra["identity"] = {"list_key": expect.identity.list_key, "name_key": expect.identity.name_key,
                             "ordered": expect.identity.ordered}
    if expect.wrong_answer != "medium":
        extra["wrong_answer"] = expect.wrong_answer
    if expect.slow_after is not None:
        extra["slow_after"] = expect.slow_after
    if expect.state is not None:
        extra["state"] = {"judge": expect.state.judge.value, "item": expect.state.item,
                          "observe": [[method, params] for method, params in expect.state.observe]}
    return extra


def expectation_from_json(data: Any) -> Expectation:
    """The expectation written by `expectation_to_json` (or by an earlier version: unknown members are ignored)."""
    if not isinstance(data, dict) or not isinstance(data.get("judge"), str):
        raise CaseFormatError("the expectation needs at least a string `judge`")
    raw_extra = data.get("extra")
    extra: dict[str, Any] = raw_extra if isinstance(raw_extra, dict) else {}
    values = {name: _unvalue(data[name]) for name in _PLAIN if name in data}
    try:
        return Expectation(
            **values, codes=frozenset(data.get("codes") or ()),
            batch_ids=tuple(_unvalue(v) for v in data.get("batch_ids") or ()),
            lenient=bool(extra.get("lenient")), quiet_ok=bool(extra.get("quiet_ok")),
            is_error_result_ok=bool(extra.get("is_error_result_ok")),
            past_limit=ReaderLimit(extra["past_limit"]) if extra.get("past_limit") else None,
            http=_http_rule(extra), versions=_version_check(extra), tool_call=_tool_call(extra),
            listing=_listing(extra), resource=_resource(extra), cancel=_cancel(extra),
            concurrent=_concurrent(extra), client=_client(extra), task=_task(extra), identity=_identity(extra),
            wrong_answer=extra.get("wrong_answer", "medium"), slow_after=_seconds(extra.get("slow_after")),
            state=_state(extra))
    except (TypeError, ValueError) as error:
        raise CaseFormatError(f"the expectation cannot be read: {error}") from None


# Members copied as they are; `codes`, `batch_ids` and `extra` are converted.
_PLAIN = ("judge", "reply", "id", "id_recoverable", "error_ok", "result_ok", "null_id_ok", "well_formed", "method",
          "note")


def _http_rule(extra: dict) -> HttpRule | None:
    if "http_status" not in extra:
        return None
    return HttpRule(tuple(extra["http_status"] or ()), extra.get("http_severity", "medium"),
                    tuple(extra.get("codes") or ()), served_ok=bool(extra.get("http_served_ok")))


def _version_check(extra: dict) -> VersionCheck | None:
    if not {"initialize_version", "unsupported_version", "discover_failed"} & set(extra):
        return None
    return VersionCheck(unsupported=extra.get("unsupported_version"), initialize=extra.get("initialize_version"),
                        refusal_ok=bool(extra.get("refusal_ok")), discover_failed=bool(extra.get("discover_failed")))


def _tool_call(extra: dict) -> ToolCallCheck | None:
    if not {"tool", "arguments", "output_schema"} & set(extra):
        return None
    schema = extra.get("output_schema")
    result_schema = extra.get("result_schema")
    declared = extra.get("declared_errors")
    tool = extra.get("tool")
    return ToolCallCheck(tool=tool if isinstance(tool, str) else None, valid=extra.get("arguments") == POSITIVE,
                         rule=str(extra.get("rule") or ""), output_schema=schema if isinstance(schema, dict) else None,
                         unicode_unsafe=bool(extra.get("unicode_unsafe")),
                         result_schema=result_schema if isinstance(result_schema, dict) else None,
                         declared_errors=tuple(c for c in declared if isinstance(c, int)) if isinstance(
                             declared, list) else None)


def _listing(extra: dict) -> ListingCheck | None:
    part = extra.get("listing")
    if not isinstance(part, dict):
        return None
    return ListingCheck(str(part.get("capability", "")), int(part.get("page") or 1),
                        tuple(str(cursor) for cursor in part.get("cursors") or ()))


def _identity(extra: dict) -> IdentityCheck | None:
    part = extra.get("identity")
    if not isinstance(part, dict) or not isinstance(part.get("list_key"), str):
        return None
    return IdentityCheck(part["list_key"], str(part.get("name_key") or "name"), bool(part.get("ordered")))


def _resource(extra: dict) -> ResourceCheck | None:
    part = extra.get("resource")
    if not isinstance(part, dict) or not isinstance(part.get("uri"), str):
        return None
    return ResourceCheck(part["uri"], listed=bool(part.get("listed")), missing=bool(part.get("missing")))


def _cancel(extra: dict) -> CancelCheck | None:
    part = extra.get("cancel")
    if not isinstance(part, dict) or not isinstance(part.get("request"), int) or not isinstance(part.get("probe"), int):
        return None
    running = part.get("running")
    pause, latency = part.get("pause", 0.0), part.get("latency", 0.0)
    if not isinstance(running, int) or not isinstance(pause, int | float) or not isinstance(latency, int | float):
        return CancelCheck(part["request"], part["probe"])
    return CancelCheck(part["request"], part["probe"], running, float(pause), float(latency))


def _concurrent(extra: dict) -> ConcurrencyCheck | None:
    part = extra.get("concurrent")
    if not isinstance(part, list):
        return None
    return ConcurrencyCheck(tuple((int(rid), str(method), str(uri)) for rid, method, uri in part),
                            changes_state=extra.get("concurrent_changes_state") is True)


def _state(extra: dict) -> StateCheck | None:
    part = extra.get("state")
    if not isinstance(part, dict) or not isinstance(part.get("observe"), list):
        return None
    return StateCheck(OracleId(part["judge"]), tuple((str(method), params) for method, params in part["observe"]),
                      str(part.get("item") or ""))


def _client(extra: dict) -> ClientCheck | None:
    part = extra.get("client")
    if not isinstance(part, dict):
        return None
    retry = part.get("retry")
    return ClientCheck(AnswerMode(part.get("mode", AnswerMode.ACCEPT.value)),
                       tuple(str(name) for name in part.get("declared") or ()),
                       RetryKind(retry) if isinstance(retry, str) else None, part.get("baseline"))


def _task(extra: dict) -> TaskCheck | None:
    part = extra.get("task")
    if not isinstance(part, dict):
        return None
    return TaskCheck(TaskStep(part.get("step")), TaskIdKind(part.get("kind", TaskIdKind.VALID.value)),
                     part.get("task_id"), tuple(str(known) for known in part.get("known") or ()),
                     bool(part.get("cancel_acked")), bool(part.get("seen_cancelled")), str(part.get("method") or ""),
                     bool(part.get("stale_keys")))


def case_to_json(case: Case) -> dict:
    """A case's identity, flags and expectation (its frames are stored beside it)."""
    data = {"id": case.id, "family": case.family, "title": case.title, "fresh": case.fresh,
            "patient": case.patient, "era": case.era.value if case.era else None,
            "expect": expectation_to_json(case.expect),
            "http_headers": [[name, value] for name, value in case.http_headers]}
    if case.posts is not Posting.ONE:
        data["posts"] = case.posts.value
    if case.slow_ok != _slow_ok(data, case.expect):
        data["slow_ok"] = case.slow_ok  # only where it differs from what an earlier reader would assume
    return data


def case_from_json(data: Any, frames: list[bytes]) -> Case:
    """A replayable case: the last frame is judged, every frame before it is sent first (unjudged)."""
    if not isinstance(data, dict) or not frames:
        raise CaseFormatError("a transcript needs a `case` object and at least one frame")
    era = data.get("era")
    raw_headers = data.get("http_headers")
    headers: list[Any] = raw_headers if isinstance(raw_headers, list) else []
    http_headers = tuple((str(pair[0]), None if pair[1] is None else str(pair[1])) for pair in headers
                         if isinstance(pair, list) and len(pair) == 2)
    try:
        expect = expectation_from_json(data.get("expect"))
        return Case(str(data.get("id", "replay")), str(data.get("family", "corpus")), str(data.get("title", "")),
                    frames[-1], expect, setup=tuple(frames[:-1]), fresh=True,
                    patient=bool(data.get("patient")), slow_ok=_slow_ok(data, expect),
                    era=Era(era) if era else None, http_headers=http_headers,
                    posts=Posting(data.get("posts", Posting.ONE.value)))
    except ValueError as error:
        raise CaseFormatError(str(error)) from None


def _slow_ok(data: dict, expect: Expectation) -> bool:
    """A transcript's `slow_ok`; transcripts written before it existed: a patient tools/call."""
    if "slow_ok" in data:
        return bool(data["slow_ok"])
    return bool(data.get("patient")) and expect.method == "tools/call"


def _seconds(value: Any) -> float | None:
    """A positive number of seconds, or None."""
    is_number = isinstance(value, (int, float)) and not isinstance(value, bool)
    return float(value) if is_number and value > 0 else None
