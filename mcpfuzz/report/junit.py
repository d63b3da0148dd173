"""JUnit XML report (the Ant/Jenkins dialect CI test views read), built from the JSON report."""

from __future__ import annotations

import re
import shlex
import xml.etree.ElementTree as ET
from collections.abc import Sequence
from pathlib import Path

from mcpfuzz.oracles.base import Severity, all_oracles
from mcpfuzz.report.codes import code_of
from mcpfuzz.report.json_report import write_atomic

SUITE = "mcpfuzz"
# XML 1.0 section 2.2: characters outside these ranges cannot appear in a document at all, not even
# as references; a server's reply may contain any of them (NUL, ESC, a lone surrogate).
_NOT_XML = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")
PASSED_NAME = "no finding"
PROPERTIES = ("seed", "server", "protocolVersion", "era", "failOn", "stopped", "mcpfuzz")


def xml_text(text: str) -> str:
    """Text that XML can carry: characters XML forbids become visible escapes (`\\x00`, `\\ud800`)."""

    def escape(match: re.Match[str]) -> str:
        code = ord(match.group())
        return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"

    return _NOT_XML.sub(escape, text)


def details(finding: dict, fails: bool, fail_on: str) -> str:
    """A finding in full, as the console prints it: what was sent, expected, received, how to reproduce."""
    verdict = f"at or above --fail-on {fail_on}" if fails else f"below --fail-on {fail_on}: reported, not failing"
    lines = [
        f"{finding['severity']} {finding['oracle']} on {finding['target']} ({finding.get('case') or ''})",
        f"severity: {finding['severity']} ({verdict})",
        *([f"code:     {code_of(finding['oracle'])} (`mcpfuzz explain {code_of(finding['oracle'])}`)"]
          if code_of(finding["oracle"]) else []),
        f"message:  {finding['message']}",
        f"expected: {finding.get('expected') or ''}",
        "received:",
        *(f"  {line}" for line in finding.get("received") or ["(nothing)"]),
        "reproduce:",
        f"  {finding['reproducer']['shell']}",
    ]
    if finding.get("corpus_path"):
        lines.append(f"  mcpfuzz replay {shlex.quote(finding['corpus_path'])}")
    lines.extend(f"note: {note}" for note in finding["reproducer"].get("notes", []))
    return "\n".join(lines) + "\n"


def finding_case(finding: dict, name: str, fail_on: str) -> ET.Element:
    """One test case for one finding: a failure at or above --fail-on, a pass with the details below it.

    A finding below the threshold does not fail the exit status, so it must not turn a CI test view red.
    """
    case = ET.Element("testcase", classname=f"{SUITE}.{finding['oracle']}", name=xml_text(name))
    fails = Severity.parse(finding["severity"]) >= Severity.parse(fail_on) and finding.get("reproducible") is not False
    text = xml_text(details(finding, fails, fail_on))
    if fails:
        failure = ET.SubElement(case, "failure", type=finding["oracle"],
                                message=xml_text(f"{finding['severity']}: {finding['message']}"))
        failure.text = text
    else:
        ET.SubElement(case, "system-out").text = text
    return case


def case_names(findings: Sequence[dict]) -> list[str]:
    """Test case names: the target, plus the fingerprint when one oracle fired twice on one target."""
    pairs = [(f["oracle"], f["target"]) for f in findings]
    return [f["target"] if pairs.count(pair) == 1 else f"{f['target']} [{f['fingerprint']}]"
            for f, pair in zip(findings, pairs, strict=True)]


def junit_tree(report: dict, oracles: Sequence[str]) -> ET.Element:
    """The `<testsuites>` document: a case per oracle and target that failed, a passing one per quiet oracle."""
    fail_on = report["failOn"]
    findings = report["findings"]
    suite = ET.Element("testsuite", name=SUITE)
    properties = ET.SubElement(suite, "properties")
    for key in PROPERTIES:
        if report.get(key) is not None:
            ET.SubElement(properties, "property", name=key, value=xml_text(str(report[key])))
    cases = [finding_case(f, name, fail_on) for f, name in zip(findings, case_names(findings), strict=True)]
    errors = 0
    if report["error"]:
        # The server could not be tested: nothing ran, so no oracle may be shown as passing.
        case = ET.Element("testcase", classname=f"{SUITE}.run", name="server can be tested")
        ET.SubElement(case, "error", type="unusable-server", message=xml_text(report["error"].splitlines()[0]))
        case[0].text = xml_text(report["error"])
        cases.append(case)
        errors = 1
    else:
        fired = {f["oracle"] for f in findings}
        titles = {oracle_id: oracle.title for oracle_id, oracle in all_oracles().items()}
        for oracle_id in oracles:
            if oracle_id not in fired:
                case = ET.Element("testcase", classname=f"{SUITE}.{oracle_id}", name=PASSED_NAME)
                ET.SubElement(case, "system-out").text = f"{titles.get(oracle_id, oracle_id)}: never fired\n"
                cases.append(case)
    suite.extend(cases)
    failures = sum(1 for case in cases if case.find("failure") is not None)
    duration = f"{float(report['stats'].get('duration_s', 0.0)):.3f}"
    counts = {"tests": str(len(cases)), "failures": str(failures), "errors": str(errors), "time": duration}
    suite.attrib.update({**counts, "skipped": "0"})
    root = ET.Element("testsuites", {"name": SUITE, **counts})
    root.append(suite)
    ET.indent(root)
    return root


def junit_xml(report: dict, oracles: Sequence[str]) -> str:
    """The JUnit XML document as text."""
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(junit_tree(report, oracles),
                                                                   encoding="unicode") + "\n"


def write_junit(path: Path, report: dict, oracles: Sequence[str]) -> None:
    """Write the JUnit XML report atomically."""
    write_atomic(path, junit_xml(report, oracles))
