"""A small JSONPath subset for `--compare-ignore`: the members two servers may legitimately answer differently.

`$` the envelope; `.name` or `['name']` a member; `[N]` an item; `[*]` or `.*` every member or item;
`..name` the member at any depth. E.g. `$.result.timestamp`, `$.result.items[*].id`, `$..requestId`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

_STEP = re.compile(r"\.\.([A-Za-z_$][\w$-]*)|\.([A-Za-z_$][\w$-]*|\*)|\[(\d+|\*|'[^']*'|\"[^\"]*\")\]")
ANY, DEEP = object(), "deep"


class PathError(ValueError):
    """A path outside the subset, said with where it stops making sense."""


@dataclass(frozen=True)
class Step:
    """One step: a member name or item index (or ANY), and whether it is searched at any depth."""

    key: Any
    deep: bool = False


def parse_path(text: str) -> tuple[Step, ...]:
    """The steps of a path (PathError when it is not in the subset)."""
    if not text.startswith("$"):
        raise PathError(f"{text!r} does not start with `$` (the envelope)")
    steps, at = [], 1
    while at < len(text):
        match = _STEP.match(text, at)
        if match is None:
            raise PathError(f"{text!r} is not understood from position {at} ({text[at:]!r}); use .name, [N], [*] "
                            "or ..name")
        deep, member, bracket = match.groups()
        if deep is not None:
            steps.append(Step(deep, deep=True))
        elif member is not None:
            steps.append(Step(ANY if member == "*" else member))
        else:
            steps.append(Step(ANY if bracket == "*" else int(bracket) if bracket.isdigit() else bracket[1:-1]))
        at = match.end()
    if not steps:
        raise PathError("`$` alone would ignore the whole envelope; name a member, e.g. $.result.timestamp")
    return tuple(steps)


def without(value: Any, steps: tuple[Step, ...]) -> Any:
    """A copy of `value` with every member the path reaches removed."""
    if not steps:
        return value
    step, rest = steps[0], steps[1:]
    if isinstance(value, dict):
        result = {}
        for key, item in value.items():
            hit = step.key is ANY or key == step.key
            if hit and not rest:
                continue
            item = without(item, rest) if hit else item
            result[key] = without(item, steps) if step.deep else item
        return result
    if isinstance(value, list):
        items = []
        for index, item in enumerate(value):
            hit = step.key is ANY or step.key == index
            if hit and not rest and not step.deep:
                continue
            item = without(item, rest) if hit and not step.deep else item
            items.append(without(item, steps) if step.deep else item)
        return items
    return value
