"""Argument preparation on a schema whose fully populated values can never validate: correct, but it draws for a
long while before it gives up on them (minutes on a loaded machine), so it is in the slow tier."""

from __future__ import annotations

import pytest
from mcpfuzz.strategies.arguments.schema_values import ArgumentSchema

pytestmark = pytest.mark.slow


def test_fully_populated_values_that_never_validate_leave_the_plain_ones() -> None:
    """oneOf of exclusive members: every member present breaks it, so the simplest plain value stands for both."""
    schema = {"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
              "oneOf": [{"required": ["a"]}, {"required": ["b"]}]}
    plain, populated = ArgumentSchema(schema).preflight(1)
    assert plain == populated and ArgumentSchema(schema).is_valid(plain[0])
