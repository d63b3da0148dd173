"""Edge values: strings, numbers and shapes that break parsers and encoders, put where the schema allows them."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from hypothesis import strategies as st
from mcpfuzz.strategies.arguments.call import POSITIVE, ArgumentCall, nesting_depth
from mcpfuzz.strategies.arguments.sites import MISSING, Site, get_at, set_at
from mcpfuzz.strategies.short_repr import kept

MAX_FUZZ_DEPTH = 64


def nested(depth: int) -> dict:
    """An object nested `depth` levels deep: {"a": {"a": ... {} }}."""
    value: dict = {}
    for _ in range(depth - 1):
        value = {"a": value}
    return value


# (label, value). The lone surrogate is a Python str that json.dumps writes as the escape "\ud800".
EDGE_STRINGS: tuple[tuple[str, str], ...] = (
    ("a lone surrogate escape", "\ud800"),
    ("a NUL character", "a\x00b"),
    ("an RTL override", "\u202eabc"),
    ("a zero-width joiner", "a\u200db"),
    ("combining marks", "e" + "\u0301" * 8),
    ("emoji", "\U0001f600\U0001f469\u200d\U0001f469\u200d\U0001f467"),
    ("non-ASCII letters", "h\u00e9llo w\u00f6rld \u65e5\u672c"),
    ("line breaks", "a\nb\r\nc"),
    ("a 100 kB string", "x" * 100_000),
    ("an empty string", ""),
)
EDGE_NUMBERS: tuple[tuple[str, Any], ...] = (
    ("-0", -0.0),
    ("1e308", 1e308),
    ("2**53+1", 2**53 + 1),
    ("2**63", 2**63),
    ("-2**63-1", -(2**63) - 1),
)
EDGE_SHAPES: tuple[tuple[str, Any], ...] = (
    ("an object nested 6 deep", nested(6)),
    ("an object nested 32 deep", nested(32)),
    ("an object nested 256 deep", nested(256)),
    ("an array of 10,000 items", list(range(10_000))),
)


def _edges_for(site: Site) -> tuple[tuple[str, Any], ...]:
    types = set(site.types)
    edges: tuple[tuple[str, Any], ...] = ()
    if not types or "string" in types:
        edges += EDGE_STRINGS
    if not types or types & {"integer", "number"}:
        edges += EDGE_NUMBERS
    if site.free_form:
        edges += EDGE_SHAPES
    return edges


def edge_description(site: Site, label: str) -> str:
    """What an edge call says it does: which edge value, where."""
    return f"edge value: {label} at {site.pointer}"


def edge_call(schema: Any, base: dict, site: Site, label: str, value: Any) -> ArgumentCall | None:
    """`base` (a valid value) with `value` at the site, when the schema still accepts it."""
    if get_at(base, site.path[:-1]) is MISSING and len(site.path) > 1:
        return None
    if schema.edit_errors(base, site.path, value) != []:  # None: the edit cannot be made
        return None
    return ArgumentCall(POSITIVE, set_at(base, site.path, value), edge_description(site, label))


def edge_calls(schema: Any, base: dict, *, skip: Callable[[str], bool] = lambda description: False
               ) -> list[ArgumentCall]:
    """Every edge value at every site of `base` that accepts it (deterministic, for the coverage phase), but the
    ones whose description `skip` names (a caller that already has them saves their validation)."""
    calls = []
    for site in schema.sites:
        for label, value in _edges_for(site):
            if skip(edge_description(site, label)):
                continue
            call = edge_call(schema, base, site, label, value)
            if call is not None:
                calls.append(call)
    return calls


def refused_edges(schema: Any) -> set[str]:
    """The descriptions of the edge calls no base can make: the property's own schema refuses the value, and its
    objects judge members one by one (`ArgumentSchema.member_accepts`), so no sibling changes that."""
    return {edge_description(site, label) for site in schema.sites for label, value in _edges_for(site)
            if schema.member_accepts(site.path, value) is False}


EdgeCandidate = tuple[Site, str, Any]  # where, the edge value's label, the value


def fuzz_edge_candidates(schema: Any) -> list[EdgeCandidate]:
    """The edge values the fuzz phase places, at each site that may hold them."""
    # Nesting past the SDK parsers' limit is tried once by the coverage phase: each try may cost a timeout.
    # An edge value its property's own schema refuses (a 100 kB string under maxLength 40) is left out:
    # every draw of it would be validated and thrown away.
    return [(site, label, value) for site in schema.sites for label, value in _edges_for(site)
            if nesting_depth(value) <= MAX_FUZZ_DEPTH and schema.member_accepts(site.path, value) is not False]


def edge_arguments(schema: Any) -> st.SearchStrategy[ArgumentCall]:
    """A valid value with one edge value mixed in where the schema allows it."""
    candidates = fuzz_edge_candidates(schema)
    if not candidates:
        return st.nothing()

    def place(drawn: tuple[dict, EdgeCandidate]) -> ArgumentCall | None:
        base, (site, label, value) = drawn
        return edge_call(schema, base, site, label, value)

    placed = st.tuples(st.one_of(schema.populated, schema.positive), st.sampled_from(candidates)).map(place)
    # A value that cannot be placed in the drawn base comes back as None and is drawn again.
    return kept(placed, lambda call: call is not None, "edge_calls")  # type: ignore[arg-type]
