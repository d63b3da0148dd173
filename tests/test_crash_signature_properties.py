"""One crash template is one signature whatever values it printed: Hypothesis fills a template's holes with any
values (quoted with escaped quotes inside, numbers, hex addresses, goroutine ids, paths, timestamps), written
plain, as a Python exception line, or inside a structured log field the way Go's `%q` and logfmt quote it."""

from __future__ import annotations

import json
from collections.abc import Callable

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mcpfuzz.oracles.crash_signature import crash_signature

pytestmark = pytest.mark.unit

WORDS = st.text(st.characters(whitelist_categories=("Ll",), max_codepoint=0x7A), min_size=2, max_size=8)
TEXT = st.text(st.characters(blacklist_categories=("Cs", "Cc")), max_size=20)
SEGMENT = st.text("abcdefghijklmnopqrstuvwxyz0123456789_-", min_size=1, max_size=8)

# Each kind of value a crash line prints, as a strategy of the value's written form.
KINDS: dict[str, st.SearchStrategy[str]] = {
    "double-quoted": TEXT.map(json.dumps),  # `"a \"b\" c"`: JSON's and Go's %q escapes
    "single-quoted": TEXT.filter(lambda t: "'" not in t or '"' not in t).map(repr).filter(
        lambda r: r.startswith("'")),  # Python's repr of a string
    "number": st.integers(min_value=0, max_value=2**63).map(str),
    "float": st.floats(min_value=0, max_value=1e9, allow_nan=False).map(lambda f: f"{f:.3f}"),
    "hex address": st.integers(min_value=0, max_value=2**48).map(hex),
    "goroutine": st.integers(min_value=1, max_value=10**6).map(lambda n: f"goroutine {n} [running]"),
    "path": st.lists(SEGMENT, min_size=1, max_size=5).map(lambda parts: "/" + "/".join(parts)),
    "uuid": st.uuids().map(str),
}


@st.composite
def templates(draw: st.DrawFn) -> tuple[list[str], list[str]]:
    """A template: words with holes between them (each hole a kind of value), never two holes side by side."""
    words = draw(st.lists(WORDS, min_size=2, max_size=6))
    kinds = draw(st.lists(st.sampled_from(sorted(KINDS)), min_size=1, max_size=len(words) - 1))
    return words, kinds


def filled(template: tuple[list[str], list[str]], draw: st.DrawFn) -> str:
    """The template with a value of its kind in every hole."""
    words, kinds = template
    parts = [words[0]]
    for index, kind in enumerate(kinds):
        parts += [draw(KINDS[kind]), words[index + 1]]
    return " ".join(parts + words[len(kinds) + 1:])


WRITERS: dict[str, Callable[[str], str]] = {
    "plain": lambda line: line,
    "python": lambda line: f"Traceback (most recent call last):\n  File \"/srv/app.py\", line 3, in handler\n"
                           f"RuntimeError: {line}",
    "go panic": lambda line: f"panic: {line}\n\ngoroutine 1 [running]:\nmain.handler(...)\n\t/srv/main.go:12 +0x1d",
    "structured log": lambda line: f'time=2026-12-07T14:03:31.533Z level=ERROR msg="Fatal error" '
                                   f'error={json.dumps(line, ensure_ascii=False)}',
}


@settings(max_examples=300, deadline=None)
@given(template=templates(), writer=st.sampled_from(sorted(WRITERS)), data=st.data())
def test_one_template_with_any_values_is_one_signature(template: tuple[list[str], list[str]], writer: str,
                                                        data: st.DataObject) -> None:
    write = WRITERS[writer]
    first = write(filled(template, data.draw))
    second = write(filled(template, data.draw))
    assert crash_signature(first) == crash_signature(second), (first, second)


def test_go_sdk_decode_errors_quoted_in_a_log_field_are_one_signature() -> None:
    """The Go SDK's fatal decode error, as a server's logger writes it: the value inside is quoted twice."""
    line = 'time=2026-12-07T14:03:{} level=ERROR msg="Fatal error" error="server error: json: cannot unmarshal {} ' \
           'into Go value of type jsonrpc2.wireDecode"'
    signatures = {crash_signature(line.format(*values)) for values in [
        ("31.533Z", r'\"42\"'), ("31.728Z", r'\"\\\"x\\\"\"'), ("32.054Z", r'\"true\"'),
        ("42.922Z", r'\"2,\\\"id\\\":1099511627813,\\\"method\\\":\\\"s...\"')]}
    assert len(signatures) == 1, signatures
    tags = {crash_signature(f'error="invalid message version tag {tag}; expected \\"2.0\\""')
            for tag in (r'\"\"', r'\"1.0\"', r'\"\\\"2.0\\\"\"')}
    assert len(tags) == 1, tags


def test_different_wording_stays_apart() -> None:
    """Blanking values never merges two statements: the words that are not values tell crashes apart."""
    assert crash_signature("KeyError: 'name'") != crash_signature("ValueError: 'name'")
    assert crash_signature('error="cannot unmarshal \\"1\\""') != crash_signature('error="cannot decode \\"1\\""')
    assert crash_signature("panic: index out of range [3] with length 3") == \
        crash_signature("panic: index out of range [17] with length 2")
