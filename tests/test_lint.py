"""`mcpfuzz lint`: each rule tripped by a server that breaks exactly that rule, clean servers with no problem,
the reports (text, JSON, SARIF 2.1.0) and exit codes, and the `lint` phase of `mcpfuzz run`."""

from __future__ import annotations

import json
import sys
import time
from functools import partial
from pathlib import Path

import anyio
import pytest
from jsonschema import Draft202012Validator

from mcpfuzz.engine.lint_run import LintOutcome, lint_server
from mcpfuzz.engine.session.session import SessionOptions
from mcpfuzz.jsonrpc.versions import LATEST_LEGACY
from mcpfuzz.lint.model import Declared
from mcpfuzz.lint.registry import RulesCut, all_rules, run_rules
from mcpfuzz.lint.schema import regex_problem
from mcpfuzz.lint.uri_template import template_problem
from mcpfuzz.report.lint_report import lint_sarif
from mcpfuzz.transport.base import DEFAULT_STARTUP_TIMEOUT
from mcpfuzz.transport.http_target import HttpTarget
from mcpfuzz.transport.stdio_target import StdioTarget
from tests.conftest import EXAMPLE_COMMAND, REPO_ROOT, run_cli
from tests.engine_runs import run_engine
from tests.http_servers import sdk_python, start_http_server
from tests.servers.lint_server import MODES

pytestmark = pytest.mark.slow

LINT_SERVER = REPO_ROOT / "tests" / "servers" / "lint_server.py"
SDK_SERVERS = REPO_ROOT / "tests" / "sdk_servers"
SARIF_SCHEMA = REPO_ROOT / "tests" / "schemas" / "sarif-schema-2.1.0.json"
LEGACY_ONLY = {"SEQ-001", "SEQ-003", "SEQ-005"}  # the mode breaks something only the legacy era has
BOTH_ERAS = {"PROTO-002", "PROTO-003"}  # the mode breaks each era's handshake its own way
UNTESTED_HERE = {"PROTO-012"}  # needs HTTP sessions: test_session_ids_outside_visible_ascii


def lint(command: list[str], *, version: str | None = None, timeout: float = 5.0,
         startup_timeout: float = DEFAULT_STARTUP_TIMEOUT) -> LintOutcome:
    """`mcpfuzz lint` in-process."""
    options = SessionOptions(timeout=timeout, startup_timeout=startup_timeout)
    return anyio.run(partial(lint_server, StdioTarget(tuple(command)), options, forced_version=version))


def lint_command(mode: str = "") -> list[str]:
    return [sys.executable, str(LINT_SERVER), *(["--break", mode] if mode else [])]


def rules_of(outcome: LintOutcome) -> set[str]:
    return {problem.rule for problem in outcome.problems}


CASES = [(mode, None) for mode in MODES if mode.split("/")[0] not in LEGACY_ONLY] + \
    [(mode, "2025-11-25") for mode in MODES if mode.split("/")[0] in LEGACY_ONLY or mode in BOTH_ERAS]


@pytest.mark.parametrize(("mode", "version"), CASES, ids=[f"{m}-{v or 'negotiated'}" for m, v in CASES])
def test_each_mode_breaks_exactly_its_rule(mode: str, version: str | None) -> None:
    """The server that breaks one rule gets problems of that rule only, each with a location, message and fix."""
    # SEQ-004's server never answers the handshake, however long it is given: the wait for it is kept short.
    silent = mode == "SEQ-004"
    outcome = lint(lint_command(mode), version=version, timeout=1.0 if silent else 5.0,
                   startup_timeout=3.0 if silent else DEFAULT_STARTUP_TIMEOUT)
    assert not outcome.error
    assert rules_of(outcome) == {mode.split("/")[0]}, [(p.rule, p.location, p.message) for p in outcome.problems]
    for problem in outcome.problems:
        assert problem.location and problem.message and problem.fix


def test_every_rule_has_a_breaking_mode() -> None:
    """No rule goes untested: the lint server breaks each one (PROTO-012 over HTTP, below)."""
    broken = {mode.split("/")[0] for mode in MODES} | UNTESTED_HERE
    assert broken == set(all_rules())


@pytest.mark.parametrize("version", [None, "2025-11-25", "2025-06-18", "2024-11-05"])
def test_clean_server_has_no_problem_in_any_era(version: str | None) -> None:
    """Tools, resources, templates and prompts declared by the book: nothing to report, not even info."""
    outcome = lint(lint_command(), version=version)
    assert not outcome.error
    assert outcome.era == ("modern" if version is None else "legacy")
    assert outcome.problems == []


def test_locations_name_the_declaration() -> None:
    """A location is a path into what the server declared, by tool name."""
    outcome = lint(lint_command("SCHEMA-004"))
    assert [(p.location, p.target, p.tool, str(p.severity)) for p in outcome.problems] == [
        ("tools[echo].inputSchema.required", "tool/echo", "echo", "warning")]
    assert "'missing'" in outcome.problems[0].message


