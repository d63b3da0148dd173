"""Fuzz draws that grow a target's slowest calls: lists and strings doubled, numbers doubled, only while valid; with no
slow call the draws are exactly the fuzz strategy's."""

from __future__ import annotations

import pytest
from hypothesis import given, seed, settings
from hypothesis import strategies as st
from mcpfuzz.strategies.arguments.call import NEGATIVE, POSITIVE, ArgumentCall
from mcpfuzz.strategies.arguments.growing import MAX_SLOWEST, GrowingPool, growing_calls
from mcpfuzz.strategies.arguments.schema_values import ArgumentSchema

pytestmark = pytest.mark.unit

SCHEMA = ArgumentSchema({"type": "object", "additionalProperties": False, "required": ["items", "name"],
                         "properties": {"items": {"type": "array", "items": {"type": "integer"}, "maxItems": 40},
                                        "name": {"type": "string", "maxLength": 8}}})
FUZZ = SCHEMA.positive.map(lambda arguments: ArgumentCall(POSITIVE, arguments, "drawn"))


def test_the_pool_keeps_the_slowest_valid_calls_once_each() -> None:
    pool = GrowingPool()
    for number in range(MAX_SLOWEST + 4):
        pool.add(ArgumentCall(POSITIVE, {"items": [number], "name": "a"}, "slow"), 0.3 + number / 100)
    pool.add(ArgumentCall(POSITIVE, {"items": [MAX_SLOWEST + 3], "name": "a"}, "the same again"), 9.0)
    pool.add(ArgumentCall(NEGATIVE, {"items": "x"}, "invalid"), 10.0)
    assert len(pool.calls) == MAX_SLOWEST
    assert [call.arguments["items"][0] for _, call in pool.calls[:2]] == [MAX_SLOWEST + 3, MAX_SLOWEST + 2]


def test_grown_draws_start_from_a_slow_call_and_stay_valid() -> None:
    pool = GrowingPool()
    pool.add(ArgumentCall(POSITIVE, {"items": list(range(12)), "name": "abc"}, "slow"), 0.4)
    seen: list[ArgumentCall] = []

    @settings(max_examples=300, database=None)
    @given(growing_calls(SCHEMA, FUZZ, pool))
    def draw(call: ArgumentCall) -> None:
        assert SCHEMA.is_valid(call.arguments)
        seen.append(call)

    draw()
    grown = [call for call in seen if call.description.startswith("the slowest call so far, grown")]
    assert any(call.arguments["items"] == list(range(12)) * 2 for call in grown)
    assert any(call.arguments["name"] == "abcabc" for call in grown)
    assert not any(len(call.arguments["items"]) > 40 for call in grown)  # 48 items would break maxItems
    assert any(call.description == "drawn" for call in seen)


def _drawn(strategy: st.SearchStrategy[ArgumentCall]) -> list[dict]:
    """The argument objects 50 examples of a seeded search draw."""
    drawn: list[dict] = []

    @seed(7)
    @settings(max_examples=50, database=None)
    @given(strategy)
    def draw(call: ArgumentCall) -> None:
        drawn.append(call.arguments)

    draw()
    return drawn


def test_without_a_slow_call_the_draws_are_the_fuzz_strategys() -> None:
    assert _drawn(growing_calls(SCHEMA, FUZZ, GrowingPool())) == _drawn(FUZZ)
