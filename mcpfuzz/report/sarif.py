"""SARIF 2.1.0 report for code scanning, built from the JSON report so the two never disagree."""

from __future__ import annotations

import os
import shlex
from collections.abc import Sequence
from pathlib import Path
from urllib.parse import quote

from mcpfuzz.oracles.base import Severity, all_oracles
from mcpfuzz.report.codes import code_of
from mcpfuzz.report.json_report import indented_json, write_atomic

SARIF_VERSION = "2.1.0"
SARIF_SCHEMA = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
DISTRIBUTION = "mcp-wirefuzz"
# SARIF result levels; GitHub shows them as error, warning and note alerts.
LEVELS = {Severity.CRITICAL: "error", Severity.HIGH: "error", Severity.MEDIUM: "warning", Severity.LOW: "note"}
FINGERPRINT_KEY = "mcpfuzz/v1"


def information_uri() -> str | None:
    """The project's home page from the installed package's metadata, when it declares one."""
    from importlib.metadata import PackageNotFoundError, metadata

    try:
        meta = metadata(DISTRIBUTION)
    except PackageNotFoundError:
        return None
    for entry in meta.get_all("Project-URL") or []:
        label, _, url = entry.partition(",")
        if label.strip().lower() in ("homepage", "home", "repository", "source", "documentation"):
            return url.strip()
    home = meta.get_all("Home-page")
    return home[0] if home else None


def level_of(severity: str) -> str:
    """SARIF level of an mcpfuzz severity: critical/high error, medium warning, low note."""
    return LEVELS[Severity.parse(severity)]


def rule_name(oracle_id: str) -> str:
    """A rule's name in PascalCase (SARIF wants an identifier a person understands, not prose)."""
    return "".join(part.capitalize() for part in oracle_id.split("-"))


def sarif_rule(oracle_id: str) -> dict:
    """One reportingDescriptor per oracle: id, title, what it checks, default level."""
    oracle = all_oracles().get(oracle_id)
    title = oracle.title if oracle else oracle_id
    checks = oracle.description if oracle else ""
    # The worst severity the oracle reports; every result carries its own level too, so this only
    # matters to viewers that show rules alone.
    default = oracle.severity if oracle else Severity.MEDIUM
    help_text = (f"{title}. {checks} Each result names its target (a tool or a frame family), points at the "
                 "saved transcript and carries a shell reproduction in its properties; `mcpfuzz replay FILE` "
                 f"re-runs the transcript on a fresh server. `--exclude-oracles {oracle_id}` skips this check.")
    rule: dict = {
        "id": oracle_id,
        "name": rule_name(oracle_id),
        "shortDescription": {"text": title},
        "help": {"text": help_text},
        "defaultConfiguration": {"level": LEVELS[default]},
        "properties": {"tags": ["mcp", "json-rpc", "robustness"]},
    }
    code = code_of(oracle_id)
    if code:  # the stable code a team quotes; `mcpfuzz explain CODE` says what to do about it
        rule["properties"]["code"] = code
        rule["help"]["text"] += (f" Code {code}: `mcpfuzz explain {code}` says where the rule comes from and how "
                                 "to fix it.")
    if checks:
        rule["fullDescription"] = {"text": checks}
    return rule


def artifact_location(path: str, root: Path) -> dict:
    """A file as SARIF wants it: relative to %SRCROOT% (the checkout) when inside it, an absolute URI otherwise."""
    resolved = (root / path).resolve()
    base = root.resolve()
    if resolved.is_relative_to(base):
        relative = resolved.relative_to(base).as_posix()
        return {"uri": quote(relative, safe="/"), "uriBaseId": "%SRCROOT%"}
    return {"uri": resolved.as_uri()}


def script_path(server: str, root: Path) -> str | None:
    """The server's script when its command names a file in the checkout (`python server.py`, `./server`).

    The arguments are tried before the executable, and files that resolve outside the checkout (an
    interpreter, even through `.venv/bin/python`) are skipped: they are not the server's code.
    """
    try:
        words = shlex.split(server)
    except ValueError:
        return None
    base = root.resolve()
    for word in [*words[1:], *words[:1]]:
        if word.startswith("-"):
            continue
        candidate = (root / word).resolve()
        if candidate.is_file() and candidate.is_relative_to(base):
            return os.path.relpath(candidate, base)
    return None


