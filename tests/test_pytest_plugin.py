"""The pytest plugin through pytester: real pytest sessions in subprocesses fuzzing real server processes."""

from __future__ import annotations

import sys
import xml.etree.ElementTree as ET

import pytest

from tests.conftest import MCP_SERVER

pytestmark = pytest.mark.slow

pytest_plugins = ("pytester",)

# QUICK: the catalogue ends by its cases, the budget only bounds it; the default timeout, since a loaded machine may
# take more than a second to answer a case (and the id-coerce bug shows only in an answer).
HEADER = f"""
import sys
import pytest
CLEAN = [sys.executable, {str(MCP_SERVER)!r}]
BUGGY = [sys.executable, {str(MCP_SERVER)!r}, "--bug", "id-coerce"]
QUICK = dict(budget=120, phases="catalogue")
"""


def run_session(pytester: pytest.Pytester, body: str, *args: str) -> pytest.RunResult:
    """A pytest session in a subprocess (the plugin loads through its entry point, as in a user's project)."""
    pytester.makepyfile(test_server=HEADER + body)
    return pytester.runpytest_subprocess("-p", "no:randomly", *args, timeout=180)


def test_clean_server_passes_and_junit_covers_it(pytester: pytest.Pytester) -> None:
    """A spec-correct server gives a passing test, which pytest's own JUnit XML reports."""
    result = run_session(pytester, """
def test_server(mcpfuzz):
    result = mcpfuzz.run(CLEAN, **QUICK)
    result.assert_no_findings(fail_on="low")
    assert result.findings == ()
""", "--junitxml=junit.xml")
    result.assert_outcomes(passed=1)
    cases = ET.parse(pytester.path / "junit.xml").getroot().iter("testcase")
    assert [case.get("name") for case in cases] == ["test_server"]


def test_findings_fail_the_test_with_what_was_sent_and_the_reproduction(pytester: pytest.Pytester) -> None:
    """A bug is a failed test whose message renders the finding, the frames and the shell reproduction."""
    result = run_session(pytester, """
def test_server(mcpfuzz):
    mcpfuzz.run(BUGGY, **QUICK).assert_no_findings()
""")
    result.assert_outcomes(failed=1)
    text = result.stdout.str()
    assert "FindingsFound: mcpfuzz found" in text
    assert "HIGH id-preserved on id/string-digits" in text
    assert 'sent: {"jsonrpc":"2.0"' in text and "got:  " in text
    assert "reproduce:" in text and "printf " in text and "mcpfuzz replay " in text


def test_marker_sets_options_and_the_hypothesis_seed_is_honoured(pytester: pytest.Pytester) -> None:
    """@pytest.mark.mcpfuzz gives defaults (strict markers accept it); --hypothesis-seed seeds the run."""
    result = run_session(pytester, """
@pytest.mark.mcpfuzz(fail_on="critical", **QUICK)
def test_server(mcpfuzz):
    result = mcpfuzz.run(BUGGY)
    assert result.seed == 1234
    assert [f.oracle for f in result.findings] == ["id-preserved"]
    result.assert_no_findings()  # high is below the marker's fail_on
""", "--strict-markers", "--hypothesis-seed", "1234")
    result.assert_outcomes(passed=1)


def test_mistakes_are_said_in_the_fixture_terms(pytester: pytest.Pytester) -> None:
    """An unknown keyword names the closest option; a bad value is said as `mcpfuzz run` says it."""
    result = run_session(pytester, """
from mcpfuzz.testing.fuzzer import UsageError

def test_unknown(mcpfuzz):
    with pytest.raises(UsageError, match="unknown option fail_onn='high'; did you mean fail_on="):
        mcpfuzz.run(CLEAN, fail_onn="high")

def test_bad_value(mcpfuzz):
    with pytest.raises(UsageError, match="severe"):
        mcpfuzz.run(CLEAN, fail_on="severe")
""")
    result.assert_outcomes(passed=2)


def test_plugin_is_idle_unless_used(pytester: pytest.Pytester) -> None:
    """A suite that never asks for the fixture imports none of mcpfuzz's engine."""
    result = run_session(pytester, """
def test_other():
    assert "mcpfuzz.testing.pytest_plugin" in sys.modules
    assert not [name for name in sys.modules if name.startswith(("mcpfuzz.engine", "mcpfuzz.cli"))]
""")
    result.assert_outcomes(passed=1)


def test_options_a_test_cannot_use_are_refused_with_what_to_do(pytester: pytest.Pytester) -> None:
    """exit_first and max_findings would stop a run half-way behind the test's back: refused, saying why."""
    result = run_session(pytester, """
from mcpfuzz.testing.fuzzer import UsageError

def test_exit_first(mcpfuzz):
    with pytest.raises(UsageError, match="run\\\\(\\\\) does not take exit_first=: .*pytest's own -x"):
        mcpfuzz.run(CLEAN, exit_first=True)

def test_max_findings(mcpfuzz):
    with pytest.raises(UsageError, match="does not take max_findings=: .*fail_on="):
        mcpfuzz.run(CLEAN, max_findings=2)

def test_dry_run(mcpfuzz):
    with pytest.raises(UsageError, match="mcpfuzz targets"):
        mcpfuzz.run(CLEAN, dry_run=True)
""")
    result.assert_outcomes(passed=3)


