"""What `session-isolation` makes of one round of concurrent clients' answers (no server: the streams are given)."""

from __future__ import annotations

from typing import Any

import pytest

from mcpfuzz.oracles.isolation import Asked, Heard, fits, judge_round

pytestmark = pytest.mark.unit


def answer(rid: Any, result: dict[str, Any]) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": rid, "result": result}


def progress(token: str) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "method": "notifications/progress", "params": {"progressToken": token, "progress": 1}}


def log(level: str) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "method": "notifications/message", "params": {"level": level, "data": "x"}}


def same_call(*messages: list[dict[str, Any]], modern: bool = False) -> list[Heard]:
    """Three clients' `tools/call` with id 1, each with its own token (and, modern, levels debug, error, none)."""
    levels = ("debug", "error", None)
    return [Heard(Asked(i, 1, "tools/call", f"t{i}", levels[i] if modern else None, judge_logs=modern), list(m),
                  status=200) for i, m in enumerate(messages)]


def judged(heard: list[Heard]) -> list[tuple[str, str]]:
    return [(failure.severity.name.lower(), failure.key) for failure, _ in judge_round(heard)]


DONE = answer(1, {"content": []})


def test_each_client_with_its_own_answer_and_progress_is_quiet() -> None:
    heard = same_call([progress("t0"), DONE], [progress("t1"), DONE], [DONE])
    assert judged(heard) == []


def test_two_answers_on_one_stream_are_a_crossed_answer() -> None:
    assert judged(same_call([], [DONE, DONE], [DONE])) == [("high", "answers")]


def test_an_answer_shaped_as_another_clients_request_is_crossed() -> None:
    heard = [Heard(Asked(0, 2, "ping"), [answer(2, {"tools": []})]),
             Heard(Asked(1, 2, "tools/list"), [answer(2, {"tools": []})])]
    failures = list(judge_round(heard))
    assert [(f.key, f.severity.name) for f, _ in failures] == [("answers", "HIGH")]
    assert "client 0's ping (id 2) was answered with a result of tools/list" in failures[0][0].message


def test_a_lost_answer_counts_only_when_distinct_ids_are_all_answered() -> None:
    lost = same_call([], [DONE], [DONE])
    lost[0].ended = "no answer within 5s"
    assert judged(lost) == []  # no control round: a hang, no-hang's
    lost[0].answered_apart = False
    assert judged(lost) == []  # lost with distinct ids too: the load, not the ids (concurrency's)
    lost[0].answered_apart = True
    assert judged(lost) == [("high", "answers")]
    nobody = same_call([], [], [])
    for one in nobody:
        one.answered_apart = True
    assert judged(nobody) == []  # no client answered: nothing went to another


def test_an_id_of_another_json_type_is_not_this_requests_answer() -> None:
    assert judged(same_call([answer("1", {}), DONE], [DONE], [DONE])) == []


def test_progress_with_another_clients_token_is_crossed() -> None:
    heard = same_call([progress("t0"), DONE], [progress("t0"), progress("t1"), DONE], [DONE])
    assert judged(heard) == [("high", "progress")]
    unknown = same_call([DONE], [progress("nobody's"), DONE], [DONE])
    assert judged(unknown) == []  # a token no client sent is not another client's


def test_logs_below_the_level_asked_or_unasked_break_the_2026_rule() -> None:
    fine = same_call([log("debug"), log("error"), DONE], [log("error"), log("critical"), DONE], [DONE], modern=True)
    assert judged(fine) == []
    below = same_call([DONE], [log("warning"), DONE], [DONE], modern=True)
    assert judged(below) == [("medium", "log-level")]
    unasked = same_call([DONE], [DONE], [log("error"), DONE], modern=True)
    assert judged(unasked) == [("medium", "log-level")]
    legacy = same_call([DONE], [log("debug"), DONE], [log("debug"), DONE])
    assert judged(legacy) == []  # the legacy level is per session (logging/setLevel): not judged


def test_notifications_that_crossed_with_the_answers_are_one_finding() -> None:
    heard = same_call([], [progress("t0"), DONE, DONE], [log("debug"), DONE], modern=True)
    failures = list(judge_round(heard))
    assert [f.key for f, _ in failures] == ["answers"]
    assert "progress notifications and log messages went astray too" in failures[0][0].message


def test_result_shapes() -> None:
    assert fits("ping", {}) and fits("ping", {"_meta": {}}) and not fits("ping", {"tools": []})
    assert fits("tools/list", {"tools": []}) and not fits("tools/list", {"prompts": []})
    assert fits("server/discover", {"supportedVersions": ["2026-07-28"]}) and not fits("tools/call", {"content": []})
