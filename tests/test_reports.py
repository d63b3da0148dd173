"""CI reports end to end: the real CLI writes JUnit XML, SARIF and a Markdown summary; official schemas judge them."""

from __future__ import annotations

import copy
import json
import subprocess
import sys
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import xmlschema

from mcpfuzz.oracles.base import all_oracles
from mcpfuzz.report.junit import junit_xml
from mcpfuzz.report.sarif import LEVELS, sarif_log
from mcpfuzz.report.summary_md import summary_markdown
from tests.conftest import HOSTILE, MCP_SERVER, REPO_ROOT, run_cli
from tests.in_process_cli import cli_in_process

pytestmark = pytest.mark.process

SCHEMAS = Path(__file__).parent / "schemas"
# A run selects every registered oracle by default, in registry order.
ORACLES = tuple(all_oracles())
RUN = ["run", "--timeout", "2", "--budget", "20", "--phases", "catalogue"]
# Three bugs, three oracles, three severities: low (silent parse), medium (wrong code), high (id type).
BUGS = ["--bug", "silent-parse", "--bug", "method-not-found-code", "--bug", "id-coerce"]
EXPECTED = {"parse-error": ("low", "note"), "method-not-found": ("medium", "warning"),
            "id-preserved": ("high", "error")}


@dataclass
class Run:
    """One CLI run with every report written."""

    result: subprocess.CompletedProcess[str]
    folder: Path
    report: dict[str, Any]
    sarif: dict[str, Any]
    junit: Path
    summary: str