def logical_location(finding: dict) -> dict:
    """Where in the server the finding is: a tool, or a frame family of the protocol phases."""
    kind = "function" if finding.get("tool") else "resource"
    return {"name": finding["target"], "fullyQualifiedName": finding["target"], "kind": kind}


def result_location(finding: dict, script: str | None, root: Path) -> dict:
    """The location GitHub needs on every result: the transcript, else the server's script, else logical only.

    Code scanning refuses a whole upload whose results lack `physicalLocation.artifactLocation.uri`,
    so the transcript (written for every finding unless the corpus was unwritable) comes first.
    """
    location: dict = {"logicalLocations": [logical_location(finding)]}
    path = finding.get("corpus_path") or script
    if path:
        location["physicalLocation"] = {"artifactLocation": artifact_location(path, root),
                                        "region": {"startLine": 1}}
    return location


def sarif_result(finding: dict, rule_index: int, script: str | None, root: Path) -> dict:
    """One finding as a SARIF result."""
    corpus_path = finding.get("corpus_path")
    properties = {
        "severity": finding["severity"],
        "code": finding.get("code"),
        "target": finding["target"],
        "tool": finding.get("tool"),
        "case": finding.get("case"),
        "expected": finding.get("expected"),
        "received": finding.get("received", []),
        "reproduction": finding["reproducer"]["shell"],
        "replay": f"mcpfuzz replay {shlex.quote(corpus_path)}" if corpus_path else None,
    }
    return {
        "ruleId": finding["oracle"],
        "ruleIndex": rule_index,
        "kind": "fail",
        # A finding that did not fail again on a fresh server is a note, whatever its severity.
        "level": "note" if finding.get("reproducible") is False else level_of(finding["severity"]),
        "message": {"text": f"{finding['target']}: {finding['message']}"},
        "locations": [result_location(finding, script, root)],
        # Our fingerprint is the identity of the bug (oracle, target, key). GitHub matches alerts
        # across runs on primaryLocationLineHash and would otherwise hash the transcript's lines.
        "partialFingerprints": {FINGERPRINT_KEY: finding["fingerprint"],
                                "primaryLocationLineHash": f"{finding['fingerprint']}:1"},
        "properties": {name: value for name, value in properties.items() if value is not None},
    }


def sarif_log(report: dict, oracles: Sequence[str], root: Path | None = None) -> dict:
    """The SARIF log of one run: one rule per oracle that ran, one result per finding."""
    root = root or Path.cwd()
    registry = list(all_oracles())
    ran = set(oracles) | {f["oracle"] for f in report["findings"]}
    rule_ids = sorted(ran, key=lambda o: (registry.index(o) if o in registry else len(registry), o))
    script = script_path(report["server"], root)
    driver: dict = {"name": "mcpfuzz", "version": report["mcpfuzz"], "semanticVersion": report["mcpfuzz"]}
    uri = information_uri()
    if uri:
        driver["informationUri"] = uri
    driver["rules"] = [sarif_rule(oracle_id) for oracle_id in rule_ids]
    invocation: dict = {"executionSuccessful": not report["error"]}
    if report["error"]:
        invocation["toolExecutionNotifications"] = [{"level": "error", "message": {"text": report["error"]}}]
    run = {
        "tool": {"driver": driver},
        "invocations": [invocation],
        "results": [sarif_result(f, rule_ids.index(f["oracle"]), script, root) for f in report["findings"]],
        "properties": {key: report[key] for key in ("seed", "server", "protocolVersion", "era", "stats",
                                                    "stopped", "failOn")},
    }
    return {"$schema": SARIF_SCHEMA, "version": SARIF_VERSION, "runs": [run]}


def write_sarif(path: Path, report: dict, oracles: Sequence[str], root: Path | None = None) -> None:
    """Write the SARIF log atomically."""
    write_atomic(path, indented_json(sarif_log(report, oracles, root), 4) + "\n")  # a result a line
