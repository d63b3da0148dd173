"""sandbox-escape: a file server that checks its root with `startswith` (no separator) is caught under --security.

The payloads that aim at the canaries are coverage calls, so a run of the coverage phase alone sends every one of
them; the clean twin (a common-path check) gets the same calls and more and is never reported.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest

from tests.conftest import SERVERS_DIR, run_cli

pytestmark = pytest.mark.slow

SANDBOX = [sys.executable, str(SERVERS_DIR / "sandbox_server.py"), "--root", "{workspace}"]
SECURITY_ORACLES = {"sandbox-escape", "command-injection"}


def workspace_of(out: str) -> Path:
    """The workspace a run gave its server, read from the command in its header."""
    found = re.search(r"(\S*mcpfuzz-workspace-[^/\s]+)/workspace", out)
    assert found is not None, out
    return Path(found.group(1))


def report_of(tmp_path: Path, *args: str) -> tuple[int, str, dict]:
    """Run mcpfuzz with ARGS; the exit status, the console output and the JSON report."""
    report = tmp_path / "report.json"
    result = run_cli(["run", "--json", str(report), "--seed", "3", *args], timeout=240)
    return result.returncode, result.stdout, json.loads(report.read_text())


def test_startswith_root_check_is_an_escape(tmp_path: Path) -> None:
    status, out, report = report_of(tmp_path, "--security", "--phases", "coverage", "--budget", "120", "--",
                                    *SANDBOX, "--bug", "startswith")
    escapes = [f for f in report["findings"] if f["oracle"] == "sandbox-escape"]
    assert status == 1, out
    assert len(escapes) == 1
    assert escapes[0]["target"] == "tool/read_file"
    assert escapes[0]["severity"] == "high"
    # Seen by the hook in the server: the read outside, whatever the answer held.
    assert "outside the folders it was given" in escapes[0]["message"]
    assert "security oracles on" in out
    assert report["security"] is True
    assert not workspace_of(out).exists()  # the run removed the folders it planted


def test_clean_twin_has_no_escape(tmp_path: Path) -> None:
    status, out, report = report_of(tmp_path, "--security", "--phases", "coverage,fuzz", "--max-examples", "20",
                                    "--budget", "200", "--",
                                    *SANDBOX)
    assert [f for f in report["findings"] if f["oracle"] in SECURITY_ORACLES] == []
    assert report["findings"] == [], out
    assert status == 0, out


def test_without_security_nothing_is_looked_for(tmp_path: Path) -> None:
    root = tmp_path / "root"
    (root / "inside").mkdir(parents=True)
    (root / "inside-private").mkdir()
    (root / "inside-private" / "secret.txt").write_text("mcpfuzz-canary-sibling-0123456789abcdef\n")
    command = [sys.executable, str(SERVERS_DIR / "sandbox_server.py"), "--root", str(root / "inside"),
               "--bug", "startswith"]
    status, out, report = report_of(tmp_path, "--phases", "coverage", "--budget", "120", "--cwd",
                                    str(root / "inside"), "--", *command)
    assert [f for f in report["findings"] if f["oracle"] in SECURITY_ORACLES] == []
    assert "security oracles off" in out
    assert report["security"] is False
    assert status == 0, out


def test_the_workspace_placeholder_needs_security() -> None:
    result = run_cli(["run", "--budget", "10", "--", *SANDBOX])
    assert result.returncode == 2
    assert "{workspace}" in result.stderr and "--security" in result.stderr
