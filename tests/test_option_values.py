"""Numbers that are not numbers: NaN and infinity on the command line, damaged counters in a checkpoint.

Each is refused at once (exit 2) with what was wrong and what to give instead, never a traceback.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from mcpfuzz.corpus.redact import Redactor
from mcpfuzz.engine.soak.checkpoint import Checkpoint, CheckpointError, read_checkpoint, write_checkpoint
from mcpfuzz.transport.stdio_target import StdioTarget
from tests.conftest import HOSTILE, MCP_SERVER, run_cli
from tests.in_process_cli import cli_in_process

pytestmark = pytest.mark.process

SERVER = [sys.executable, str(MCP_SERVER)]


@pytest.mark.parametrize(("args", "option"), [
    (["run", "--budget", "nan"], "--budget"),
    (["run", "--timeout", "nan"], "--timeout"),
    (["run", "--budget", "inf"], "--budget"),
    (["soak", "--duration", "nan"], "--duration"),
    (["soak", "--duration", "inf"], "--duration"),
    (["soak", "--ping-every", "nan"], "--ping-every"),
])
def test_a_number_of_seconds_that_is_not_finite_is_refused(args: list[str], option: str) -> None:
    result = cli_in_process([*args, "--", *SERVER])
    assert result.returncode == 2, result.stdout + result.stderr
    assert option in result.stderr and "finite" in result.stderr
    assert "Traceback" not in result.stderr and "ExceptionGroup" not in result.stderr


@pytest.mark.parametrize(("field", "value", "said"), [
    ("elapsed_s", float("nan"), "elapsed_s is nan"),
    ("elapsed_s", -100, "elapsed_s is -100"),
    ("slices", "three", "slices is 'three'"),
    ("scores", {"tool/x": float("inf")}, "score of tool/x is inf"),
])
def test_a_checkpoint_with_a_counter_that_is_not_a_count_is_damaged(tmp_path: Path, field: str, value: object,
                                                                    said: str) -> None:
    path = tmp_path / "corpus" / "soak-checkpoint.json"
    label = " ".join(SERVER)
    write_checkpoint(path, Checkpoint(seed=5, server=label, elapsed=10.0), StdioTarget(tuple(SERVER)), Redactor([]))
    data = json.loads(path.read_text())
    data[field] = value
    path.write_text(json.dumps(data))  # NaN and Infinity as Python's json writes them
    with pytest.raises(CheckpointError, match="damaged") as raised:
        read_checkpoint(path)
    assert said in str(raised.value)
    result = cli_in_process(["soak", "--resume", "--duration", "60s", "--", *SERVER], cwd=tmp_path)
    assert result.returncode == 2 and "damaged" in result.stderr and "Traceback" not in result.stderr


def test_a_checkpoint_with_null_stats_still_resumes_its_counters(tmp_path: Path) -> None:
    path = tmp_path / "soak-checkpoint.json"
    write_checkpoint(path, Checkpoint(seed=5, server="x", elapsed=10.0), StdioTarget(("x",)), Redactor([]))
    data = json.loads(path.read_text())
    data["stats"] = None
    path.write_text(json.dumps(data))
    assert read_checkpoint(path).stats == {}


def test_a_schema_bound_beyond_any_double_skips_that_tool_with_a_warning_and_fuzzes_the_rest(tmp_path: Path) -> None:
    """`"minimum": 10**400` is valid JSON; computing with it overflowed and took the whole run down."""
    # The frame rules the hostile server breaks are left out: their findings would be shrunk for seconds, and the
    # tool with the huge bound is never called, so no oracle judges it.
    result = run_cli(["run", "--max-examples", "3", "--budget", "120", "--phases", "coverage,fuzz", "--exclude-oracles",
                      "invalid-request,invalid-params,parse-error,notification-silent,response-schema",
                      "--json", "report.json", "--", sys.executable, str(HOSTILE), "huge-bounds"], cwd=tmp_path,
                     timeout=120)
    assert "Traceback" not in result.stderr and "OverflowError" not in result.stdout + result.stderr
    report = json.loads((tmp_path / "report.json").read_text())
    assert report["error"] is None and report["stats"]["tool_calls"] > 0
    assert "tool 'huge': `minimum` at /properties/n is a number of 401 digits" in result.stdout
    assert "skipped huge: cannot draw arguments: `minimum`" in result.stdout


def test_an_internal_error_keeps_the_findings_made_before_it(monkeypatch: pytest.MonkeyPatch) -> None:
    """A bug of mcpfuzz's own in a later phase ends that phase only: the error is reported as an internal error,
    the earlier findings kept."""
    from mcpfuzz.engine.searches.coverage_search import CoverageSearch
    from tests.engine_runs import fixture_command, run_engine

    async def broken(self: CoverageSearch, deadline: float, **_: object) -> int:
        raise ZeroDivisionError("a bug planted by the test")

    monkeypatch.setattr(CoverageSearch, "coverage", broken)
    finished = run_engine(fixture_command("crash-batch"), phases=("probe", "catalogue", "coverage"), budget=60)
    assert [error.what for error in finished.internal_errors] == ["ZeroDivisionError: a bug planted by the test"]
    assert finished.internal_errors[0].phase == "coverage"
    assert any(f.oracle == "no-crash" for f in finished.findings)