def test_capability_served_but_not_declared_is_a_warning() -> None:
    outcome = lint(lint_command("PROTO-008/undeclared"))
    assert [(p.rule, str(p.severity), p.location) for p in outcome.problems] == [
        ("PROTO-008", "warning", "capabilities.prompts")]


def test_bundled_example_server_is_clean() -> None:
    """The README's first command lints without a problem (the example's bugs are for the fuzzer to find)."""
    outcome = lint(EXAMPLE_COMMAND)
    assert not outcome.error and outcome.problems == []


pytest_sdk = pytest.mark.sdk


@pytest_sdk
@pytest.mark.parametrize("server", ["sdk2_server.py", "sdk2_typed_server.py"])
def test_mcp_2x_servers_have_no_problem(server: str) -> None:
    pytest.importorskip("mcp.server.mcpserver")
    outcome = lint([sys.executable, str(SDK_SERVERS / server)])
    assert not outcome.error and outcome.era == "modern"
    assert outcome.problems == []


@pytest_sdk
@pytest.mark.parametrize("server", ["sdk1_server.py", "sdk1_typed_server.py"])
def test_mcp_1x_servers_only_show_their_known_unknown_method_code(server: str) -> None:
    """mcp 1.30 answers unknown methods with -32602 (tests/sdk_servers/SURVEY.md); nothing else is reported."""
    python = sdk_python("sdk1_server")
    outcome = lint([python, str(SDK_SERVERS / server)])
    assert not outcome.error and outcome.era == "legacy"
    assert [(p.rule, str(p.severity)) for p in outcome.problems] == [("SEQ-002", "error")]
    assert "-32602" in outcome.problems[0].message


def test_session_ids_outside_visible_ascii() -> None:
    """PROTO-012: a streamable HTTP session id with a space; the same server with proper ids is clean."""
    for bugs, expected in (((), set()), (("--bug", "session-id-space"), {"PROTO-012"})):
        with start_http_server(*bugs) as url:
            outcome = anyio.run(partial(lint_server, HttpTarget(url), SessionOptions(timeout=5),
                                        forced_version="2025-11-25"))
        assert not outcome.error
        assert rules_of(outcome) == expected, outcome.problems


@pytest.mark.parametrize(("pattern", "valid"), [
    ("^[a-z]+$", True), ("(?<year>\\d{4})-\\k<year>", True), ("\\p{L}+", True), ("[^]", True),
    ("^(unclosed$", False), ("*a", False), ("[z-a]", False)])
def test_patterns_are_read_as_ecma_262(pattern: str, valid: bool) -> None:
    """Forms valid in ECMA-262 but spelled otherwise in Python are no error; broken expressions are."""
    assert (regex_problem(pattern) is None) == valid


@pytest.mark.parametrize(("template", "valid"), [
    ("file:///{path}", True), ("note://{id}{?lang,page}", True), ("{+base}/x{#frag}", True), ("x/{var:30}", True),
    ("x/{list*}", True), ("note://{id", False), ("note://id}", False), ("x/{}", False), ("x/{=a}", False),
    ("x/{a b}", False), ("x/{var:0}", False), ("x y", False), ("x/%zz", False)])
def test_uri_templates_follow_rfc_6570(template: str, valid: bool) -> None:
    assert (template_problem(template) is None) == valid


# ---- the command ----------------------------------------------------------------------------------------------


def test_cli_exit_codes_and_strict() -> None:
    """0 clean, 0 for a warning, 1 for it with --strict, 1 for an error."""
    assert run_cli(["lint", "--", *lint_command()]).returncode == 0
    warned = run_cli(["lint", "--", *lint_command("SCHEMA-004")])
    assert warned.returncode == 0, warned.stdout + warned.stderr
    assert "SCHEMA-004" in warned.stdout and "tools[echo].inputSchema.required" in warned.stdout
    assert run_cli(["lint", "--strict", "--", *lint_command("SCHEMA-004")]).returncode == 1
    failed = run_cli(["lint", "--", *lint_command("PROTO-005")])
    assert failed.returncode == 1 and "fix:" in failed.stdout


def test_cli_usage_and_unusable_server_exit_2() -> None:
    no_server = run_cli(["lint"])
    assert no_server.returncode == 2 and "no server given" in no_server.stderr
    missing = run_cli(["lint", "--", "/nonexistent/server-binary"])
    assert missing.returncode == 2 and "could not be linted" in missing.stdout + missing.stderr
    assert "Traceback" not in missing.stdout + missing.stderr


def test_cli_lists_every_rule() -> None:
    listed = run_cli(["lint", "--rules"])
    assert listed.returncode == 0
    assert [line.split()[0] for line in listed.stdout.splitlines()] == list(all_rules())


def test_cli_json_report(tmp_path: Path) -> None:
    path = tmp_path / "lint.json"
    done = run_cli(["lint", "--format", "json", "--output", str(path), "--", *lint_command("META-002")])
    assert done.returncode == 1
    report = json.loads(path.read_text())
    assert report["counts"] == {"error": 1, "warning": 0, "info": 0}
    assert report["problems"][0] | {"message": ""} == {
        "rule": "META-002", "name": "duplicate-name", "category": "metadata", "severity": "error",
        "location": "tools[echo]", "target": "tool/echo", "tool": "echo", "message": "",
        "fix": report["problems"][0]["fix"], "count": 1, "targets": ["tool/echo"], "locations": ["tools[echo]"]}


