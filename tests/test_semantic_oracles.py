"""The semantic oracles (read-only-truthful, idempotent-retry, use-after-delete): each annotation bug of the
annotated test server is found in the stateful phase and re-runs on a fresh server; the clean twin, the same
bugs without annotations, and a clean server with a clock give nothing; a destructive tool not named is never
called."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import anyio
import pytest

from mcpfuzz.engine.config import RunConfig
from mcpfuzz.engine.events import RunFinished
from mcpfuzz.engine.runner import run
from mcpfuzz.jsonrpc.case_json import expectation_from_json, expectation_to_json
from mcpfuzz.jsonrpc.expectation import Expectation
from mcpfuzz.jsonrpc.oracle_ids import OracleId
from mcpfuzz.jsonrpc.parts.state import StateCheck
from mcpfuzz.oracles.base import all_oracles
from tests.conftest import run_cli

pytestmark = pytest.mark.slow

SERVER = Path(__file__).parent / "servers" / "annotated_server.py"
BUGS = ("--bug", "readonly-counter", "--bug", "idempotent-append", "--bug", "delete-noop")
SEMANTIC = {OracleId.READ_ONLY_TRUTHFUL.value, OracleId.IDEMPOTENT_RETRY.value, OracleId.USE_AFTER_DELETE.value}
LIST = (("tools/call", {"name": "list_notes", "arguments": {}}),)


def stateful_run(tmp_path: Path, *server_args: str, budget: float, include: tuple[str, ...] = ("tool/delete_note",),
                 max_examples: int | None = None) -> RunFinished:
    config = RunConfig(command=[sys.executable, str(SERVER), *server_args], seed=3, budget=budget, timeout=5.0,
                       oracles=tuple(all_oracles()), phases=("probe", "stateful"), corpus=tmp_path / "corpus",
                       include_targets=include, max_examples=max_examples)
    return anyio.run(run, config, lambda event: None)


def test_a_change_counts_only_when_stable_before_and_repeated_with_each_call() -> None:
    """Stable twice before, changed after, changed again with each resend: confirmed; a value that changed between
    the two observations before (a clock) or that held still when the call was sent again is not."""
    changed = StateCheck(OracleId.READ_ONLY_TRUTHFUL, LIST, before=(1,), again=(1,), after=(2,))
    assert changed.changed() == [0] and changed.confirmed() == []
    assert StateCheck(OracleId.READ_ONLY_TRUTHFUL, LIST, before=(1,), again=(1,), after=(2,),
                      resent=(((2,), (3,)), ((3,), (4,)))).confirmed() == [0]
    assert StateCheck(OracleId.READ_ONLY_TRUTHFUL, LIST, before=(1,), again=(1,), after=(2,),
                      resent=(((2,), (3,)), ((3,), (3,)))).confirmed() == []
    assert StateCheck(OracleId.READ_ONLY_TRUTHFUL, LIST, before=(0,), again=(1,), after=(2,),
                      resent=(((2,), (3,)),)).changed() == []
    assert StateCheck(OracleId.READ_ONLY_TRUTHFUL, LIST, before=(None,), again=(None,), after=(2,)).changed() == []


def test_a_state_check_is_saved_without_its_observed_answers() -> None:
    """The transcript keeps the oracle, the observing requests and the item; a replay observes afresh."""
    state = StateCheck(OracleId.USE_AFTER_DELETE, LIST, "n3", before=(1,), again=(1,), after=(1,))
    saved = expectation_to_json(Expectation(judge=OracleId.VALID_INPUT_ACCEPTED, parts=(state,)))
    loaded = expectation_from_json(json.loads(json.dumps(saved)))
    assert loaded.part(StateCheck) == StateCheck(OracleId.USE_AFTER_DELETE, LIST, "n3")


def test_each_broken_annotation_is_found_and_reproduces_on_a_fresh_server(tmp_path: Path) -> None:
    """lookup (read-only) counts its calls, set_tag (idempotent) appends, delete_note keeps the note: one
    finding each, on its tool, re-run and confirmed on a fresh server from the saved sequence."""
    # Eight sequences per search reach all three (a delete needs a note added before it); the run ends by them.
    finished = stateful_run(tmp_path, *BUGS, budget=300.0, max_examples=8)
    found = {(f.oracle, f.target): f for f in finished.findings if f.oracle in SEMANTIC}
    assert set(found) == {("read-only-truthful", "tool/lookup"), ("idempotent-retry", "tool/set_tag"),
                          ("use-after-delete", "tool/delete_note")}, [(f.oracle, f.target) for f in finished.findings]
    # The two state changes re-run on a fresh server within the run (when its budget left time: never refuted). A
    # delete's re-run depends on the saved sequence making the same item again, which a fresh server's own ids may
    # not (docs/oracles.md, semantic oracles' limits): it may come back as a note.
    assert not any(finding.reproducible is False for key, finding in found.items() if key[0] != "use-after-delete")
    replayed = run_cli(["replay", "corpus"], cwd=tmp_path, timeout=300)
    assert replayed.returncode == 1 and replayed.stdout.count("FAILED") >= 2, replayed.stdout + replayed.stderr
    assert all(str(finding.severity) == "medium" for finding in found.values())
    assert "stats" in found["read-only-truthful", "tool/lookup"].message
    saved = [json.loads(path.read_text(encoding="utf-8"))
             for path in (tmp_path / "corpus").glob("tool-delete_note_use-after-delete_*.json")]
    assert len(saved) == 1 and saved[0]["case"]["expect"]["extra"]["state"]["judge"] == "use-after-delete"
    calls = [json.loads(frame)["params"]["name"] for frame in saved[0]["frames"] if '"tools/call"' in frame]
    assert calls[-1] == "delete_note"  # the sequence, then the delete judged


def test_the_clean_twin_gives_nothing(tmp_path: Path) -> None:
    """The same store with annotations that hold: zero findings."""
    finished = stateful_run(tmp_path, budget=300.0, max_examples=8)
    assert [(f.oracle, f.target) for f in finished.findings] == []
    assert finished.stats.targets.get("tool/delete_note", 0) > 0


def test_bugs_without_annotations_give_nothing(tmp_path: Path) -> None:
    """Nothing promised, nothing judged: the three bugs on a server that annotates nothing."""
    finished = stateful_run(tmp_path, *BUGS, "--no-annotations", budget=10.0)
    assert [(f.oracle, f.target) for f in finished.findings if f.oracle in SEMANTIC] == []


def test_a_clock_is_no_change_and_an_unnamed_destructive_tool_is_never_called(tmp_path: Path) -> None:
    """A read-only `now` that returns the time to the second changes by itself: zero findings; delete_note
    (destructiveHint) not named with --include-tool is not called, by the sequences or their observations."""
    # Ended by its examples (the budget only a bound), so a loaded machine's sequences call `now` too.
    finished = stateful_run(tmp_path, "--now", "--bug", "delete-noop", budget=300.0, include=(), max_examples=8)
    assert [(f.oracle, f.target) for f in finished.findings] == []
    assert finished.stats.targets.get("tool/now", 0) > 0 and "tool/delete_note" not in finished.stats.targets
