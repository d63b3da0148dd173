"""Regular expression payloads: catastrophic backtracking, huge repeats and broken syntax."""

from __future__ import annotations

from mcpfuzz.strategies.payloads.family import Payload

REGEX_PAYLOADS: tuple[Payload, ...] = (
    ("a nested quantifier", "(a+)+$"),
    ("an overlapping alternation", "(a|aa)+$"),
    ("a repeated wildcard group", "(.*a){25}"),
    ("a nested word quantifier", "^(\\w+\\s?)*$"),
    ("a huge repeat", "a{1000000}"),
    ("an unclosed group", "(abc"),
    ("an unclosed class", "[a-"),
    ("a trailing backslash", "abc\\"),
    ("a variable-width lookbehind", "(?<=a+)b"),
)
