"""`mcpfuzz snapshot` on a real mcp 2.x server whose surface drifts between releases (MCPFUZZ_DRIFT)."""

from __future__ import annotations

import json
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from tests.conftest import REPO_ROOT, run_cli

pytestmark = [pytest.mark.slow, pytest.mark.sdk]

SERVER = [sys.executable, str(REPO_ROOT / "tests" / "sdk_servers" / "sdk2_drift_server.py")]


def snapshot(*args: str, drift: str = "", cwd: Path | None = None) -> tuple[int, str, str]:
    done = run_cli(["snapshot", *args, "--", *SERVER], env={"MCPFUZZ_DRIFT": drift}, cwd=cwd)
    return done.returncode, done.stdout, done.stderr


@pytest.fixture(scope="module")
def first(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The first release's snapshot, written by `mcpfuzz snapshot --output`."""
    path = tmp_path_factory.mktemp("snap") / "surface.json"
    status, _, err = snapshot("--output", str(path))
    assert status == 0, err
    return path


def test_the_snapshot_is_the_whole_surface_sorted_and_stable(first: Path) -> None:
    """Tools with schemas and annotations, prompts with arguments, resources, templates, server and era; the same
    server gives the same bytes."""
    surface = json.loads(first.read_text())
    assert list(surface) == sorted(surface)
    assert sorted(surface["tools"]) == ["delete_note", "scale", "search"]
    search = surface["tools"]["search"]
    assert search["annotations"] == {"readOnlyHint": True}
    assert search["inputSchema"]["required"] == ["query"]
    assert search["inputSchema"]["properties"]["mode"]["enum"] == ["fast", "full"]
    assert sorted(search["outputSchema"]["properties"]) == ["hits", "total"]
    assert surface["prompts"]["summarize"]["arguments"] == {"style": {"required": False},
                                                            "topic": {"required": True}}
    assert list(surface["resources"]) == ["notes://static/welcome"]
    assert list(surface["resourceTemplates"]) == ["notes://by-title/{title}"]
    assert surface["server"] == {"name": "sdk2-drift-server", "version": "1.0.0"}
    assert surface["protocol"]["era"] in ("legacy", "modern") and "tools" in surface["capabilities"]
    status, again, err = snapshot()
    assert status == 0, err
    assert again == first.read_text()
    status, legacy, err = snapshot("--protocol-version", "2025-11-25")
    assert status == 0, err
    legacy_surface = json.loads(legacy)
    assert legacy_surface["protocol"] == {"era": "legacy", "version": "2025-11-25"}
    assert legacy_surface["tools"] == surface["tools"] and legacy_surface["prompts"] == surface["prompts"]


def test_a_breaking_release_fails_the_check_with_every_change_ranked(first: Path, tmp_path: Path) -> None:
    """Removed tool and prompt, new required arguments, a narrowed type, an enum value gone, read-only lost, an
    output field gone: exit 1, a diff per item, and the same changes in JSON, SARIF and JUnit."""
    reports = {name: tmp_path / f"check.{name}" for name in ("json", "sarif", "xml")}
    status, out, err = snapshot("--check", str(first), "--json", str(reports["json"]), "--sarif",
                                str(reports["sarif"]), "--junit-xml", str(reports["xml"]), drift="breaking")
    assert status == 1, err
    for line in ("tool/delete_note", "prompt/greet", "new required argument `lang`",
                 "new required argument `audience`", "type number -> integer", 'enum value "full" removed',
                 "readOnlyHint false (no longer read-only)", "output field `total` removed"):
        assert line in out, line
    changes = json.loads(reports["json"].read_text())["changes"]
    breaking = {(c["item"], c["kind"]) for c in changes if c["impact"] == "breaking"}
    assert breaking == {("tool/delete_note", "item-removed"), ("prompt/greet", "item-removed"),
                        ("tool/search", "argument-required"), ("tool/search", "argument-removed"),
                        ("tool/search", "enum-value-removed"), ("tool/search", "hint-weakened"),
                        ("tool/search", "output-field-removed"), ("tool/scale", "type-narrowed"),
                        ("prompt/summarize", "argument-required")}
    assert {c["impact"] for c in changes if c["item"] == "server"} == {"cosmetic"}
    sarif = json.loads(reports["sarif"].read_text())["runs"][0]
    rule_ids = [rule["id"] for rule in sarif["tool"]["driver"]["rules"]]
    assert len(sarif["results"]) == len(changes)
    assert all(result["ruleId"] == rule_ids[result["ruleIndex"]] for result in sarif["results"])
    assert {r["level"] for r in sarif["results"] if r["properties"]["impact"] == "breaking"} == {"error"}
    cases = {case.get("name"): case for case in ET.parse(reports["xml"]).iter("testcase")}
    failed = {name for name, case in cases.items() if case.find("failure") is not None}
    assert failed == {"tool/delete_note", "tool/search", "tool/scale", "prompt/greet", "prompt/summarize"}
    assert "resource/notes://static/welcome" in cases


def test_cosmetic_and_compatible_releases_pass_unless_fail_on_says_otherwise(first: Path) -> None:
    """Descriptions only: cosmetic, exit 0 (1 with --fail-on any); additions and a widened type: compatible."""
    status, out, _ = snapshot("--check", str(first), drift="cosmetic")
    assert status == 0 and "COSMETIC" in out and "description changed" in out and "BREAKING" not in out
    assert snapshot("--check", str(first), "--fail-on", "any", drift="cosmetic")[0] == 1
    status, out, _ = snapshot("--check", str(first), drift="compatible")
    assert status == 0 and "BREAKING" not in out
    for line in ("tool/archive_note", "new optional argument `precision`", "type number -> number|string",
                 "resource/notes://static/readme"):
        assert line in out, line
    assert snapshot("--check", str(first), "--fail-on-change", "compatible", drift="compatible")[0] == 1


def test_update_records_the_new_surface(first: Path, tmp_path: Path) -> None:
    """--update shows the diff, rewrites the file and exits 0; the next check finds no change. A missing file is
    exit 2 with the way to write it."""
    path = tmp_path / "surface.json"
    path.write_text(first.read_text())
    status, out, _ = snapshot("--check", str(path), "--update", drift="breaking")
    assert status == 0 and "tool/delete_note" in out and f"updated {path}" in out
    assert "delete_note" not in json.loads(path.read_text())["tools"]
    status, out, _ = snapshot("--check", str(path), drift="breaking")
    assert status == 0 and "no change" in out
    status, _, err = snapshot("--check", str(tmp_path / "none.json"))
    assert status == 2 and "--update" in err


def test_run_checks_the_snapshot_too(first: Path, tmp_path: Path) -> None:
    """`run --snapshot FILE`: the surface is checked before fuzzing, printed, and added to the run's reports; a
    breaking change fails a clean run."""
    reports = {name: tmp_path / f"run.{name}" for name in ("json", "sarif", "xml")}
    args = ["run", "--snapshot", str(first), "--phases", "lifecycle", "--fail-on", "critical", "--budget", "30",
            "--no-replay", "--json", str(reports["json"]), "--sarif", str(reports["sarif"]), "--junit-xml",
            str(reports["xml"]), "--"]
    done = run_cli([*args, *SERVER], env={"MCPFUZZ_DRIFT": "breaking"})
    assert done.returncode == 1, done.stderr
    assert "tool/delete_note" in done.stdout and "BREAKING" in done.stdout
    report = json.loads(reports["json"].read_text())
    assert report["snapshot"]["failed"] and report["snapshot"]["counts"]["breaking"] == 9
    sarif_runs = json.loads(reports["sarif"].read_text())["runs"]
    assert len(sarif_runs) == 2 and all(r["ruleId"].startswith("MF-SNAP-") for r in sarif_runs[1]["results"])
    suites = {suite.get("name") for suite in ET.parse(reports["xml"]).iter("testsuite")}
    assert "mcpfuzz.snapshot" in suites and len(suites) == 2
    done = run_cli([*args, *SERVER], env={"MCPFUZZ_DRIFT": "cosmetic"})
    assert done.returncode == 0, done.stdout + done.stderr
