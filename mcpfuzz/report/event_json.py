"""Events as JSON objects for `--events`: the type name, the timestamp, the fields (summaries where whole is large)."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import fields, is_dataclass, replace
from enum import Enum
from pathlib import Path
from typing import Any

from mcpfuzz.engine.config import RunConfig
from mcpfuzz.engine.events import CaseDone, CheckpointSaved, Event, Finding, FindingFound, RunFinished, Stats
from mcpfuzz.jsonrpc.case_json import frame_to_json
from mcpfuzz.report.json_report import finding_json, report_json


def event_json(event: Event, config: RunConfig) -> dict[str, Any]:
    """One event as a JSON-ready object; `config` gives what the JSON report's parts need (seed, server)."""
    data: dict[str, Any] = {"event": type(event).__name__, "timestamp": round(event.timestamp, 6)}
    if isinstance(event, CaseDone):
        case = event.exchange.case
        data.update(phase=event.phase, case={"id": case.id, "family": case.family, "title": case.title,
                                             "target": case.target},
                    findings=[finding.fingerprint for finding in event.findings])
    elif isinstance(event, FindingFound):
        data["finding"] = finding_json(event.finding, config.target)
    elif isinstance(event, RunFinished):
        data.update(summary_json(event, config))
    elif isinstance(event, CheckpointSaved):
        data.update(path=event.path, **summary_json(event.finished, config))
    else:
        data.update({item.name: getattr(event, item.name) for item in fields(event) if item.name != "timestamp"})
    return plain(data)


def summary_json(finished: RunFinished, config: RunConfig) -> dict[str, Any]:
    """The JSON report's top level, with `findings` as fingerprints (each finding had its own FindingFound)."""
    summary = report_json(config, replace(finished, findings=()))
    summary["findings"] = [finding.fingerprint for finding in finished.findings]
    return summary


def plain(value: Any) -> Any:
    """A value JSON can carry as it is: enums as their value, tuples as lists, frames as in the report."""
    if isinstance(value, Enum):
        return plain(value.value)
    if value is None or isinstance(value, (str, bool, int)):
        return value
    if isinstance(value, float):
        # A server's capabilities may hold NaN (Python's parser accepts it); strict JSON readers do not.
        return value if math.isfinite(value) else str(value)
    if isinstance(value, bytes):
        return frame_to_json(value)
    if isinstance(value, Mapping):
        return {str(plain(key)): plain(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain(item) for item in value]
    if isinstance(value, Finding):
        return value.fingerprint
    if isinstance(value, Stats):
        return plain(value.as_dict())
    if is_dataclass(value) and not isinstance(value, type):
        return {item.name: plain(getattr(value, item.name)) for item in fields(value)}
    if isinstance(value, Path):
        return str(value)
    return str(value)
