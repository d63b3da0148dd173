"""A server behind a rate limiter: the cases its limiter refuses with HTTP 429 are not judged, and the run says so.

`tests/servers/http_server.py --rate-limit N` serves its first N POSTs and refuses every later one with 429 and a
JSON-RPC error of the limiter's own (-32029, id null), as an express-rate-limit in front of an MCP handler does.
Judged as the server's answers, those bodies made a correct server look wrong on every oracle that reads a code
(declared-served, resource-not-found, invalid-params, parse-error).
"""

from __future__ import annotations

import pytest

from mcpfuzz.engine.events import Event, Notice
from mcpfuzz.transport.http_target import HttpTarget
from tests.engine_runs import run_engine
from tests.http_servers import start_http_server

pytestmark = pytest.mark.process

LIMIT = 20  # POSTs served: the probe's, and a few cases after it


def test_cases_refused_by_a_rate_limiter_are_not_judged_and_are_counted() -> None:
    """No finding reads the limiter's refusal; the first refusal is told, and the count at the end."""
    events: list[Event] = []
    with start_http_server("--surface", "--rate-limit", str(LIMIT)) as url:
        finished = run_engine([], http=HttpTarget(url), phases=("probe", "coverage"), timeout=5, budget=12,
                              events=events)
    assert not finished.error
    assert [f"{f.oracle} {f.target}: {f.message}" for f in finished.findings
            if any("HTTP 429" in line for line in f.received)] == []
    notices = [event.message for event in events if isinstance(event, Notice) and "HTTP 429" in event.message]
    assert any("is not judged" in message for message in notices)
    counted = [message for message in notices if "cases were refused with HTTP 429" in message]
    assert len(counted) == 1
    refused = int(counted[0].split(" of ")[0])
    assert 0 < refused < finished.stats.cases  # the cases before the limit were judged
