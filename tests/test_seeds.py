"""Seeds: values a schema names, called first by coverage and drawn often by the fuzz phase; the run's dictionary of
words the server declared or returned; both finding bugs drawn strings never reach."""

from __future__ import annotations

import sys
from pathlib import Path

import anyio
import pytest
from mcpfuzz.strategies.arguments.call import POSITIVE, ArgumentCall
from mcpfuzz.strategies.arguments.coverage import coverage_calls
from mcpfuzz.strategies.arguments.dictionary import Dictionary
from mcpfuzz.strategies.arguments.fuzz_calls import fuzz_calls
from mcpfuzz.strategies.arguments.schema_values import ArgumentSchema, draw_examples
from mcpfuzz.strategies.arguments.seeded import seeded_calls
from mcpfuzz.strategies.arguments.seeds import description_values, seed_calls, seed_strings

from mcpfuzz.engine.config import RunConfig
from mcpfuzz.engine.runner import run
from mcpfuzz.oracles.base import all_oracles

pytestmark = pytest.mark.slow

SEEDED_SERVER = Path(__file__).parent / "servers" / "seeded_server.py"
SCHEMA = {"type": "object", "required": ["sku"], "additionalProperties": False, "properties": {
    "sku": {"type": "string", "examples": ["SKU-4417", 7]},
    "order": {"type": "string", "enum": ["asc", "desc"], "default": "desc"},
    "limit": {"type": "integer", "maximum": 50, "description": "How many, e.g. 20 (at most 50; not 500)."},
    "path": {"type": "string", "description": "A file, e.g. `src/main.py`."},
    "mode": {"const": "fast"}}}


def prepared(schema: dict) -> tuple[ArgumentSchema, dict, dict]:
    """The schema, its simplest valid arguments and its fully populated ones."""
    arguments = ArgumentSchema(schema)
    plain, populated = arguments.preflight(1)
    return arguments, plain[0], populated[0]


def test_descriptions_name_values_in_lists_quotes_and_after_eg() -> None:
    """Closed lists of words, quoted words and the value after "e.g." are values; prose is not."""
    assert description_values("Sort order, one of: asc, desc.") == ["asc", "desc"]
    assert description_values("A file, e.g. `src/main.py`.") == ["src/main.py"]
    assert description_values("Either 'json' or 'text'") == ["json", "text"]
    assert description_values("For example: item-1") == ["item-1"]
    assert description_values("Must be one of the files you own, in any order") == []


def test_seed_calls_use_examples_defaults_consts_and_descriptions_the_schema_accepts() -> None:
    """Each seed alone in the simplest arguments, and all together; a seed the schema refuses is left out."""
    arguments, simplest, full = prepared(SCHEMA)
    calls = seed_calls(arguments, simplest, full)
    sent = [call.arguments for call in calls]
    assert all(call.kind == POSITIVE and arguments.is_valid(call.arguments) for call in calls)
    assert {**simplest, "sku": "SKU-4417"} in sent
    assert {**simplest, "order": "desc"} in sent
    assert {**simplest, "limit": 20} in sent  # typed from the prose: an integer property gets 20, not "20"
    assert {**simplest, "path": "src/main.py"} in sent
    assert not any(args.get("sku") == 7 or args.get("limit") == 500 for args in sent)  # refused by the schema
    together = next(call.arguments for call in calls if "every property" in call.description)
    assert together["sku"] == "SKU-4417" and together["order"] == "desc" and together["mode"] == "fast"


def test_coverage_calls_the_seeds_right_after_the_simplest_arguments() -> None:
    """The schema's own values come before the boundaries and the breaks."""
    arguments, simplest, full = prepared(SCHEMA)
    calls = coverage_calls(arguments, [simplest], [full])
    assert calls[0].description == "the simplest valid arguments"
    assert calls[1].description.startswith("schema seed")
    assert {**simplest, "sku": "SKU-4417"} in [call.arguments for call in calls]


def test_a_whole_object_example_is_a_seed() -> None:
    """`examples` on the input schema itself is a call as it stands."""
    schema = {"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "string"}},
              "examples": [{"a": 3, "b": "x"}, {"a": "not an integer"}]}
    arguments, simplest, full = prepared(schema)
    assert [call.arguments for call in seed_calls(arguments, simplest, full)] == [{"a": 3, "b": "x"}]


def test_fuzz_draws_start_from_seeds_and_dictionary_words_at_raised_odds() -> None:
    """Out of 200 draws, many start from the seed (as it is or changed in one way) and many hold a word (Hypothesis
    never draws one choice sequence twice, so the seed as it is counts once)."""
    schema = {"type": "object", "required": ["id"], "additionalProperties": False,
              "properties": {"id": {"type": "string"}, "verbose": {"type": "boolean"}}}
    arguments, _, _ = prepared(schema)
    seed = ArgumentCall(POSITIVE, {"id": "item-1", "verbose": True}, "given in --args (#1)")
    strategy = seeded_calls(arguments, fuzz_calls(arguments), [seed], ["itm-5b1c9"])
    drawn = draw_examples(strategy, 200, seed=3)
    from_seed = [call for call in drawn if call.description.startswith("given in --args")]
    worded = [call for call in drawn if call.arguments.get("id") == "itm-5b1c9"]
    assert len(from_seed) >= 10 and len(worded) >= 10
    assert any(call.arguments == {"id": "item-1"} for call in from_seed)  # an optional field dropped
    assert all(arguments.is_valid(call.arguments) for call in worded)
    assert draw_examples(strategy, 200, seed=3) == drawn  # the same seed, the same draws


def test_without_seeds_or_words_the_fuzz_strategy_is_left_as_it_is() -> None:
    """A schema with nothing to seed draws exactly what it drew before."""
    arguments, _, _ = prepared({"type": "object", "properties": {"n": {"type": "integer"}}})
    fuzz = fuzz_calls(arguments)
    assert seeded_calls(arguments, fuzz, [], ["word"]) is fuzz  # no string property: no word can go anywhere


def test_the_dictionary_keeps_words_first_seen_first_and_bounded() -> None:
    """Words in the order they came, each once, never more than the limit."""
    words = Dictionary(limit=3)
    words.add(["a", "b", "a", "", "x" * 1000])
    words.add(["c", "d"])
    assert words.words == ("a", "b", "c")
    arguments, _, _ = prepared(SCHEMA)
    assert {"SKU-4417", "asc", "desc", "src/main.py", "fast"} <= set(seed_strings(arguments))


def seeded_run(*extra: str) -> list[tuple[str, str]]:
    """The (oracle, target) of each finding of a coverage and fuzz run on the seeded server: three examples per
    search (the dictionary's id is drawn within them), a budget no machine spends."""
    config = RunConfig(command=[sys.executable, str(SEEDED_SERVER), *extra], seed=1, budget=300.0, timeout=5.0,
                       oracles=tuple(all_oracles()), phases=("probe", "coverage", "fuzz"), max_examples=3)
    finished = anyio.run(run, config, lambda event: None)
    return sorted((finding.oracle, finding.target or "") for finding in finished.findings)


def test_schema_examples_and_returned_ids_reach_bugs_drawn_strings_miss() -> None:
    """find_product crashes on its schema's example; get_item on an id only list_items returned (the dictionary)."""
    found = seeded_run()
    assert ("no-crash", "tool/find_product") in found
    assert ("no-crash", "tool/get_item") in found
    assert ("no-crash", "tool/close_account") not in found  # only --args knows that account


def test_the_clean_seeded_server_gives_no_finding() -> None:
    """The same values on the fixed server: zero findings."""
    assert seeded_run("--clean") == []
