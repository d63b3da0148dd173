"""Text a console prints that it did not write (a server's answers, stderr, names): control characters shown as
escapes, never sent to the terminal raw, where NUL, ESC (colours, cursor moves, a window title), a C1 control
or a bidirectional override could rewrite or hide what a person reads."""

from __future__ import annotations

import re

# C0 controls but tab and newline (a line break stays one), DEL, C1 controls, the bidirectional marks, embeddings,
# overrides and isolates, and lone surrogates (bytes that were not UTF-8, kept by surrogateescape).
_UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069\ud800-\udfff]")


def safe(text: str) -> bool:
    """True when `text` holds nothing `printable` would change."""
    return _UNSAFE.search(text) is None


def printable(text: str) -> str:
    """`text` with each unsafe character written as its escape: `\\x1b`, `\\x00`, `\\u202e`."""
    return _UNSAFE.sub(_escaped, text)


def escape(text: str) -> str:
    """`text` made printable and its rich markup escaped: for any text a rich console prints that it did not
    write itself (rich passes control characters through)."""
    from rich.markup import escape as escape_markup  # here: a run's banner is made printable before rich is imported

    return escape_markup(printable(text))


def _escaped(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"
