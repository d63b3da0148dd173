"""One lint finding per flaw: the same rule broken the same way on many targets (68 tool parameters with a
`default` their own schema refuses) is one problem naming its targets and places, split only where the evidence
differs (another message once values and names are blanked, another severity, another kind of target)."""

from __future__ import annotations

import re
from dataclasses import replace

from mcpfuzz.lint.model import Problem

# What varies between the places of one flaw: quoted values, numbers (a message's `examples[3]`, a bound).
_VALUES = re.compile(r"(?<!\w)'(?:[^'\\]|\\.)*'(?!\w)|\"(?:[^\"\\]|\\.)*\"|-?\b\d+(?:\.\d+)?\b")
MARK = "#"


def evidence_of(problem: Problem) -> str:
    """What a problem says once the place it was found at is left out: its message, the target's name and values
    blanked."""
    message = problem.message
    if problem.target and "/" in problem.target:
        name = problem.target.split("/", 1)[1]
        if name:
            message = message.replace(name, "<target>")
    return _VALUES.sub(MARK, message)


def _kind(target: str | None) -> str:
    return target.split("/", 1)[0] if target and "/" in target else ""


def grouped(problems: list[Problem]) -> list[Problem]:
    """The problems with each flaw found on targets once: its first problem leads, naming every target and
    location. A problem of no target (the handshake, a list) stays as it is."""
    groups: dict[tuple[str, str, str, str], list[Problem]] = {}
    order: list[tuple[str, str, str, str] | Problem] = []
    for problem in problems:
        kind = _kind(problem.target)
        if not kind:
            order.append(problem)
            continue
        key = (problem.rule, str(problem.severity), kind, evidence_of(problem))
        if key not in groups:
            order.append(key)
        groups.setdefault(key, []).append(problem)
    result: list[Problem] = []
    for item in order:
        if isinstance(item, Problem):
            result.append(item)
            continue
        members = groups[item]
        lead = members[0]
        if len(members) == 1:
            result.append(lead)
            continue
        targets = tuple(dict.fromkeys(p.target for p in members if p.target))
        result.append(replace(lead, target=lead.target if len(targets) == 1 else f"{item[2]}/*", targets=targets,
                              locations=tuple(p.location for p in members), evidence=item[3]))
    return result
