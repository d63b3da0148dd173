"""`mcpfuzz lint` reports: text for people, JSON for scripts, SARIF 2.1.0 (one rule per lint rule id)."""

from __future__ import annotations

import hashlib
from collections import Counter
from pathlib import Path
from typing import Any

from mcpfuzz.engine.lint_run import LintOutcome
from mcpfuzz.lint.declarations import short
from mcpfuzz.lint.model import LintSeverity, Problem
from mcpfuzz.lint.registry import Rule, all_rules
from mcpfuzz.report.plural import counted
from mcpfuzz.report.sarif import SARIF_SCHEMA, SARIF_VERSION, information_uri, script_path

LINT_REPORT_VERSION = 1
SARIF_LEVELS = {LintSeverity.ERROR: "error", LintSeverity.WARNING: "warning", LintSeverity.INFO: "note"}


SAMPLES_SHOWN = 3  # targets named on the console for a flaw found on many (all of them in JSON and SARIF)


def problem_json(problem: Problem) -> dict:
    """One problem as the JSON report shapes it; a flaw found in several places lists them (`targets`,
    `locations`) and counts them (`count`)."""
    return {"rule": problem.rule, "name": problem.name, "category": str(problem.category),
            "severity": str(problem.severity), "location": problem.location, "target": problem.target,
            "tool": problem.tool, "message": problem.message, "fix": problem.fix, "count": problem.count,
            "targets": list(problem.targets) or ([problem.target] if problem.target else []),
            "locations": list(problem.locations) or [problem.location]}


def places_line(problem: Problem) -> str:
    """`on 68 places of 12 tools: a, b, c and 9 more`; empty for a problem found once."""
    if problem.count == 1:
        return ""
    targets = problem.targets
    kind = targets[0].split("/", 1)[0] if targets else "target"
    names = [t.split("/", 1)[1] if "/" in t else t for t in targets]
    listed = ", ".join(names[:SAMPLES_SHOWN]) + (f" and {len(names) - SAMPLES_SHOWN} more"
                                                  if len(names) > SAMPLES_SHOWN else "")
    places = f"{counted(problem.count, 'place')} of " if problem.count > len(targets) else ""
    return f"on {places}{counted(len(targets), kind)}: {listed}"


def counts(problems: list[Problem]) -> dict[str, int]:
    """How many problems of each severity."""
    seen = Counter(str(p.severity) for p in problems)
    return {str(severity): seen.get(str(severity), 0) for severity in LintSeverity}


def lint_json(outcome: LintOutcome) -> dict:
    """The whole lint report."""
    from mcpfuzz import __version__

    return {"version": LINT_REPORT_VERSION, "mcpfuzz": __version__, "server": outcome.server, "era": outcome.era,
            "protocolVersion": outcome.protocol_version, "duration_s": round(outcome.duration, 3),
            "error": outcome.error or None, "counts": counts(outcome.problems),
            "problems": [problem_json(p) for p in outcome.problems]}


def lint_text(outcome: LintOutcome) -> str:
    """Problems one per block: `error PROTO-005 tool-definition  tools[3].name`, the message and the fix."""
    lines = []
    for problem in outcome.problems:
        lines.append(f"{problem.severity:<7} {problem.rule:<10} {problem.name:<26} {problem.location}")
        lines.append(f"        {problem.message}")
        if problem.count > 1:
            lines.append(f"        {places_line(problem)}")
        lines.append(f"        fix: {problem.fix}")
    if outcome.error:
        lines.append(f"error: the server could not be linted: {outcome.error}")
        return "\n".join(lines)
    found = counts(outcome.problems)
    era = f"{outcome.protocol_version} ({outcome.era})" if outcome.era else "no handshake"
    lines.append(f"{outcome.server}: {era}; {counted(found['error'], 'error')}, "
                 f"{counted(found['warning'], 'warning')}, {found['info']} info in {outcome.duration:.2f}s")
    return "\n".join(lines)


