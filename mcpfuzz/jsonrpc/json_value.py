"""The values the JSON encoder takes, and `Absent`: a member left out, which is never one of them."""

from __future__ import annotations

import enum
import json
import sys
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Final

# Integers a server sends are read exactly up to this many digits (incoming.read_integer), and may be written
# back as text up to it (`long_integers`): past Python's 4,300-digit default, which guards against quadratic
# conversions of far longer ones.
EXACT_DIGITS = 20_000

# What json.dumps can write. Read-only containers, so `dict[str, str]` and `list[int]` are values too.
Json = None | bool | int | float | str | Sequence["Json"] | Mapping[str, "Json"]


class Absent(enum.Enum):
    """A member left out of a message (an id left out makes a notification), distinct from null.

    A class of its own, so that the type checker sees it: case data that may lack a member says `X | Absent`,
    and the encoder takes only `Json`, so an Absent can never reach the wire unnoticed.
    """

    ABSENT = "absent"

    def __repr__(self) -> str:
        return "<absent>"


ABSENT: Final = Absent.ABSENT


def present(value: Json | Absent) -> Json:
    """The value of a member known to be there (None for an Absent one, never the sentinel itself)."""
    return None if value is ABSENT else value


def json_text(value: Json, *, sort_keys: bool = False) -> str:
    """JSON text of any value a server sent, never raising: past Python's limits (an integer of more digits than
    its int-to-str limit, nesting deeper than its recursion limit) the value is described instead."""
    try:
        return json.dumps(value, sort_keys=sort_keys)
    except (ValueError, RecursionError):
        return f"<{_describe(value)}>"


def _describe(value: Json) -> str:
    """A value too big to write, in a few words; two integers that differ are told apart by their hash."""
    if isinstance(value, int) and not isinstance(value, bool):
        digits = (abs(value).bit_length() - 1) * 30103 // 100000 + 1  # log10(2) per bit: no str() of the value
        return f"{'-' if value < 0 else ''}integer of about {digits} digits #{hash(value) & 0xFFFFFFFF:08x}"
    kind = "array" if isinstance(value, Sequence) and not isinstance(value, str) else type(value).__name__
    return f"{kind} too large or too deep to write"


@contextmanager
def long_integers() -> Iterator[None]:
    """Within the block, integers of up to EXACT_DIGITS digits convert to text (str, repr, json.dumps): a server's
    5,000-digit id or result is written back, judged and shown like any other; longer ones still raise."""
    get = getattr(sys, "get_int_max_str_digits", None)
    limit = get() if get is not None else 0
    if limit == 0 or limit >= EXACT_DIGITS:  # no limit (before Python 3.10.7, or lifted), or a higher one
        yield
        return
    sys.set_int_max_str_digits(EXACT_DIGITS)
    try:
        yield
    finally:
        sys.set_int_max_str_digits(limit)
