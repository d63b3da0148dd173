"""Cases and frames as JSON, for corpus transcripts that replay exactly what was sent."""

from __future__ import annotations

from typing import Any

from mcpfuzz.jsonrpc.expectation import Expectation
from mcpfuzz.jsonrpc.frame import Case, Posting
from mcpfuzz.jsonrpc.ids import ABSENT
from mcpfuzz.jsonrpc.parts.registry import registered_parts
from mcpfuzz.jsonrpc.versions import Era

_ABSENT_MARK = {"$absent": True}


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


# The members of `extra` in the order earlier versions wrote them, so a transcript read and written again is the
# same text; a newer part's members follow them.
_EXTRA_ORDER = ("tool", "arguments", "rule", "output_schema", "result_schema", "declared_errors", "lenient",
                "unicode_unsafe", "is_error_result_ok", "quiet_ok", "past_limit", "http_status", "http_severity",
                "codes", "http_served_ok", "initialize_version", "refusal_ok", "unsupported_version",
                "discover_failed", "listing", "resource", "cancel", "concurrent", "concurrent_changes_state",
                "client", "task", "identity", "wrong_answer", "slow_after", "state")


def _extra_to_json(expect: Expectation) -> dict[str, Any]:
    """The parts as the free `extra` dict of earlier transcripts, key for key and in order."""
    extra: dict[str, Any] = {}
    for part in expect.parts:
        extra.update(part.to_extra())
    if expect.wrong_answer != "medium":
        extra["wrong_answer"] = expect.wrong_answer
    rank = {name: index for index, name in enumerate(_EXTRA_ORDER)}
    return dict(sorted(extra.items(), key=lambda item: rank.get(item[0], len(rank))))


def expectation_from_json(data: Any) -> Expectation:
    """The expectation written by `expectation_to_json` (or by an earlier version: unknown members are ignored)."""
    if not isinstance(data, dict) or not isinstance(data.get("judge"), str):
        raise CaseFormatError("the expectation needs at least a string `judge`")
    raw_extra = data.get("extra")
    extra: dict[str, Any] = raw_extra if isinstance(raw_extra, dict) else {}
    values = {name: _unvalue(data[name]) for name in _PLAIN if name in data}
    try:
        parts = tuple(part for kind in registered_parts() if (part := kind.from_extra(extra)) is not None)
        return Expectation(**values, codes=frozenset(data.get("codes") or ()),
                           batch_ids=tuple(_unvalue(v) for v in data.get("batch_ids") or ()),
                           wrong_answer=extra.get("wrong_answer", "medium"), parts=parts)
    except (TypeError, ValueError) as error:
        raise CaseFormatError(f"the expectation cannot be read: {error}") from None


# Members copied as they are; `codes`, `batch_ids` and `extra` are converted.
_PLAIN = ("judge", "reply", "id", "id_recoverable", "error_ok", "result_ok", "null_id_ok", "well_formed", "method",
          "note")


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
