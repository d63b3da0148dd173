"""Over streamable HTTP in the 2026-07-28 era the catalogue is built without waiting for the targets' preparation
when no tool mirrors an argument into a header: a tool whose big schema takes long to prepare holds back neither
the catalogue nor the phases after it (the mirrored-header cases, which need prepared arguments, still wait)."""

from __future__ import annotations

import threading
import time
from typing import Any

import pytest

from mcpfuzz.engine.events import Event, PhaseName, PhaseStarted
from mcpfuzz.engine.surface import preparation
from mcpfuzz.jsonrpc.versions import MODERN_VERSIONS
from mcpfuzz.transport.http_target import HttpTarget
from tests.engine_runs import run_engine
from tests.http_servers import start_http_server

pytestmark = pytest.mark.process

HELD_BACK = 30.0  # seconds a preparation waits for the catalogue at most: far longer than building it takes


def test_the_catalogue_starts_while_the_targets_are_still_being_prepared(monkeypatch: pytest.MonkeyPatch) -> None:
    events: list[Event] = []
    catalogue_began_first = threading.Event()
    prepare_targets = preparation.prepare_targets

    def slow_preparation(plan: Any, **options: Any) -> Any:
        # As a schema that takes many seconds to draw: it ends only once the catalogue has begun (or at the deadline).
        deadline = time.monotonic() + HELD_BACK
        while time.monotonic() < deadline:
            if any(isinstance(event, PhaseStarted) and event.name == PhaseName.CATALOGUE for event in list(events)):
                catalogue_began_first.set()
                break
            time.sleep(0.05)
        return prepare_targets(plan, **options)

    monkeypatch.setattr(preparation, "prepare_targets", slow_preparation)
    with start_http_server() as url:
        finished = run_engine([], http=HttpTarget(url), protocol_version=MODERN_VERSIONS[0],
                              phases=("probe", "catalogue"), events=events)
    assert not finished.error, finished.error
    assert finished.era == "modern"
    assert catalogue_began_first.is_set(), "the catalogue waited for every target's preparation"