def test_sarif_has_one_rule_per_id_and_validates() -> None:
    """SARIF 2.1.0, valid against the official schema; every rule id once, each result pointing at its rule."""
    outcome = lint(lint_command("SCHEMA-011"))
    log = lint_sarif(outcome, REPO_ROOT)
    Draft202012Validator(json.loads(SARIF_SCHEMA.read_text())).validate(log)
    run = log["runs"][0]
    ids = [rule["id"] for rule in run["tool"]["driver"]["rules"]]
    assert ids == list(all_rules())
    assert [(r["ruleId"], ids[r["ruleIndex"]], r["level"]) for r in run["results"]] == [
        ("SCHEMA-011", "SCHEMA-011", "error")]
    assert run["results"][0]["locations"][0]["logicalLocations"][0]["fullyQualifiedName"] == \
        "tools[echo].inputSchema.properties.text.pattern"


# ---- the lint phase of `mcpfuzz run` --------------------------------------------------------------------------


def test_run_reports_lint_problems_as_lint_findings() -> None:
    """An error is medium, a warning low, info left out; each finding names its rule and tool."""
    finished = run_engine(lint_command("SCHEMA-004"), phases=("probe",))
    lint_findings = [f for f in finished.findings if f.oracle == "lint"]
    assert [(f.rule, str(f.severity), f.tool, f.target) for f in lint_findings] == [
        ("SCHEMA-004", "low", "echo", "tool/echo")]
    finished = run_engine(lint_command("SCHEMA-009"), phases=("probe",))
    assert [(f.rule, str(f.severity)) for f in finished.findings if f.oracle == "lint"] == [("SCHEMA-009", "medium")]
    finished = run_engine(lint_command("SCHEMA-005"), phases=("probe",))
    assert [f for f in finished.findings if f.oracle == "lint"] == []


@pytest.mark.parametrize(("mode", "oracle"), [("SEQ-002", "method-not-found"), ("PROTO-005", "response-schema")])
def test_run_leaves_covered_rules_to_their_oracle(mode: str, oracle: str) -> None:
    """What an oracle already judges on the exchange (an unknown method's code, tools/list's shape) is one finding,
    the oracle's, not two."""
    finished = run_engine(lint_command(mode), phases=("probe", "catalogue"))
    assert [f for f in finished.findings if f.oracle == "lint"] == []
    assert oracle in {f.oracle for f in finished.findings}


def test_run_json_report_carries_the_rule(tmp_path: Path) -> None:
    path = tmp_path / "report.json"
    done = run_cli(["run", "--budget", "10", "--phases", "catalogue", "--json", str(path), "--",
                    *lint_command("META-003")], cwd=tmp_path)
    assert done.returncode == 1, done.stdout + done.stderr
    findings = json.loads(path.read_text())["findings"]
    assert [(f["rule"], f["tool"], f["target"], f["severity"]) for f in findings if f["oracle"] == "lint"] == [
        ("META-003", "echo", "tool/echo", "medium")]
    lint_finding = next(f for f in findings if f["oracle"] == "lint")
    assert lint_finding["reproducer"]["shell"].startswith("mcpfuzz lint -- ")
    assert {f["rule"] for f in findings if f["oracle"] != "lint"} == {None}


@pytest.mark.parametrize("mode", ["huge-bounds", "many-required"])
def test_hostile_declarations_are_linted_without_a_rule_failing(mode: str) -> None:
    """A bound of 400 digits or thousands of required properties: every rule finishes (no internal error)."""
    outcome = lint([sys.executable, str(REPO_ROOT / "tests" / "servers" / "hostile.py"), mode])
    assert not outcome.error
    assert not [p for p in outcome.problems if "could not finish" in p.message]


def test_docs_table_lists_every_rule_with_its_severity() -> None:
    """docs/lint.md's rule table is the registry: every id once, with its name and default severity."""
    rows = {}
    for line in (REPO_ROOT / "docs" / "lint.md").read_text(encoding="utf-8").splitlines():
        cells = [cell.strip().strip("`") for cell in line.split("|")[1:-1]]
        if len(cells) == 4 and cells[0] in all_rules():
            rows[cells[0]] = (cells[1], cells[2])
    assert rows == {rule.id: (rule.name, str(rule.severity)) for rule in all_rules().values()}


def test_the_rules_stop_between_two_rules_once_their_deadline_has_passed() -> None:
    """A run's lint phase has its share of the budget: past it no further rule starts (thousands of declarations on
    a loaded machine once spent the calls' time); before it every rule runs."""
    declared = Declared("legacy", LATEST_LEGACY, "initialize", handshake_answered=False)
    assert run_rules(declared, until=time.monotonic() + 600) == run_rules(declared) != []
    with pytest.raises(RulesCut, match=f"^0 of {len(all_rules())} rules had run$"):
        run_rules(declared, until=time.monotonic())
