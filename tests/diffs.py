"""Comparisons of big logs (frame logs, lists of frames) whose failure message stays short: the first item that
differs, a little context and the lengths, never the whole log."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

CONTEXT = 2  # items shown before the first difference
WIDTH = 160  # characters shown of one item


def shown(item: Any) -> str:
    """One item as a line of at most WIDTH characters."""
    text = repr(item)
    return text if len(text) <= WIDTH else f"{text[:WIDTH]}... ({len(text):,} characters)"


def first_difference(left: Sequence[Any], right: Sequence[Any], *, what: str = "items") -> str | None:
    """None when the two sequences are equal; else a short account of where they part."""
    if len(left) == len(right) and all(a == b for a, b in zip(left, right, strict=True)):
        return None
    index = next((i for i, (a, b) in enumerate(zip(left, right, strict=False)) if a != b), min(len(left), len(right)))
    lines = [f"{what} differ at {index} (of {len(left):,} on the left, {len(right):,} on the right)"]
    for i in range(max(0, index - CONTEXT), index):
        lines.append(f"  both  [{i}] {shown(left[i])}")
    lines.append(f"  left  [{index}] {shown(left[index]) if index < len(left) else '(ended)'}")
    lines.append(f"  right [{index}] {shown(right[index]) if index < len(right) else '(ended)'}")
    return "\n".join(lines)


def assert_same_items(left: Sequence[Any], right: Sequence[Any], *, what: str = "items") -> None:
    """Fail with the first difference (and the lengths) when the sequences differ."""
    difference = first_difference(left, right, what=what)
    if difference is not None:
        raise AssertionError(difference)


def assert_same_lines(left: bytes, right: bytes, *, what: str = "lines") -> None:
    """Two logs of one item a line (frame logs) compared line by line; a failure shows the first differing line."""
    assert_same_items(left.splitlines(), right.splitlines(), what=what)
