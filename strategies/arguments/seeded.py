"""Fuzz draws that start from known-good arguments (the user's, the schema's seeds) or use the run's dictionary.

One draw in SEED_ODDS starts from a seed and changes it a little (keeps some of its optional fields, takes a
property's value from another seed, or puts an edge value in one field); one in SEED_ODDS is a valid draw with a
dictionary word in a string property; the rest are the schema's own fuzz draws. Built only from public Hypothesis
strategies, around the fuzz strategy it is given.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from hypothesis import strategies as st
from mcpfuzz.strategies.arguments.call import POSITIVE, ArgumentCall
from mcpfuzz.strategies.arguments.edges import edge_call, fuzz_edge_candidates
from mcpfuzz.strategies.arguments.schema_values import ArgumentSchema
from mcpfuzz.strategies.arguments.sites import MISSING, delete_at, get_at, set_at, show

SEED_ODDS = 4  # one draw in this many starts from a seed (another from a dictionary word) when there are some
MUTATIONS = ("as given", "some fields kept", "a value from another seed", "an edge value")


def seeded_calls(schema: ArgumentSchema, fuzz: st.SearchStrategy[ArgumentCall], seeds: Sequence[ArgumentCall],
                 words: Sequence[str] = ()) -> st.SearchStrategy[ArgumentCall]:
    """`fuzz`, with draws from `seeds` and `words` mixed in at raised odds (just `fuzz` when there are neither)."""
    seeds = tuple(call for call in seeds if call.kind == POSITIVE and isinstance(call.arguments, dict))
    string_sites = [site for site in schema.sites if not site.types or "string" in site.types]
    words = tuple(words) if string_sites else ()
    if not seeds and not words:
        return fuzz
    edges = fuzz_edge_candidates(schema)

    @st.composite
    def draw_call(draw: Any) -> ArgumentCall:
        pick = draw(st.integers(0, SEED_ODDS - 1))
        if pick == 0 and seeds:
            return _from_seed(draw, schema, seeds, edges)
        if pick == 1 and words:
            return _with_word(draw, schema, string_sites, words)
        return draw(fuzz)

    return draw_call()


def _from_seed(draw: Any, schema: ArgumentSchema, seeds: tuple[ArgumentCall, ...], edges: list) -> ArgumentCall:
    """A seed, as given or changed in one way (the change dropped when it would make the arguments invalid)."""
    seed = draw(st.sampled_from(seeds))
    arguments: dict = seed.arguments
    how = draw(st.sampled_from(MUTATIONS))
    if how == "some fields kept":
        required = set(schema.schema.get("required", ())) if isinstance(schema.schema, dict) else set()
        kept = arguments
        for name in sorted(arguments):
            if name not in required and draw(st.booleans()):
                kept = delete_at(kept, (name,)) or kept
        if kept != arguments and schema.is_valid(kept):
            return ArgumentCall(POSITIVE, kept, f"{seed.description}, some fields kept")
    elif how == "a value from another seed":
        sites = [site for site in schema.sites if get_at(arguments, site.path) is not MISSING]
        others = [other.arguments for other in seeds if other is not seed]
        if sites and others:
            site = draw(st.sampled_from(sites))
            values = [get_at(other, site.path) for other in others]
            values = [value for value in values if value is not MISSING and value != get_at(arguments, site.path)]
            if values:
                value = draw(st.sampled_from(values))
                swapped = set_at(arguments, site.path, value)
                if swapped is not None and schema.is_valid(swapped):
                    return ArgumentCall(POSITIVE, swapped, f"{seed.description}, {site.pointer} = {show(value)}")
    elif how == "an edge value" and edges:
        site, label, value = draw(st.sampled_from(edges))
        call = edge_call(schema, arguments, site, label, value)
        if call is not None:
            return ArgumentCall(call.kind, call.arguments, f"{seed.description}, {call.description}")
    return seed


def _with_word(draw: Any, schema: ArgumentSchema, string_sites: list, words: tuple[str, ...]) -> ArgumentCall:
    """A valid draw with a word the server declared or returned in one string property (when it stays valid)."""
    arguments = draw(schema.positive)
    present = [site for site in string_sites if len(site.path) == 1 or get_at(arguments, site.path[:-1]) is not MISSING]
    if present:
        site = draw(st.sampled_from(present))
        word = draw(st.sampled_from(words))
        placed = set_at(arguments, site.path, word)
        if placed is not None and schema.is_valid(placed):
            return ArgumentCall(POSITIVE, placed, f"a word the server gave at {site.pointer}")
    return ArgumentCall(POSITIVE, arguments, "valid arguments")
