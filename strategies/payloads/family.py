"""What every payload family is made of: labelled values, and the names of the families."""

from __future__ import annotations

from enum import Enum

Payload = tuple[str, str]  # (what it is, in a finding's description; the value)


class Family(str, Enum):
    """A family of payloads, by what a property says it holds."""

    PATH = "path"
    EXPRESSION = "expression"
    COMMAND = "command"
    REGEX = "regex"
    URL = "url"
