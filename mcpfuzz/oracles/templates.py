"""A line's template: what one log statement prints whatever its values, so that one statement is one cause.

Paths, quoted values, UUIDs, hex numbers, ids that mix letters and digits, and numbers are masked, each as `#`
(one statement may print a value quoted or not, a number or an id); the words around them are the statement's own
text. Numbers were `#` in the keys of earlier versions too, so a short line whose only varying part is a number
keeps its key.
"""

from __future__ import annotations

import re

TEMPLATE_LENGTH = 120  # of the masked line: enough to tell two statements apart, bounded for keys and file names
_UUID = re.compile(r"\b[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}\b")
_HEX = re.compile(r"\b0x[0-9a-fA-F]+\b|\b(?=[0-9a-fA-F]*[0-9])(?=[0-9a-fA-F]*[a-fA-F])[0-9a-fA-F]{8,}\b")
# A quote must not touch a letter: the apostrophe of "can't" opens no quoted value.
# A quote cut off by the end of the text (a long value) runs to the end.
_QUOTED = re.compile(r"(?<!\w)'[^']*(?:'(?!\w)|$)|\"[^\"]*(?:\"|$)|`[^`]*(?:`|$)")
# `/srv/a/b.txt`, `C:\data\x`, `./rel/x`, `file:///x`, `~/x`: a slash-separated run of at least one segment.
_QUOTED_VALUE = re.compile(r"(?<!\w)'[^']*'(?!\w)|\"[^\"]*\"")  # `backticks` name a field in a problem's text
_PATH = re.compile(r"(?<![\w.-])(?:file://|[A-Za-z]:|~|\.{1,2})?(?:[\\/][^\s\\/:'\"()\[\]{},;]+)+[\\/]?"
                   r"|(?<![\w.-])[\w.-]+(?:/[\w.-]+)+")
_ID = re.compile(r"\b(?=[\w-]*[A-Za-z])(?=[\w-]*[0-9])[\w-]+\b")
_NUMBER = re.compile(r"(?<![\w#])-?[0-9]+|[0-9]+")
_SPACES = re.compile(r"\s+")
_MASK_RUN = re.compile(r"#(?: #)+(?![\w#])")  # masked values side by side: one value's parts (a path with a space)


def line_template(text: str) -> str:
    """`Validating path: /tmp/a/b (try 3)` -> `Validating path: # (try #)`; whitespace runs become one space."""
    text = _UUID.sub("#", text)
    text = _QUOTED.sub("#", text)
    text = _PATH.sub("#", text)
    text = _HEX.sub("#", text)
    text = _ID.sub("#", text)
    text = _NUMBER.sub("#", text)
    return _MASK_RUN.sub("#", _SPACES.sub(" ", text).strip())[:TEMPLATE_LENGTH]


def value_template(text: str) -> str:
    """A problem's text with its values masked (quoted values, hex, numbers), its words, fields and places kept."""
    text = _QUOTED_VALUE.sub("#", text)
    text = _HEX.sub("#", text)
    return _NUMBER.sub("#", text)[:TEMPLATE_LENGTH]
