"""Durations on the command line and in the config file: `30`, `30s`, `500ms`, `2m`, `1h30m`, `7d`, one parser."""

from __future__ import annotations

import math
import re
from typing import Any

import click

UNIT_SECONDS = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0, "d": 86400.0}
# `ms` before `m`: the alternation takes the first unit that matches.
PART = re.compile(r"(\d+(?:\.\d+)?|\.\d+)(ms|s|m|h|d)")
EXAMPLES = "30s, 500ms, 2m, 1h30m (a plain number is seconds)"
PATTERN = r"^\s*((\d+(\.\d+)?|\.\d+)(ms|s|m|h|d))+\s*$"  # the config file's schema of a duration with units


class DurationError(ValueError):
    """Text that is not a duration; the message says what would be."""


def parse_duration(text: str) -> float:
    """Seconds in `text`: a plain number, or numbers with units summed (`1h30m` is 5400)."""
    cleaned = text.strip().lower()
    try:
        seconds = float(cleaned)
    except ValueError:
        parts = PART.findall(cleaned)
        if not parts or "".join(number + unit for number, unit in parts) != cleaned:
            raise DurationError(f"{text!r} is not a duration; write e.g. {EXAMPLES}") from None
        seconds = sum(float(number) * UNIT_SECONDS[unit] for number, unit in parts)
    if not math.isfinite(seconds):
        raise DurationError(f"{text!r} is not a finite duration; write e.g. {EXAMPLES}")
    return seconds


class Seconds(click.FloatRange):
    """A duration within a range, given as seconds or with units; NaN and infinity are refused (no deadline)."""

    name = "duration"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        given = value
        if isinstance(value, str):
            try:
                value = parse_duration(value)
            except DurationError as error:
                self.fail(str(error), param, ctx)
        try:
            number = super().convert(value, param, ctx)
        except click.BadParameter:
            self.fail(f"{given!r} is out of range: give a duration {self._bounds()}", param, ctx)
        if not math.isfinite(number):
            self.fail(f"{given!r} is not a finite duration; write e.g. {EXAMPLES}", param, ctx)
        return number

    def _bounds(self) -> str:
        """The range in words: `above 0`, `of at least 1s and at most 3600s`."""
        words = []
        if self.min is not None:
            words.append(f"above {self.min:g}s" if self.min_open else f"of at least {self.min:g}s")
        if self.max is not None:
            words.append(f"below {self.max:g}s" if self.max_open else f"at most {self.max:g}s")
        return " and ".join(words).replace("above 0s", "above zero")
