"""A batch refused as a whole, with one error and id null, is one finding: the refusal, judged by the oracle of its
code; `id-preserved` does not read the lone error as the answer to the batch's first request with its id lost."""

from __future__ import annotations

import pytest

from tests.engine_runs import fixture_command, run_engine

pytestmark = pytest.mark.process


def test_a_batch_refused_as_a_whole_in_2025_03_26_is_one_finding() -> None:
    finished = run_engine(fixture_command("no-batches"), protocol_version="2025-03-26", phases=("probe", "catalogue"))
    assert not finished.error, finished.error
    shown = [(f.oracle, f.target, f.key, str(f.severity)) for f in finished.findings]
    on_batch = [f for f in finished.findings if f.target == "envelope/batch" or "envelope/batch" in f.also_on]
    assert [f.oracle for f in on_batch] == ["invalid-request"], shown
    assert on_batch[0].key == "rejected:-32600", shown
    assert [f for f in finished.findings if f.oracle == "id-preserved"] == [], shown

