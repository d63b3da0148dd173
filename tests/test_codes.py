"""Every oracle has one stable code, documented, shown in every report, and explained by `mcpfuzz explain`."""

from __future__ import annotations

import re

import pytest
from click.testing import CliRunner

from mcpfuzz.cli.main import main
from mcpfuzz.jsonrpc.oracle_ids import OracleId
from mcpfuzz.report.codes import BY_CODE, BY_ORACLE, RULES, code_of, codes_markdown, find_rule
from mcpfuzz.report.junit import details
from mcpfuzz.report.sarif import sarif_rule
from tests.conftest import REPO_ROOT

pytestmark = pytest.mark.unit

CODE = re.compile(r"^MF-[A-Z]+-\d{3}$")


def test_every_oracle_id_has_exactly_one_code() -> None:
    """One row per OracleId member (a new oracle without its row fails here), codes unique and well formed."""
    missing = [oracle.value for oracle in OracleId if oracle.value not in BY_ORACLE]
    assert not missing, f"add a row to RULES in mcpfuzz/report/codes.py for: {', '.join(missing)}"
    assert len(BY_ORACLE) == len(RULES), "an oracle has two rows"
    assert len(BY_CODE) == len(RULES), "a code is given twice"
    assert not set(BY_ORACLE) - {oracle.value for oracle in OracleId}, "a row names no oracle"
    for rule in RULES:
        assert CODE.match(rule.code), rule.code
        assert rule.level and rule.source and rule.why, rule.oracle


def test_every_code_is_documented() -> None:
    """docs/codes.md lists each code with its oracle, once (regenerate: python -m mcpfuzz.report.codes)."""
    text = (REPO_ROOT / "docs" / "codes.md").read_text(encoding="utf-8")
    assert text == codes_markdown(), "regenerate docs/codes.md: python -m mcpfuzz.report.codes > docs/codes.md"
    rows = dict(re.findall(r"^\| `(MF-[A-Z]+-\d{3})` \| `([a-z-]+)` \|", text, re.MULTILINE))
    assert rows == {rule.code: rule.oracle for rule in RULES}


def test_codes_show_beside_the_oracle_id() -> None:
    """JUnit's failure text and the SARIF rule's metadata (the console and the JSON report: test_reports)."""
    assert code_of("no-such-oracle") == ""
    finding = {"severity": "high", "oracle": "id-preserved", "target": "id/x", "message": "m",
               "reproducer": {"shell": "printf x | server"}}
    assert "code:     MF-ID-001 (`mcpfuzz explain MF-ID-001`)" in details(finding, True, "medium")
    rule = sarif_rule("id-preserved")
    assert rule["id"] == "id-preserved" and rule["properties"]["code"] == "MF-ID-001"
    assert "mcpfuzz explain MF-ID-001" in rule["help"]["text"]
    assert find_rule("mf-id-001") is find_rule("id-preserved") is BY_CODE["MF-ID-001"]


def test_explain_prints_the_rule_its_source_the_fixes_and_how_to_silence_it() -> None:
    """By code or oracle id; an SDK known to ship the behaviour is named with its upstream link; a typo is exit 2."""
    runner = CliRunner()
    done = runner.invoke(main, ["explain", "MF-RPC-001"])
    assert done.exit_code == 0, done.output
    for words in ("parse-error", "JSON-RPC 2.0 section 5.1", "(MUST)", "why:", "python SDK",
                  "https://github.com/modelcontextprotocol/python-sdk/issues/2751", "--exclude-oracles parse-error",
                  "--baseline"):
        assert words in done.output, words
    assert runner.invoke(main, ["explain", "list-identity"]).output.startswith("MF-LIST-001")
    snap = runner.invoke(main, ["explain", "MF-SNAP-001"])
    assert snap.exit_code == 0 and "item removed" in snap.output
    wrong = runner.invoke(main, ["explain", "MF-ID-01"])
    assert wrong.exit_code == 2 and "MF-ID-001" in wrong.output


def test_the_console_line_and_the_json_report_carry_the_code() -> None:
    """The finding line keeps `SEVERITY oracle on target:` for scripts, with the code at its end; the JSON report
    has `code` beside `oracle`."""
    from rich.console import Console

    from mcpfuzz.engine.events import Finding
    from mcpfuzz.oracles.base import Severity
    from mcpfuzz.report.finding_console import FindingPrinter, Verbosity
    from mcpfuzz.report.json_report import finding_json
    from mcpfuzz.transport.stdio_target import StdioTarget

    found = Finding("no-crash", Severity.CRITICAL, "Server process died", "the server exited", "tool/search",
                    "a call", "an answer", (b'{"jsonrpc":"2.0","id":1,"method":"ping"}',), ("<exit 1>",), "crash:x")
    for verbosity in (Verbosity.QUIET, Verbosity.NORMAL):
        console = Console(record=True, width=200, highlight=False)
        FindingPrinter(console, StdioTarget(("server",)), "mcpfuzz", 1, verbosity).full(1, found, None)
        first = console.export_text().strip().splitlines()[0]
        assert first.startswith("1. CRITICAL no-crash on tool/search") and first.endswith("[MF-RES-002]"), first
    report = finding_json(found, StdioTarget(("server",)))
    assert report["oracle"] == "no-crash" and report["code"] == "MF-RES-002"
