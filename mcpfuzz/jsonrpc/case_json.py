"""Cases and frames as JSON, for corpus transcripts that replay exactly what was sent."""

from __future__ import annotations

from dataclasses import fields
from typing import Any

from mcpfuzz.jsonrpc.expectation import Expectation
from mcpfuzz.jsonrpc.frame import Case
from mcpfuzz.jsonrpc.ids import ABSENT
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
    """Every field of an expectation, JSON-ready."""
    out: dict[str, Any] = {}
    for item in fields(Expectation):
        value = getattr(expect, item.name)
        if item.name == "codes":
            value = sorted(value)
        elif item.name == "batch_ids":
            value = [_value(v) for v in value]
        out[item.name] = _value(value)
    return out


def expectation_from_json(data: Any) -> Expectation:
    """The expectation written by `expectation_to_json`."""
    if not isinstance(data, dict) or not isinstance(data.get("judge"), str):
        raise CaseFormatError("the expectation needs at least a string `judge`")
    known = {item.name for item in fields(Expectation)}
    values = {name: _unvalue(value) for name, value in data.items() if name in known}
    values["codes"] = frozenset(values.get("codes") or ())
    values["batch_ids"] = tuple(_unvalue(v) for v in values.get("batch_ids") or ())
    values["extra"] = dict(values.get("extra") or {})
    try:
        return Expectation(**values)
    except TypeError as error:
        raise CaseFormatError(f"the expectation cannot be read: {error}") from None


def case_to_json(case: Case) -> dict:
    """A case's identity, flags and expectation (its frames are stored beside it)."""
    return {"id": case.id, "family": case.family, "title": case.title, "fresh": case.fresh,
            "patient": case.patient, "era": case.era.value if case.era else None,
            "expect": expectation_to_json(case.expect),
            "http_headers": [[name, value] for name, value in case.http_headers]}


def case_from_json(data: Any, frames: list[bytes]) -> Case:
    """A replayable case: the last frame is judged, every frame before it is sent first (unjudged)."""
    if not isinstance(data, dict) or not frames:
        raise CaseFormatError("a transcript needs a `case` object and at least one frame")
    era = data.get("era")
    headers = data.get("http_headers") if isinstance(data.get("http_headers"), list) else []
    http_headers = tuple((str(pair[0]), None if pair[1] is None else str(pair[1])) for pair in headers
                         if isinstance(pair, list) and len(pair) == 2)
    try:
        return Case(str(data.get("id", "replay")), str(data.get("family", "corpus")), str(data.get("title", "")),
                    frames[-1], expectation_from_json(data.get("expect")), setup=tuple(frames[:-1]), fresh=True,
                    patient=bool(data.get("patient")), era=Era(era) if era else None, http_headers=http_headers)
    except ValueError as error:
        raise CaseFormatError(str(error)) from None
