"""`mcpfuzz snapshot --check`: the changes as a readable diff per item, JSON, SARIF 2.1.0 and JUnit XML."""

from __future__ import annotations

import hashlib
import json
import xml.etree.ElementTree as ET
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mcpfuzz.engine.snapshot.changes import MISSING, Change, ChangeKind, Impact
from mcpfuzz.engine.snapshot.surface import KIND_OF_SECTION
from mcpfuzz.report.junit import xml_text
from mcpfuzz.report.sarif import SARIF_SCHEMA, SARIF_VERSION, artifact_location, information_uri

# What fails the check at each --fail-on: the lowest impact that counts.
FAIL_ON = {"breaking": Impact.BREAKING, "compatible": Impact.COMPATIBLE, "any": Impact.COSMETIC}
SARIF_LEVELS = {Impact.BREAKING: "error", Impact.COMPATIBLE: "warning", Impact.COSMETIC: "note"}
VALUE_WIDTH = 160


@dataclass(frozen=True)
class CheckResult:
    """A check's changes, against which file and server, and the --fail-on that judges them."""

    snapshot: str
    server: str
    changes: tuple[Change, ...]
    fail_on: str = "breaking"

    def failing(self) -> list[Change]:
        """The changes at or above --fail-on."""
        threshold = FAIL_ON[self.fail_on].rank
        return [change for change in self.changes if change.impact.rank >= threshold]

    def counts(self) -> dict[str, int]:
        """How many changes of each impact, breaking first."""
        return {impact.value: sum(1 for c in self.changes if c.impact is impact) for impact in reversed(Impact)}


def _value(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False, sort_keys=True)
    return text if len(text) <= VALUE_WIDTH else text[:VALUE_WIDTH - 1] + "…"


def check_text(result: CheckResult) -> str:
    """The diff for people: a summary line, then each changed item with its changes, old value `-`, new `+`."""
    counts = result.counts()
    if not result.changes:
        return f"snapshot {result.snapshot}: no change ({result.server})"
    summary = ", ".join(f"{count} {impact}" for impact, count in counts.items() if count)
    lines = [f"snapshot {result.snapshot} vs {result.server}: {summary}"]
    by_item: dict[str, list[Change]] = {}
    for change in result.changes:
        by_item.setdefault(change.item, []).append(change)
    for item, changes in by_item.items():
        lines.append("")
        lines.append(item)
        for change in changes:
            where = f"{change.path}: " if change.path else ""
            lines.append(f"  {change.impact.value.upper():<10}  {where}{change.what}  [{change.kind.code}]")
            if change.kind in (ChangeKind.ITEM_REMOVED, ChangeKind.ITEM_ADDED, ChangeKind.ITEM_RENAMED):
                continue  # the whole declaration is in the snapshot file; its name says enough here
            if change.before is not MISSING:
                lines.append(f"                - {_value(change.before)}")
            if change.after is not MISSING:
                lines.append(f"                + {_value(change.after)}")
    failing = result.failing()
    lines.append("")
    lines.append(f"{len(failing)} change{'s' if len(failing) != 1 else ''} at or above --fail-on "
                 f"{result.fail_on}" + ("" if failing else ": the check passes"))
    return "\n".join(lines)


def check_json(result: CheckResult) -> dict[str, Any]:
    """The check for scripts: the file, the server, counts, each change with its code."""
    return {"version": 1, "snapshot": result.snapshot, "server": result.server, "failOn": result.fail_on,
            "failed": bool(result.failing()), "counts": result.counts(),
            "changes": [change.to_json() for change in result.changes]}


def check_sarif(result: CheckResult, root: Path | None = None) -> dict[str, Any]:
    """SARIF 2.1.0: one rule per kind of change (its code), one result per change, located in the snapshot file."""
    from mcpfuzz import __version__

    root = root or Path.cwd()
    kinds = sorted({change.kind for change in result.changes}, key=lambda kind: kind.code)
    driver: dict[str, Any] = {"name": "mcpfuzz", "version": __version__, "semanticVersion": __version__}
    uri = information_uri()
    if uri:
        driver["informationUri"] = uri
    driver["rules"] = [{"id": kind.code, "name": "".join(p.capitalize() for p in kind.value.split("-")),
                        "shortDescription": {"text": f"surface drift: {kind.value.replace('-', ' ')}"},
                        "help": {"text": "A change of the server's declared surface since the committed snapshot. "
                                         "Review it; `mcpfuzz snapshot --check FILE --update` records the new "
                                         "surface once it is intended."},
                        "properties": {"tags": ["mcp", "snapshot", "drift"]}} for kind in kinds]
    location = artifact_location(result.snapshot, root)
    results = []
    for change in result.changes:
        identity = f"{change.kind.value}|{change.item}|{change.path}"
        results.append({
            "ruleId": change.kind.code, "ruleIndex": kinds.index(change.kind), "kind": "fail",
            "level": SARIF_LEVELS[change.impact],
            "message": {"text": f"{change.item}{': ' + change.path if change.path else ''}: {change.what} "
                                f"({change.impact.value})"},
            "locations": [{"physicalLocation": {"artifactLocation": location, "region": {"startLine": 1}},
                           "logicalLocations": [{"name": change.item, "fullyQualifiedName": change.item,
                                                 "kind": "function" if change.item.startswith("tool/") else
                                                 "resource"}]}],
            "partialFingerprints": {"mcpfuzz/snapshot/v1": hashlib.sha256(identity.encode()).hexdigest()[:32]},
            "properties": {"impact": change.impact.value, "kind": change.kind.value, "item": change.item,
                           "path": change.path},
        })
    run = {"tool": {"driver": driver}, "invocations": [{"executionSuccessful": True}], "results": results,
           "properties": {"snapshot": result.snapshot, "server": result.server, "failOn": result.fail_on}}
    return {"$schema": SARIF_SCHEMA, "version": SARIF_VERSION, "runs": [run]}


def surface_items(*surfaces: Mapping[str, Any]) -> list[str]:
    """Every item either surface holds (`tool/NAME` ...), after the server, protocol and capabilities."""
    items = ["server", "protocol", "capabilities"]
    for section, kind in KIND_OF_SECTION.items():
        names = sorted({name for surface in surfaces for name in surface.get(section, {})})
        items += [f"{kind}/{name}" for name in names]
    return items


def check_junit(result: CheckResult, items: Sequence[str]) -> str:
    """JUnit XML: one test case per item of the surface, failed by its changes at or above --fail-on."""
    failing = {id(change) for change in result.failing()}
    suite = ET.Element("testsuite", name="mcpfuzz.snapshot", tests=str(len(items)))
    failures = 0
    for item in items:
        case = ET.SubElement(suite, "testcase", classname="mcpfuzz.snapshot", name=xml_text(item))
        changes = [change for change in result.changes if change.item == item]
        text = "\n".join(f"{c.impact.value} {c.kind.code} {c.path + ': ' if c.path else ''}{c.what}"
                         for c in changes)
        if any(id(change) in failing for change in changes):
            failures += 1
            worst = max(changes, key=lambda change: change.impact.rank)
            failure = ET.SubElement(case, "failure", type=worst.kind.code, message=xml_text(worst.what))
            failure.text = xml_text(text + "\n")
        elif changes:
            ET.SubElement(case, "system-out").text = xml_text(text + "\n")
    suite.set("failures", str(failures))
    suites = ET.Element("testsuites", name="mcpfuzz", tests=str(len(items)), failures=str(failures))
    suites.append(suite)
    ET.indent(suites)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(suites, encoding="unicode") + "\n"
