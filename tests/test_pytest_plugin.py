"""The pytest plugin through pytester: real pytest sessions in subprocesses fuzzing real server processes."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import pytest

from tests.conftest import MCP_SERVER

pytest_plugins = ("pytester",)

HEADER = f"""
import sys
import pytest
CLEAN = [sys.executable, {str(MCP_SERVER)!r}]
BUGGY = [sys.executable, {str(MCP_SERVER)!r}, "--bug", "id-coerce"]
QUICK = dict(budget=30, phases="catalogue", timeout=1)
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
