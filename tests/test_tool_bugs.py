"""Tool-argument bugs of tests/servers/tool_server.py: each found by its oracle only, the clean server by none."""

from __future__ import annotations

import anyio
import pytest

from tests.engine_runs import TOOL_SERVER, fixture_command, run_engine

pytestmark = pytest.mark.slow

# bug -> (phases that must find it, the only oracles that may fire, a text of the reproducing call)
EXPECTED: dict[str, tuple[tuple[str, ...], set[str], str]] = {
    "crash-at-maximum": (("coverage",), {"no-crash"}, '"limit":10'),
    "hang-on-enum": (("coverage",), {"no-hang"}, '"sort":"date"'),
    "leak-missing-required": (("coverage",), {"invalid-params", "no-internal-leak"}, '"arguments":{'),
    "bad-structured": (("coverage",), {"output-schema"}, '"query":'),
    "reject-non-ascii": (("coverage",), {"valid-input-accepted"}, "\\u"),
    "crash-surrogate": (("coverage",), {"no-crash"}, "\\ud"),
    "crash-deep-nesting": (("coverage",), {"no-crash"}, '{"a":{"a":'),
    "crash-enum-pair": (("coverage",), {"no-crash"}, '"color":"black"'),
    "crash-at-max-items": (("coverage",), {"no-crash"}, '"tags":['),
}


def _tool_run(*bugs: str, phases: tuple[str, ...], budget: float, seed: int = 1,  # noqa: ANN202
              max_examples: int | None = None):
    return run_engine(fixture_command(*bugs, server=TOOL_SERVER), phases=("probe", *phases), budget=budget,
                      timeout=1.0, call_timeout=4.0, seed=seed, max_examples=max_examples)


@pytest.mark.parametrize("bug", sorted(EXPECTED))
def test_tool_bug_is_caught_by_its_oracle_only(bug: str) -> None:
    phases, oracles, text = EXPECTED[bug]
    finished = _tool_run(bug, phases=phases, budget=30)
    assert not finished.error, finished.error
    fired = {f.oracle for f in finished.findings}
    assert fired & oracles, f"{bug}: none of {oracles} fired; got {[(f.oracle, f.message) for f in finished.findings]}"
    assert fired <= oracles, f"{bug}: unrelated oracles fired: {fired - oracles}"
    finding = next(f for f in finished.findings if f.oracle in oracles)
    assert finding.tool is not None and finding.target == f"tool/{finding.tool}"
    assert text in finding.frames[-1].decode("ascii"), finding.frames[-1][:300]


def test_fuzz_phase_alone_finds_a_boundary_crash_and_shrinks_it() -> None:
    """Without the coverage phase, Hypothesis finds limit == 10 and keeps the smallest call that crashes.

    Counted, not timed (--max-examples, the search tool alone): on a loaded machine a timed share of
    the budget may hold too few calls. Thirty examples find it with seed 1 (twenty do not; each frame family gets as
    many)."""
    from mcpfuzz.engine.config import RunConfig
    from mcpfuzz.engine.runner import run
    from mcpfuzz.oracles.base import all_oracles

    others = ("create_item", "get_item", "delete_item", "schedule", "tree_sum", "measure")
    config = RunConfig(command=fixture_command("crash-at-maximum", server=TOOL_SERVER), seed=1, timeout=1.0,
                       budget=240, oracles=tuple(all_oracles()), phases=("probe", "fuzz"), max_examples=30,
                       exclude_targets=tuple(f"tool/{name}" for name in others))
    finished = anyio.run(run, config, lambda event: None)
    crashes = [f for f in finished.findings if f.oracle == "no-crash"]
    assert crashes and {f.oracle for f in finished.findings} == {"no-crash"}
    assert b'"limit":10' in crashes[0].frames[-1]


def test_stateful_phase_finds_a_crash_on_a_deleted_id_with_its_sequence() -> None:
    """create_item -> delete_item(id) -> get_item(id): the finding carries the whole sequence.

    Counted, not timed: 60 sequences find it with seed 1 (the budget only bounds the run on a loaded machine)."""
    finished = run_engine(fixture_command("crash-deleted-id", server=TOOL_SERVER), phases=("probe", "stateful"),
                          budget=240, timeout=1.0, call_timeout=4.0, seed=1, max_examples=60)
    crashes = [f for f in finished.findings if f.oracle == "no-crash"]
    assert crashes, [(f.oracle, f.message) for f in finished.findings]
    frames = [frame.decode("ascii", "replace") for frame in crashes[0].frames]
    assert '"name":"get_item"' in frames[-1]
    assert any('"name":"create_item"' in frame for frame in frames[:-1])
    assert any('"name":"delete_item"' in frame for frame in frames[:-1])


def test_clean_tool_server_gives_zero_findings_in_every_phase() -> None:
    """Counted, not timed: 30 examples per search (each frame family, each tool, the sequences) end the run; the
    budget only bounds it on a loaded machine."""
    finished = _tool_run(phases=("catalogue", "lifecycle", "coverage", "fuzz", "stateful"), budget=240,
                         max_examples=30)
    assert not finished.error
    assert [(f.oracle, f.target, f.message, f.case_title) for f in finished.findings] == []
    phases = finished.stats.phases
    assert phases["coverage"] > 0 and phases["fuzz"] > 0 and phases["stateful"] > 0
    fuzzed = {"search", "create_item", "get_item", "delete_item", "schedule", "tree_sum", "measure"}
    assert {label for label, cases in finished.stats.targets.items() if cases} >= {f"tool/{n}" for n in fuzzed}


def test_clean_tool_server_in_the_legacy_era_too() -> None:
    finished = run_engine(fixture_command(server=TOOL_SERVER), phases=("probe", "coverage", "fuzz"), budget=240,
                          protocol_version="2025-06-18", timeout=1.0, max_examples=30)
    assert finished.protocol_version == "2025-06-18" and finished.stats.phases["fuzz"] > 0
    assert [(f.oracle, f.message, f.case_title) for f in finished.findings] == []


def test_destructive_and_open_world_tools_are_skipped_unless_included() -> None:
    """purge_all and fetch_page kill the server if called: skipped by default, listed with the reason."""
    from mcpfuzz.engine.config import RunConfig
    from mcpfuzz.engine.events import TargetsPlanned
    from mcpfuzz.engine.runner import run
    from mcpfuzz.oracles.base import all_oracles

    def planned(include: tuple[str, ...], exclude: tuple[str, ...] = ()):  # noqa: ANN202
        events: list = []
        config = RunConfig(command=fixture_command(server=TOOL_SERVER), seed=1, timeout=1.0, budget=6,
                           oracles=tuple(all_oracles()), phases=("probe", "coverage"),
                           include_targets=tuple(f"tool/{name}" for name in include),
                           exclude_targets=tuple(f"tool/{name}" for name in exclude))
        finished = anyio.run(run, config, events.append)
        return next(e for e in events if isinstance(e, TargetsPlanned)), finished

    plan, finished = planned(())
    skipped = dict(plan.skipped)
    assert "destructiveHint" in skipped["tool/purge_all"] and "openWorldHint" in skipped["tool/fetch_page"]
    assert "tool/purge_all" not in plan.fuzzed and "tool/fetch_page" not in plan.fuzzed
    assert finished.findings == ()
    plan, finished = planned(("purge_all",), ("search", "measure"))
    assert "tool/purge_all" in plan.fuzzed and dict(plan.skipped)["tool/search"] == "--exclude-tool"
    assert any(f.oracle == "no-crash" and f.tool == "purge_all" for f in finished.findings)
