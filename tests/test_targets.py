"""Call targets and the one search loop: selection by label and safety, registrations, seeds and databases."""

from __future__ import annotations

import hashlib
import json
import sys
import threading
import time
from pathlib import Path

import anyio
import pytest
from hypothesis import strategies as st
from mcpfuzz.strategies.arguments.schema_prep import SchemaProblem

from mcpfuzz.engine.config import RunConfig
from mcpfuzz.engine.events import CaseDone, Event, TargetsPlanned
from mcpfuzz.engine.runner import run
from mcpfuzz.engine.searches.hypothesis_bridge import HypothesisWarmup
from mcpfuzz.engine.searches.search import SearchOptions, database_key, derive_seed, search
from mcpfuzz.engine.surface.preparation import PreparationCancelled, TargetPreparation
from mcpfuzz.engine.surface.targets import (
    Safety,
    Selection,
    TargetType,
    plan_targets,
    prepare_targets,
    register_target_type,
    target_types,
)
from mcpfuzz.jsonrpc.target_kind import TargetKind
from mcpfuzz.oracles.base import all_oracles
from tests.conftest import MCP_SERVER, run_cli

pytestmark = pytest.mark.process

SCHEMA = {"type": "object", "properties": {"n": {"type": "integer", "minimum": 0, "maximum": 5}}, "required": ["n"]}


def _tool(name: str, **annotations: bool) -> dict:
    tool: dict = {"name": name, "inputSchema": SCHEMA}
    if annotations:
        tool["annotations"] = annotations
    return tool


def test_targets_are_named_by_kind_and_risky_ones_wait_to_be_named() -> None:
    declared = {TargetKind.TOOL: [_tool("read", readOnlyHint=True), _tool("wipe", destructiveHint=True),
                                  _tool("fetch", openWorldHint=True), _tool("plain")]}
    plan = plan_targets(declared, Selection(), seed=1)
    assert [t.label for t in plan.targets] == ["tool/read", "tool/plain"]
    assert [t.safety for t in plan.targets] == [Safety.READ_ONLY, Safety.UNKNOWN]
    skipped = dict(plan.skipped)
    assert "destructiveHint" in skipped["tool/wipe"] and "--include-tool" in skipped["tool/wipe"]
    assert "openWorldHint" in skipped["tool/fetch"]

    plan = plan_targets(declared, Selection(include=("tool/wipe",), exclude=("tool/plain",)), seed=1)
    assert [t.label for t in plan.targets] == ["tool/read", "tool/wipe"]
    assert dict(plan.skipped)["tool/plain"] == "--exclude-tool"


def test_a_machine_busy_elsewhere_does_not_skip_targets_for_lack_of_planning_time() -> None:
    """Preparing has no time limit: a planning thread descheduled between targets (a loaded machine; here it
    sleeps) still prepares every one of them, and none is skipped."""
    declared = {TargetKind.TOOL: [_tool(f"t{i}") for i in range(4)]}
    plan = prepare_targets(plan_targets(declared, Selection(), seed=1), check_cancelled=lambda: time.sleep(0.3))
    assert [t.label for t in plan.targets] == ["tool/t0", "tool/t1", "tool/t2", "tool/t3"]
    assert all(t.prepared and t.plain == [{"n": 0}] for t in plan.targets)
    assert plan.skipped == [] and plan.warnings == []