def run_with_reports(folder: Path, args: list[str], command: list[str]) -> Run:
    """Run `mcpfuzz run` in an empty folder, writing the JSON, JUnit, SARIF and Markdown reports there."""
    result = run_cli([*args, "--json", "r.json", "--junit-xml", "out/r.xml", "--sarif", "r.sarif",
                      "--summary-md", "summary.md", "--", *command], cwd=folder)
    assert (folder / "r.json").is_file(), f"exit {result.returncode}\n{result.stdout}\n{result.stderr}"
    return Run(result, folder, json.loads((folder / "r.json").read_text()),
               json.loads((folder / "r.sarif").read_text()), folder / "out" / "r.xml",
               (folder / "summary.md").read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def sarif_validator() -> jsonschema.Draft4Validator:
    """The official SARIF 2.1.0 schema (draft-04), with the format checks jsonschema has."""
    schema = json.loads((SCHEMAS / "sarif-schema-2.1.0.json").read_text())
    validator = jsonschema.Draft4Validator(schema, format_checker=jsonschema.Draft4Validator.FORMAT_CHECKER)
    assert not validator.is_valid({"version": "2.1.0", "runs": [{"tool": {"driver": {}}}]}), "schema too lax"
    return validator


@pytest.fixture(scope="module")
def junit_schema() -> xmlschema.XMLSchema:
    """Jenkins' JUnit XSD (the Ant/surefire dialect CI test views read)."""
    schema = xmlschema.XMLSchema(str(SCHEMAS / "junit-10.xsd"))
    assert not schema.is_valid('<testsuite name="x" tests="1"/>'), "XSD too lax"
    return schema


@pytest.fixture(scope="module")
def bug_run(tmp_path_factory: pytest.TempPathFactory) -> Run:
    """A server with three bugs, failing at high: one failure, two findings below the threshold."""
    run = run_with_reports(tmp_path_factory.mktemp("bugs"), [*RUN, "--seed", "7", "--fail-on", "high"],
                           [sys.executable, str(MCP_SERVER), *BUGS])
    assert run.result.returncode == 1, run.result.stderr
    assert {f["oracle"]: f["severity"] for f in run.report["findings"]} == {o: s for o, (s, _) in EXPECTED.items()}
    return run


@pytest.fixture(scope="module")
def clean_run(tmp_path_factory: pytest.TempPathFactory) -> Run:
    """The spec-correct server: nothing to report."""
    run = run_with_reports(tmp_path_factory.mktemp("clean"), [*RUN, "--seed", "7"], [sys.executable, str(MCP_SERVER)])
    assert run.result.returncode == 0, run.result.stdout + run.result.stderr
    return run


def test_sarif_has_a_rule_per_oracle_and_a_located_result_per_finding(
        bug_run: Run, sarif_validator: jsonschema.Draft4Validator) -> None:
    sarif_validator.validate(bug_run.sarif)
    (run,) = bug_run.sarif["runs"]
    driver = run["tool"]["driver"]
    assert (driver["name"], driver["version"]) == ("mcpfuzz", bug_run.report["mcpfuzz"])
    rules = driver["rules"]
    assert [r["id"] for r in rules] == list(ORACLES)
    titles = {oracle_id: oracle.title for oracle_id, oracle in all_oracles().items()}
    assert all(r["shortDescription"]["text"] == titles[r["id"]] and r["help"]["text"] for r in rules)
    levels = {r["id"]: r["defaultConfiguration"]["level"] for r in rules}
    assert (levels["no-crash"], levels["notification-silent"]) == ("error", "warning")
    assert levels == {oracle_id: LEVELS[oracle.severity] for oracle_id, oracle in all_oracles().items()}
    by_fingerprint = {f["fingerprint"]: f for f in bug_run.report["findings"]}
    assert len(run["results"]) == len(by_fingerprint) == 3
    for result in run["results"]:
        finding = by_fingerprint[result["partialFingerprints"]["mcpfuzz/v1"]]
        assert rules[result["ruleIndex"]]["id"] == result["ruleId"] == finding["oracle"]
        assert result["level"] == EXPECTED[finding["oracle"]][1]
        assert finding["message"] in result["message"]["text"]
        # GitHub refuses an upload whose results lack a physical location with a URI.
        (location,) = result["locations"]
        artifact = location["physicalLocation"]["artifactLocation"]
        assert artifact == {"uri": finding["corpus_path"], "uriBaseId": "%SRCROOT%"}
        assert (bug_run.folder / artifact["uri"]).is_file()
        assert location["logicalLocations"][0]["name"] == finding["target"]
        assert result["properties"]["replay"] == f"mcpfuzz replay {finding['corpus_path']}"


def test_sarif_location_without_a_transcript(bug_run: Run, sarif_validator: jsonschema.Draft4Validator) -> None:
    """No transcript: the server's script when its command names one in the checkout, else a logical location."""
    report = copy.deepcopy(bug_run.report)
    for finding in report["findings"]:
        finding["corpus_path"] = None
    report["server"] = f"{sys.executable} {MCP_SERVER.relative_to(REPO_ROOT)} --bug id-coerce"
    log = sarif_log(report, ORACLES, root=REPO_ROOT)
    sarif_validator.validate(log)
    uris = {r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for r in log["runs"][0]["results"]}
    assert uris == {"tests/servers/mcp_server.py"}
    report["server"] = f"{sys.executable} -m mcpfuzz.example"
    log = sarif_log(report, ORACLES, root=REPO_ROOT)
    sarif_validator.validate(log)
    locations = [r["locations"][0] for r in log["runs"][0]["results"]]
    assert all("physicalLocation" not in loc and loc["logicalLocations"] for loc in locations)


def test_junit_fails_per_oracle_and_target_at_the_threshold(bug_run: Run, junit_schema: xmlschema.XMLSchema) -> None:
    junit_schema.validate(str(bug_run.junit))
    root = ET.parse(bug_run.junit).getroot()
    (suite,) = root.findall("testsuite")
    cases = suite.findall("testcase")
    assert suite.get("tests") == root.get("tests") == str(len(cases)) == str(len(ORACLES))
    assert (suite.get("failures"), suite.get("errors")) == ("1", "0")
    by_oracle = {case.get("classname").removeprefix("mcpfuzz."): case for case in cases}
    assert set(by_oracle) == set(ORACLES)
    findings = {f["oracle"]: f for f in bug_run.report["findings"]}
    # Only the high finding reaches --fail-on high: the exit status and the test view agree.
    failing = by_oracle["id-preserved"]
    finding = findings["id-preserved"]
    assert failing.get("name") == finding["target"] == "id/string-digits"
    failure = failing.find("failure")
    assert failure is not None and finding["message"] in failure.get("message")
    for part in (finding["expected"], *finding["received"], finding["reproducer"]["shell"],
                 f"mcpfuzz replay {finding['corpus_path']}"):
        assert part in failure.text
    for oracle_id in ("parse-error", "method-not-found"):
        case = by_oracle[oracle_id]
        assert case.get("name") == findings[oracle_id]["target"] and case.find("failure") is None
        assert "below --fail-on high" in case.find("system-out").text
    quiet = [case for oracle_id, case in by_oracle.items() if oracle_id not in findings]
    assert all(case.get("name") == "no finding" and not case.findall("failure") for case in quiet)


def test_summary_totals_findings_and_a_replay_line_that_works(bug_run: Run) -> None:
    summary = bug_run.summary
    for severity, number in (("critical", 0), ("high", 1), ("medium", 1), ("low", 1)):
        assert f"| {severity} | {number} |" in summary
    rows = [line for line in summary.splitlines() if line.startswith("| ") and "`" in line]
    assert len(rows) == 3 and rows[0].startswith("| high | `id-preserved` | `id/string-digits` |")
    assert "seed `7`" in summary and "**3 findings**, 1 at or above `--fail-on high`" in summary
    replays = [line for line in summary.splitlines() if line.startswith("mcpfuzz replay ")]
    assert sorted(replays) == sorted(f"mcpfuzz replay {f['corpus_path']}" for f in bug_run.report["findings"])
    high = next(line for line in replays if "id-preserved" in line)
    replayed = run_cli(["replay", high.split()[-1]], cwd=bug_run.folder)
    assert replayed.returncode == 1 and "FAILED" in replayed.stdout, replayed.stdout + replayed.stderr


def test_clean_server_gives_no_failure_and_no_result(
        clean_run: Run, sarif_validator: jsonschema.Draft4Validator, junit_schema: xmlschema.XMLSchema) -> None:
    sarif_validator.validate(clean_run.sarif)
    junit_schema.validate(str(clean_run.junit))
    assert clean_run.sarif["runs"][0]["results"] == []
    assert len(clean_run.sarif["runs"][0]["tool"]["driver"]["rules"]) == len(ORACLES)
    suite = ET.parse(clean_run.junit).getroot().find("testsuite")
    assert (suite.get("tests"), suite.get("failures"), suite.get("errors")) == (str(len(ORACLES)), "0", "0")
    assert clean_run.summary.startswith("## mcpfuzz: passed") and "| high | 0 |" in clean_run.summary


def test_unusable_server_is_an_error_and_unwritable_paths_exit_2(
        sarif_validator: jsonschema.Draft4Validator, junit_schema: xmlschema.XMLSchema, tmp_path: Path) -> None:
    (tmp_path / "run").mkdir()
    run = run_with_reports(tmp_path / "run", RUN, [sys.executable, str(HOSTILE), "exit-at-once"])
    assert run.result.returncode == 2
    sarif_validator.validate(run.sarif)
    junit_schema.validate(str(run.junit))
    (invocation,) = run.sarif["runs"][0]["invocations"]
    assert invocation["executionSuccessful"] is False and "status 3" in run.report["error"]
    # Nothing ran, so no oracle may show as passing: one error case and nothing else.
    cases = ET.parse(run.junit).getroot().iter("testcase")
    assert [(case.get("name"), case[0].tag) for case in cases] == [("server can be tested", "error")]
    assert "could not be tested" in run.summary and "fatal: config file missing" in run.summary
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    result = cli_in_process([*RUN, "--sarif", str(blocker / "r.sarif"), "--", sys.executable, str(MCP_SERVER)],
                            cwd=tmp_path)
    assert result.returncode == 2 and f"cannot write the SARIF report to {blocker / 'r.sarif'}" in result.stderr


def test_hostile_text_keeps_every_report_well_formed(bug_run: Run, junit_schema: xmlschema.XMLSchema) -> None:
    """Servers and tool names say anything: NUL, ESC, a lone surrogate, table pipes, HTML, newlines."""
    report = copy.deepcopy(bug_run.report)
    nasty = "a\x00b\x1b[31m|c\ud800 <script>`x`</script>\nnext & | end"
    for finding in report["findings"]:
        finding["message"] = finding["target"] = nasty
        finding["received"] = [nasty]
    document = junit_xml(report, ORACLES)
    junit_schema.validate(document)
    failure = ET.fromstring(document).find(".//failure")
    assert failure is not None and "a\\x00b\\x1b[31m|c\\ud800 <script>" in failure.get("message")
    summary = summary_markdown(report)
    summary.encode("utf-8")  # a lone surrogate would make writing fail
    rows = [line for line in summary.splitlines() if line.startswith(("| low", "| medium", "| high"))
            and "\\|" in line]
    assert len(rows) == 3
    # Exactly the table's own six separators remain unescaped on each row.
    assert all(line.replace("\\|", "").count("|") == 6 and "<script>" not in line for line in rows)
    assert json.loads(json.dumps(sarif_log(report, ORACLES)))["runs"][0]["results"][0]["message"]
