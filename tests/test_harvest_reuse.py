"""Stateful sequences reuse what results returned: only pooled values the argument's schema accepts are offered."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import strategies as st
from mcpfuzz.strategies.arguments.harvest import substitute
from mcpfuzz.strategies.arguments.schema_values import ArgumentSchema

pytestmark = pytest.mark.unit

ID_SCHEMA = ArgumentSchema({"type": "object", "properties": {"id": {"type": "string", "format": "uuid"}},
                            "required": ["id"], "additionalProperties": False})
CREATED = "0ecb890f-e7b4-4ee3-86b5-b506c4dee360"


class FirstChoice:
    """A stand-in for Hypothesis' `data` that always takes the simplest choice: reuse, and the pool's first value."""

    def draw(self, strategy: st.SearchStrategy[Any], label: str = "") -> Any:
        return 0 if label == "reuse" else strategy.elements[0]  # type: ignore[attr-defined]


def test_a_newer_string_the_schema_refuses_does_not_hide_the_id_to_reuse() -> None:
    """After delete_item answered "deleted", that text is the pool's newest value; get_item must still get the id."""
    drawn = {"id": "3624c785-5d1f-ee7c-f650-ab849263d99a"}
    reused = substitute(ID_SCHEMA, drawn, ["deleted", CREATED, "doc-1"], FirstChoice())
    assert reused == {"id": CREATED}


def test_a_pool_with_nothing_the_schema_accepts_keeps_the_drawn_value() -> None:
    drawn = {"id": "3624c785-5d1f-ee7c-f650-ab849263d99a"}
    assert substitute(ID_SCHEMA, drawn, ["deleted", "doc-1"], FirstChoice()) == drawn