def test_selection_draws_nothing_and_a_target_prepares_itself_once_on_first_use() -> None:
    """plan_targets only selects; the first use of a target's schema prepares it, once, whichever thread asks."""
    plan = plan_targets({TargetKind.TOOL: [_tool("a"), _tool("b")]}, Selection(), seed=1)
    assert [t.prepared for t in plan.targets] == [False, False]
    target = plan.targets[0]
    seen: list[object] = []
    threads = [threading.Thread(target=lambda: seen.append(target.prepare())) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(seen) == 4 and all(prepared is seen[0] for prepared in seen)
    assert target.schema is target.prepare().schema and target.populated == [{"n": 0}]
    assert not plan.targets[1].prepared


def test_a_schema_that_resists_drawing_is_skipped_with_its_reason_and_a_tip_when_prepared() -> None:
    unsatisfiable = {"name": "never", "inputSchema": {"type": "object", "properties": {"n": {"type": "integer",
                                                                                              "minimum": 5,
                                                                                              "maximum": 1}},
                                                      "required": ["n"]}}
    plan = plan_targets({TargetKind.TOOL: [unsatisfiable, _tool("fine")]}, Selection(), seed=1)
    assert [t.label for t in plan.targets] == ["tool/never", "tool/fine"] and plan.skipped == []
    with pytest.raises(SchemaProblem):
        plan.targets[0].prepare()
    ready = prepare_targets(plan)
    assert [t.label for t in ready.targets] == ["tool/fine"]
    assert ready.skipped == [("tool/never", "cannot draw arguments: `type`")]
    warning = ready.warnings[0]
    assert warning.startswith("tool 'never': no valid arguments could be drawn") and "tip:" in warning


def test_preparing_in_the_background_gives_the_plan_to_call_and_stops_when_cancelled() -> None:
    declared = {TargetKind.TOOL: [_tool(f"t{i}") for i in range(3)]}

    async def prepared() -> list[str]:
        preparation = TargetPreparation.start(plan_targets(declared, Selection(), seed=1), HypothesisWarmup.start())
        return [t.label for t in (await preparation.finished()).targets]

    assert anyio.run(prepared) == ["tool/t0", "tool/t1", "tool/t2"]

    async def cancelled() -> None:
        preparation = TargetPreparation(plan_targets(declared, Selection(), seed=1), HypothesisWarmup.start())
        preparation.cancel()
        preparation._run()  # in this thread: it stops before the first target
        await preparation.finished()

    with pytest.raises(PreparationCancelled):
        anyio.run(cancelled)


def test_a_label_that_names_no_target_is_a_warning_that_lists_the_real_ones() -> None:
    plan = plan_targets({TargetKind.TOOL: [_tool("plain")]}, Selection(include=("tool/nope",)), seed=1)
    assert plan.warnings == ["--include-tool 'nope' names no tool of this server; its tools are plain"]


def test_a_tool_target_keeps_the_names_earlier_versions_used_for_seeds_and_databases(tmp_path: Path) -> None:
    target = plan_targets({TargetKind.TOOL: [_tool("plain")]}, Selection(), seed=1).targets[0]
    assert (target.label, target.seed_name, target.tool) == ("tool/plain", "plain", "plain")
    # The recipes runs and corpora of earlier versions rely on: the same seed sends the same frames.
    assert derive_seed(7, "plain", 0) == int.from_bytes(hashlib.sha256(b"7|plain|0").digest()[:8], "big")
    assert derive_seed(7, "plain", 2, 5) == int.from_bytes(hashlib.sha256(b"7|plain|2|5").digest()[:8], "big")
    text = json.dumps(["srv", "plain", SCHEMA], sort_keys=True, default=str)
    assert target.database(tmp_path, "srv") == tmp_path / hashlib.sha256(text.encode()).hexdigest()[:16]
    assert database_key("srv", "plain", SCHEMA) == hashlib.sha256(text.encode()).hexdigest()[:16]
    assert target.database(None, "srv") is None


def test_a_kind_registers_once() -> None:
    tools = target_types()[TargetKind.TOOL]
    assert (tools.method, tools.list_method, tools.result_oracle) == ("tools/call", "tools/list", "output-schema")
    with pytest.raises(ValueError, match="registered twice"):
        register_target_type(TargetType(**{**tools.__dict__}))


def test_the_search_loop_goes_round_after_round_with_new_seeds_until_its_deadline(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A round that ended (here: capped) is followed by another with the next round's seed; the epoch is part of it."""
    from mcpfuzz.engine.searches import hypothesis_bridge
    from mcpfuzz.engine.searches import search as search_module

    monkeypatch.setattr(hypothesis_bridge, "ROUND_EXAMPLES", 5)
    seeds: list[tuple] = []
    original = search_module.derive_seed

    def recording(seed: int, *parts: object) -> int:
        seeds.append(parts)
        return original(seed, *parts)

    monkeypatch.setattr(search_module, "derive_seed", recording)
    seen: list[int] = []

    async def main() -> None:
        deadline = time.monotonic() + 120
        options = SearchOptions(seed=3, database_root=None, server_label="x")

        def body(value: int, pursued: set) -> None:
            seen.append(value)
            if len(seen) >= 12:
                raise hypothesis_bridge.OutOfTime  # ends the search as a spent deadline does
            return None

        await search(st.integers(), body, options=options, name="demo", deadline=deadline, epoch=4)

    anyio.run(main)
    assert seeds[:3] == [("demo", 0, 4), ("demo", 1, 4), ("demo", 2, 4)]
    assert len(seen) == 12


def test_include_target_must_be_kind_slash_name() -> None:
    result = run_cli(["run", "--include-target", "delete_item", "--", "python", str(MCP_SERVER)])
    assert result.returncode == 2
    assert "'delete_item' is not KIND/NAME with a kind of tool" in result.stderr
    assert "Traceback" not in result.stderr


def test_a_prompt_named_like_a_tool_held_back_is_held_back_too() -> None:
    """mcp-server-fetch's `fetch` prompt fetches its URL like the `fetch` tool: excluding (or a risk hint on) the
    tool keeps the prompt and its completions uncalled, unless the prompt itself is named."""
    fetch_tool = {**_tool("fetch"), "annotations": {"openWorldHint": True}}
    prompt = {"name": "fetch", "arguments": [{"name": "url", "required": True}]}
    declared = {TargetKind.PROMPT: [prompt, {"name": "greet"}], TargetKind.TOOL: [fetch_tool, _tool("plain")]}
    plan = plan_targets(declared, Selection(), seed=1)
    skipped = dict(plan.skipped)
    assert "prompt/fetch" in skipped and "openWorldHint" in skipped["prompt/fetch"]
    assert {t.label for t in plan.targets} == {"tool/plain", "prompt/greet"}
    named = plan_targets(declared, Selection(include=("prompt/fetch",)), seed=1)
    assert "prompt/fetch" in {t.label for t in named.targets} and "tool/fetch" not in {t.label for t in named.targets}
    excluded = plan_targets({TargetKind.TOOL: [_tool("get")], TargetKind.PROMPT: [{"name": "get"}]},
                            Selection(exclude=("tool/get",)), seed=1)
    assert {t.label for t in excluded.targets} == set()


SLOW_MANY_TOOLS = Path(__file__).resolve().parent / "servers" / "slow_many_tools.py"


def test_a_slow_starting_server_with_thirty_tools_gets_every_tool_prepared_and_called() -> None:
    """The server sleeps 3 s before answering and declares 30 tools: none is skipped, each gets its fuzz example.

    One example per search and a budget no machine spends: the run ends on its own once every search has had its
    example, so what is asserted is what happened, whatever the machine's speed.
    """
    events: list[Event] = []
    config = RunConfig(command=[sys.executable, str(SLOW_MANY_TOOLS)], seed=1, timeout=10.0, budget=600,
                       oracles=tuple(all_oracles()), phases=("probe", "fuzz"), max_examples=1, corpus=None,
                       replay_corpus=False)
    finished = anyio.run(run, config, events.append)
    assert not finished.error and not finished.stopped and finished.findings == ()
    planned = next(event for event in events if isinstance(event, TargetsPlanned))
    tools = [f"tool/tool_{number:02d}" for number in range(30)]
    assert list(planned.fuzzed) == tools and planned.skipped == ()
    called = {event.exchange.case.target for event in events if isinstance(event, CaseDone) and event.phase == "fuzz"}
    assert set(tools) <= called


def test_a_run_stopped_while_its_targets_are_prepared_stops_the_preparation() -> None:
    """Ctrl-C or the end of the budget cancels the wait for the prepared plan: the preparing thread then stops
    before its next target instead of preparing the rest."""
    declared = {TargetKind.TOOL: [_tool(f"t{i}") for i in range(3)]}
    warmup = HypothesisWarmup()  # not started: the preparing thread waits for it
    preparation = TargetPreparation.start(plan_targets(declared, Selection(), seed=1), warmup)

    async def stopped() -> bool:
        with anyio.move_on_after(0.1) as scope:
            await preparation.finished()
        return scope.cancelled_caught

    assert anyio.run(stopped)
    warmup._run()  # the warm-up ends; the thread goes on to find itself cancelled
    with pytest.raises(PreparationCancelled):
        anyio.run(preparation.finished)
    assert not any(target.prepared for target in preparation.plan.targets)
