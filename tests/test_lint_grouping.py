"""One lint finding per flaw: a server with many tools sharing one schema flaw (a `default` of null on a typed
property, as frameworks write `Optional[X] = None`) gets one problem naming the tools, split only where the
evidence differs; `mcpfuzz lint`'s text, JSON and SARIF and `mcpfuzz run`'s findings say so alike."""

from __future__ import annotations

import json
import sys
from functools import partial
from pathlib import Path

import anyio
import pytest

from mcpfuzz.engine.events import fingerprint_of
from mcpfuzz.engine.lint_run import LintOutcome, lint_server
from mcpfuzz.engine.session.session import SessionOptions
from mcpfuzz.report.lint_report import lint_sarif
from mcpfuzz.transport.stdio_target import StdioTarget
from tests.conftest import REPO_ROOT
from tests.engine_runs import run_engine
from tests.in_process_cli import cli_in_process

pytestmark = pytest.mark.process

TOOLS = 30
MANY = [sys.executable, str(REPO_ROOT / "tests" / "servers" / "lint_server.py"), "--many", str(TOOLS)]


def lint_many() -> LintOutcome:
    return anyio.run(partial(lint_server, StdioTarget(tuple(MANY)), SessionOptions(timeout=10.0)))


def test_one_flaw_on_many_tools_is_one_problem_naming_them() -> None:
    outcome = lint_many()
    assert not outcome.error, outcome.error
    flaws = [p for p in outcome.problems if p.rule == "SCHEMA-012"]
    assert len(flaws) == 2, [(p.target, p.message) for p in flaws]
    shared, other = sorted(flaws, key=lambda p: -p.count)
    assert shared.target == "tool/*" and shared.tool is None
    assert shared.count == 2 * TOOLS and len(shared.targets) == TOOLS
    assert set(shared.targets) == {f"tool/lookup_{n}" for n in range(TOOLS)}
    assert other.target == "tool/pick" and other.count == 1 and "is not one of" in other.message
    assert [p.rule for p in outcome.problems].count("SCHEMA-012") == 2


def test_lint_reports_say_where_a_shared_flaw_is(tmp_path: Path) -> None:
    text = cli_in_process(["lint", "--", *MANY], cwd=tmp_path)
    assert f"on {2 * TOOLS} places of {TOOLS} tools: lookup_0, " in text.stdout, text.stdout
    assert text.stdout.count("SCHEMA-012") == 2, text.stdout
    path = tmp_path / "lint.json"
    cli_in_process(["lint", "--format", "json", "--output", str(path), "--", *MANY], cwd=tmp_path)
    problems = [p for p in json.loads(path.read_text())["problems"] if p["rule"] == "SCHEMA-012"]
    assert sorted(p["count"] for p in problems) == [1, 2 * TOOLS]
    assert sorted(len(p["targets"]) for p in problems) == [1, TOOLS]
    results = [r for r in lint_sarif(lint_many(), REPO_ROOT)["runs"][0]["results"] if r["ruleId"] == "SCHEMA-012"]
    assert len(results) == 2 and len({r["partialFingerprints"]["mcpfuzz-lint/v1"] for r in results}) == 2


def test_run_files_a_shared_flaw_once() -> None:
    finished = run_engine(MANY, phases=("probe",))
    flaws = [f for f in finished.findings if f.rule == "SCHEMA-012"]
    assert len(flaws) == 2, [(f.target, f.message) for f in flaws]
    shared = next(f for f in flaws if f.scope == "tool/*")
    assert len(shared.also_on) == TOOLS - 1 and shared.target == "tool/lookup_0"
    assert f"SCHEMA-012 in {2 * TOOLS} places, first at " in shared.message
    # A baseline written when each place was a finding of its own still accepts the grouped one.
    place = "tools[lookup_0].inputSchema.properties.limit.default"
    one_place = fingerprint_of("lint", "tool/lookup_0", f"SCHEMA-012|{place}")
    assert one_place in shared.grouped and len(shared.grouped) == 2 * TOOLS
