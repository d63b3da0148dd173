"""The bounded comparison of big logs: a failure names the first differing item, a little context and the lengths."""

from __future__ import annotations

import pytest

from tests.diffs import assert_same_items, assert_same_lines, first_difference

pytestmark = pytest.mark.unit


def test_equal_logs_pass_and_a_difference_is_shown_in_a_few_short_lines() -> None:
    big = b"".join(b'{"id":%d,"method":"tools/call","params":{"text":"%s"}}\n' % (i, b"x" * 500) for i in range(50_000))
    assert_same_lines(big, big)
    other = big.replace(b'{"id":30000,', b'{"id":-1,', 1)
    with pytest.raises(AssertionError) as failure:
        assert_same_lines(big, other, what="frames")
    message = str(failure.value)
    assert message.splitlines()[0] == "frames differ at 30000 (of 50,000 on the left, 50,000 on the right)"
    assert "[29999]" in message and '{"id":-1,' in message and '{"id":30000,' in message
    assert len(message) < 1_000


def test_a_log_that_ends_early_is_shown_as_ended() -> None:
    assert first_difference([1, 2], [1, 2]) is None
    assert first_difference([1, 2, 3], [1, 2]) == (
        "items differ at 2 (of 3 on the left, 2 on the right)\n  both  [0] 1\n  both  [1] 2\n"
        "  left  [2] 3\n  right [2] (ended)")
    with pytest.raises(AssertionError, match="differ at 0"):
        assert_same_items([], ["a"])
