"""The rule registry: each rule registered once with its stable id, name, category, severity and summary."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from mcpfuzz.lint.grouping import grouped
from mcpfuzz.lint.model import Category, Declared, Found, LintSeverity, Problem

Check = Callable[[Declared], Iterable[Found]]


@dataclass(frozen=True)
class Rule:
    """A registered rule; `mcpfuzz lint --rules`, SARIF rules and the docs' table read this."""

    id: str  # PROTO-001, SCHEMA-004, ... (the ids mcplint users know, extended for MCP-specific checks)
    name: str  # a short slug: `required-in-properties`
    category: Category
    severity: LintSeverity  # the default; a finding may be milder (a SHOULD next to a MUST)
    summary: str
    check: Check
    # The `run` oracle that already judges this on every exchange: `run` leaves the rule to it (one finding, not two).
    covered_by: str | None = None


RULES: dict[str, Rule] = {}


class RulesCut(Exception):
    """The rules were stopped at their deadline before every rule had run."""


def rule(rule_id: str, name: str, category: Category, severity: LintSeverity, *,
         covered_by: str | None = None) -> Callable[[Check], Check]:
    """Register a check under a rule id; its docstring is the rule's summary."""

    def decorate(check: Check) -> Check:
        summary = (check.__doc__ or "").strip()
        if not summary:
            raise ValueError(f"rule {rule_id} needs a docstring: it is the rule's summary")
        if rule_id in RULES:
            raise ValueError(f"rule {rule_id} registered twice")
        RULES[rule_id] = Rule(rule_id, name, category, severity, summary, check, covered_by)
        return check

    return decorate


def all_rules() -> dict[str, Rule]:
    """Every rule, with the built-in modules imported, in id order."""
    from mcpfuzz.lint import builtin  # noqa: F401  (registers on import)

    return dict(sorted(RULES.items(), key=lambda item: _order(item[0])))


def _order(rule_id: str) -> tuple[int, int]:
    prefix, _, number = rule_id.partition("-")
    return ["PROTO", "SCHEMA", "SEQ", "META"].index(prefix), int(number)


def run_rules(declared: Declared, *, skip_covered: bool = False, until: float | None = None) -> list[Problem]:
    """Every rule over the snapshot (without those an oracle covers, when asked); sorted by severity, rule, location;
    one flaw on many targets is one problem naming them (lint/grouping.py). Past `until` (time.monotonic()), the
    next rule does not start: RulesCut."""
    problems = []
    rules = [registered for registered in all_rules().values() if not (skip_covered and registered.covered_by)]
    for number, registered in enumerate(rules):
        if until is not None and time.monotonic() >= until:
            raise RulesCut(f"{number} of {len(rules)} rules had run")
        try:
            for found in registered.check(declared):
                if skip_covered and found.covered_by:
                    continue
                problems.append(Problem(registered.id, registered.name, registered.category,
                                        found.severity or registered.severity, found.location, found.message,
                                        found.fix, found.target, found.value))
        except Exception as error:  # noqa: BLE001  (a bug of one rule must not hide every other rule's problems)
            problems.append(Problem(registered.id, registered.name, registered.category, LintSeverity.INFO,
                                    "(this rule)", f"the rule could not finish on these declarations: "
                                    f"{type(error).__name__}: {error}", "report this as a bug of mcpfuzz"))
    return grouped(sorted(problems, key=lambda p: (p.severity.rank, _order(p.rule), p.location)))