def test_reports_of_a_config_file_go_to_the_tests_temporary_folder(pytester: pytest.Pytester) -> None:
    """A project's `json = "reports/mcpfuzz.json"` (and a relative path given by the test) is written under
    pytest's temporary folder, never into the project; the corpus stays in pytest's cache."""
    pytester.makepyprojecttoml('[tool.mcpfuzz]\njson = "reports/mcpfuzz.json"\nhtml = "reports/run.html"\n'
                               '[tool.mcpfuzz.soak]\nduration = "1m"\n')
    result = run_session(pytester, """
import json
from pathlib import Path

def test_server(mcpfuzz, tmp_path):
    mcpfuzz.run(CLEAN, junit_xml="out/junit.xml", **QUICK).assert_no_findings()
    written = {path.relative_to(tmp_path).as_posix() for path in tmp_path.rglob("*") if path.is_file()}
    assert {"mcpfuzz/mcpfuzz.json", "mcpfuzz/run.html", "mcpfuzz/out/junit.xml"} <= written, written
    assert json.loads((tmp_path / "mcpfuzz" / "mcpfuzz.json").read_text())["findings"] == []
""")
    result.assert_outcomes(passed=1)
    for name in ("reports", "out", "corpus"):
        assert not (pytester.path / name).exists(), name
    written = [path.name for path in pytester.path.rglob("*") if path.suffix in (".json", ".html", ".xml")
               and "runpytest-0" not in path.parts and ".pytest_cache" not in path.parts]
    assert written == [], written


SUITE = """
from mcpfuzz.testing import fuzz_suite

CRASHY = [sys.executable, {crashy!r}, "--bug", "crash-at-maximum"]
test_tools = fuzz_suite(CRASHY, budget=300, phases="coverage", timeout=2, seed=7, max_examples=1)
test_clean = fuzz_suite(CLEAN, **QUICK)
"""


def _reports(text: str) -> str:
    """pytest's output up to its short summary, which (uncut where CI is set) repeats each failure's message."""
    return text.split("short test summary info", 1)[0]


def test_a_suite_is_one_item_per_finding_that_k_and_lf_select(pytester: pytest.Pytester) -> None:
    """fuzz_suite: one run per name, an item per root cause named ORACLE[TARGET], the crash's stderr once;
    -k picks items by oracle or target, and --lf re-runs exactly the failed finding."""
    body = SUITE.format(crashy=str(MCP_SERVER.parent / "tool_server.py"))
    result = run_session(pytester, body, "-v")
    text = result.stdout.str()
    assert "test_server.py::test_tools::run PASSED" in text
    assert "test_server.py::test_tools::no-crash[tool/search] FAILED" in text
    assert "test_server.py::test_clean::run PASSED" in text
    result.assert_outcomes(passed=2, failed=1)
    assert _reports(text).count("IndexError: list index out of range") == 1  # the crash's stderr, printed once
    assert "mcpfuzz replay " in text

    picked = pytester.runpytest_subprocess("-p", "no:randomly", "-q", "-k", "tool/search", timeout=180)
    picked.assert_outcomes(failed=1, deselected=2)
    again = pytester.runpytest_subprocess("-p", "no:randomly", "-v", "--lf", timeout=180)
    again.assert_outcomes(failed=1, deselected=2)
    assert "rerun previous 1 failure" in again.stdout.str()


def test_a_suite_whose_server_cannot_be_tested_fails_its_run_item(pytester: pytest.Pytester) -> None:
    result = run_session(pytester, """
from mcpfuzz.testing import fuzz_suite

test_dead = fuzz_suite([sys.executable, "-c", "import sys; sys.exit(3)"], budget=20)
test_typo = fuzz_suite(CLEAN, budgett=5)
""", "-v")
    result.assert_outcomes(failed=2)
    text = result.stdout.str()
    assert "test_server.py::test_dead::run FAILED" in text and "the server could not be tested" in text
    assert "unknown option budgett=5; did you mean budget=" in text


def test_a_crash_found_through_the_fixture_shows_its_stderr_once(pytester: pytest.Pytester) -> None:
    """The failure message renders the crash in full; the captured console says one line per finding."""
    crashy = [sys.executable, str(MCP_SERVER.parent / "tool_server.py"), "--bug", "crash-at-maximum"]
    result = run_session(pytester, f"""
def test_server(mcpfuzz):
    mcpfuzz.run({crashy!r}, budget=300, phases="coverage", timeout=2, seed=7,
                max_examples=1).assert_no_findings()
""")
    result.assert_outcomes(failed=1)
    text = result.stdout.str()
    assert "CRITICAL no-crash on tool/search" in text and "Captured stdout call" in text
    assert _reports(text).count("IndexError: list index out of range") == 1
