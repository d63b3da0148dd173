"""RestartPolicy and Comebacks: the back-off grows and is capped, the limit counts failed comebacks in a row."""

from __future__ import annotations

import pytest

from mcpfuzz.engine.session.comebacks import Comebacks, RestartPolicy

pytestmark = pytest.mark.unit


def test_the_back_off_starts_at_nothing_doubles_and_is_capped() -> None:
    policy = RestartPolicy(max_failed=10, first_wait=0.25, growth=2.0, longest_wait=1.0)
    assert [policy.wait(n) for n in range(5)] == [0.0, 0.25, 0.5, 1.0, 1.0]


def test_a_server_is_lost_only_after_the_limit_of_failed_comebacks_in_a_row() -> None:
    comebacks = Comebacks(RestartPolicy(max_failed=3))
    for restarts in range(1, 100):  # many crashes, each followed by a comeback: never lost
        comebacks.failed_once("exited", restarts)
        comebacks.failed_once("exited", restarts)
        comebacks.came_back()
    assert not comebacks.lost and comebacks.wait() == 0.0
    for restarts in (200, 201, 202):
        comebacks.failed_once(f"exited at start {restarts}", restarts)
    assert comebacks.lost and comebacks.lost_after == 202
    assert comebacks.as_dict() == {"failed_in_a_row": 3, "restarts": 202, "last_failure": "exited at start 202"}
    assert comebacks.verdict().startswith("server lost after 3 restarts in a row that did not come back, 202 ")
