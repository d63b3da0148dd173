"""One failing answer, one finding: a body that does not parse answered HTTP 500 with -32603 is the parse rule's
finding, which names http-status (judged on the same frame) instead of a second finding beside it."""

from __future__ import annotations

import pytest

from mcpfuzz.transport.http_target import HttpTarget
from tests.engine_runs import run_engine
from tests.http_servers import start_http_server

pytestmark = pytest.mark.process


def test_an_unparseable_body_answered_500_with_internal_error_is_one_finding() -> None:
    with start_http_server("--bug", "unparseable-500") as url:
        finished = run_engine([], http=HttpTarget(url), phases=("probe", "catalogue"), budget=60)
    assert not finished.error, finished.error
    shown = [(f.oracle, f.target, f.key) for f in finished.findings]
    parse = [f for f in finished.findings if f.oracle == "parse-error"]
    assert [f.key for f in parse] == ["code:-32603"], shown
    assert "http-status" in parse[0].also_judged and "answered HTTP 500" in parse[0].message, shown
    assert "<HTTP 500" in parse[0].received[0]
    assert [f for f in finished.findings if f.oracle == "http-status"] == [], shown