def rules_text() -> str:
    """`mcpfuzz lint --rules`: every rule with its category, default severity and summary."""
    return "\n".join(f"{r.id:<10} {r.severity!s:<7} {r.category!s:<8} {r.name:<26} {r.summary}"
                     for r in all_rules().values())


def sarif_rule(rule: Rule) -> dict:
    """One reportingDescriptor per lint rule."""
    return {"id": rule.id, "name": "".join(part.capitalize() for part in rule.name.split("-")),
            "shortDescription": {"text": rule.summary},
            "help": {"text": f"{rule.summary} Each result names where in the server's declarations the problem is "
                             f"and how to fix it. `mcpfuzz lint --rules` lists every rule."},
            "defaultConfiguration": {"level": SARIF_LEVELS[rule.severity]},
            "properties": {"tags": ["mcp", "lint", str(rule.category)]}}


def _fingerprint(problem: Problem) -> str:
    """A problem found once keeps its place's fingerprint; a flaw found in several places is named by what they
    share (its rule, its kind of target, its evidence), so one more tool with the flaw keeps it."""
    if problem.count > 1:
        return hashlib.sha256(f"{problem.rule}|{problem.target}|{problem.evidence}".encode()).hexdigest()[:12]
    return hashlib.sha256(f"{problem.rule}|{problem.location}".encode()).hexdigest()[:12]


def sarif_result(problem: Problem, index: int, script: str | None) -> dict:
    """One problem as a SARIF result, located logically (and at the server's script when it is in the checkout)."""
    location: dict[str, Any] = {"logicalLocations": [{"name": problem.target or problem.location,
                                                      "fullyQualifiedName": problem.location,
                                                      "kind": "function" if problem.tool else "member"}]}
    if script:
        location["physicalLocation"] = {"artifactLocation": {"uri": Path(script).as_posix(),
                                                             "uriBaseId": "%SRCROOT%"}, "region": {"startLine": 1}}
    fingerprint = _fingerprint(problem)
    places = f" ({places_line(problem)})" if problem.count > 1 else ""
    properties = {"location": problem.location, "target": problem.target, "fix": problem.fix,
                  "value": short(problem.value, 300) if problem.value is not None else None,
                  "count": problem.count if problem.count > 1 else None,
                  "targets": list(problem.targets) or None, "locations": list(problem.locations) or None}
    return {"ruleId": problem.rule, "ruleIndex": index, "kind": "fail", "level": SARIF_LEVELS[problem.severity],
            "message": {"text": f"{problem.location}: {problem.message}{places}. Fix: {problem.fix}"},
            "locations": [location],
            "partialFingerprints": {"mcpfuzz-lint/v1": fingerprint, "primaryLocationLineHash": f"{fingerprint}:1"},
            "properties": {key: value for key, value in properties.items() if value is not None}}


def lint_sarif(outcome: LintOutcome, root: Path | None = None) -> dict:
    """The SARIF log of one lint: every rule, one result per problem."""
    from mcpfuzz import __version__

    rules = list(all_rules().values())
    ids = [r.id for r in rules]
    driver: dict = {"name": "mcpfuzz-lint", "version": __version__, "semanticVersion": __version__}
    uri = information_uri()
    if uri:
        driver["informationUri"] = uri
    driver["rules"] = [sarif_rule(r) for r in rules]
    invocation: dict = {"executionSuccessful": not outcome.error}
    if outcome.error:
        invocation["toolExecutionNotifications"] = [{"level": "error", "message": {"text": outcome.error}}]
    script = script_path(outcome.server, root or Path.cwd())
    run = {"tool": {"driver": driver}, "invocations": [invocation],
           "results": [sarif_result(p, ids.index(p.rule), script) for p in outcome.problems],
           "properties": {"server": outcome.server, "era": outcome.era, "protocolVersion": outcome.protocol_version}}
    return {"$schema": SARIF_SCHEMA, "version": SARIF_VERSION, "runs": [run]}
