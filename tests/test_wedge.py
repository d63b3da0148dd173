"""A wedged server is judged stuck without waiting out --call-timeout: a template read whose `..` sends the server's
path normaliser into a loop is a `no-hang` finding even when the run's time left is far shorter than
--call-timeout (before, such a call was "not judged").

The template's earlier answers bound how long its next read may fairly take; past that bound a fresh request is
sent, and the process that runs on without answering it either is stuck.
"""

from __future__ import annotations

import json
import sys

import anyio
import psutil
import pytest

from mcpfuzz.engine.config import RunConfig
from mcpfuzz.engine.events import CaseDone, Event, Notice
from mcpfuzz.engine.runner import run
from mcpfuzz.engine.session.wedge import ANSWER_FACTOR, TIMEOUT_FACTOR, AnswerTimes, CpuSample
from mcpfuzz.jsonrpc.exchange import Exchange
from mcpfuzz.oracles.base import all_oracles
from tests.conftest import REPO_ROOT

pytestmark = pytest.mark.slow

SERVER = REPO_ROOT / "tests" / "servers" / "negative_refs_server.py"
TEMPLATE_TARGET = "template/mem://by-title/{title}"


def test_answer_times_bound_a_call_only_once_its_target_answered() -> None:
    times = AnswerTimes()
    assert times.bound("tool/x", 2.0) is None
    times.note("tool/x", 0.001)
    assert times.bound("tool/x", 2.0) == TIMEOUT_FACTOR * 2.0
    times.note("tool/x", 1.0)
    times.note("tool/x", 0.5)  # the slowest answer counts
    assert times.bound("tool/x", 2.0) == ANSWER_FACTOR * 1.0


def test_cpu_share_of_a_process_is_read() -> None:
    pid = psutil.Process().pid
    before = CpuSample.take(pid)
    sum(i * i for i in range(200_000))  # some work of this process between the samples
    after = CpuSample.take(pid)
    assert before is not None and after is not None and after.share_since(before, 1.0) is not None
    assert CpuSample.take(None) is None and after.share_since(None, 1.0) is None


def test_a_template_read_that_wedges_is_judged_stuck_within_a_short_budget() -> None:
    """--call-timeout far beyond the run's budget: the wedge is a finding all the same, judged long before it."""
    events: list[Event] = []
    command = [sys.executable, str(SERVER), "--bug", "template-loop"]
    config = RunConfig(command=command, seed=3, timeout=2.0, call_timeout=600.0, budget=60,
                       oracles=tuple(all_oracles()), phases=("probe", "coverage"), protocol_version="2025-11-25")
    finished = anyio.run(run, config, events.append)
    assert not finished.error
    hangs = [f for f in finished.findings if f.oracle == "no-hang"]
    assert [f.target for f in hangs] == [TEMPLATE_TARGET], [(f.oracle, f.target) for f in finished.findings]
    assert "wedged, not slow" in hangs[0].message
    assert not [e for e in events if isinstance(e, Notice) and "not judged" in e.message]
    wedged = [e.exchange for e in events if isinstance(e, CaseDone) and e.exchange.wedged]
    assert wedged and all(exchange.waited < config.call_timeout for exchange in wedged)
    # The template's plain read answered before the wedge (that answer bounds the wait); the wedged process was
    # ended and another started.
    reads = [e.exchange for e in events if isinstance(e, CaseDone) and e.exchange.case.target == TEMPLATE_TARGET]
    assert reads[0].responses() and reads.index(wedged[0]) > 0 and finished.stats.restarts >= 1


def test_clean_server_reads_every_raw_value_without_a_hang() -> None:
    command = [sys.executable, str(SERVER)]
    config = RunConfig(command=command, seed=3, timeout=2.0, call_timeout=600.0, budget=60,
                       oracles=tuple(all_oracles()), phases=("probe", "coverage"), protocol_version="2025-11-25")
    finished = anyio.run(run, config, lambda event: None)
    assert not finished.error and not finished.findings


CALC_SERVER = REPO_ROOT / "tests" / "servers" / "slow_input_server.py"


def _arguments(exchange: Exchange) -> str:
    """The arguments a tools/call case sent, as canonical text."""
    message = json.loads(exchange.case.data)
    return json.dumps(message["params"]["arguments"], sort_keys=True)


def test_a_wedging_call_is_judged_past_its_phase_share_and_never_sent_again() -> None:
    """A short budget gives coverage less time than the call's fair wait: the wedge is judged all the same (the
    wait may run past the phase's share, within the run's deadline), the run keeps to its budget, and the later
    phases do not send the same wedging arguments again."""
    events: list[Event] = []
    command = [sys.executable, str(CALC_SERVER), "--wedge"]
    config = RunConfig(command=command, seed=1, timeout=2.0, call_timeout=600.0, budget=30,
                       oracles=tuple(all_oracles()), protocol_version="2025-11-25")
    finished = anyio.run(run, config, events.append)
    assert not finished.error
    hangs = [f for f in finished.findings if f.oracle == "no-hang" and f.target == "tool/calc"]
    assert hangs and "wedged, not slow" in hangs[0].message, [(f.oracle, f.target) for f in finished.findings]
    notices = [e.message for e in events if isinstance(e, Notice)]
    assert not [text for text in notices if "not judged" in text or "budget" in text and "ran out" in text], notices
    wedged = [_arguments(e.exchange) for e in events if isinstance(e, CaseDone) and e.phase != "verify"
              and e.exchange.case.target == "tool/calc" and e.exchange.wedged]
    assert wedged and len(wedged) == len(set(wedged)), wedged
