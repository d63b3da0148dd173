"""Every target a run may call is called: long polls listed first (each call takes --timeout) and large schemas
(seconds to compute their coverage calls) leave the targets after them their first call."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import cli_env

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parent.parent
LONG_POLLS = ROOT / "tests" / "servers" / "long_poll_server.py"
TARGETS = {*(f"tool/poll_{letter}" for letter in "abcdef"), "tool/plot", "tool/save_note",
           "resource/ui://app/view.html"}


def test_targets_listed_after_long_polls_are_called(tmp_path: Path) -> None:
    """Six polls of --timeout 1 s each outlast the coverage phase's share of a 14 s budget: the first calls go on
    past it (a resource is read in the coverage phase only). The polls are never answered, so a short timeout judges
    nothing a slow machine could change."""
    report = tmp_path / "report.json"
    result = subprocess.run([sys.executable, "-m", "mcpfuzz.cli", "run", "--seed", "1", "--budget", "14",
                             "--timeout", "1", "--call-timeout", "1", "--phases", "coverage,fuzz", "--json",
                             str(report), "--corpus", str(tmp_path / "corpus"), "--", sys.executable,
                             str(LONG_POLLS)], capture_output=True, text=True, env=cli_env(), timeout=300, cwd=ROOT)
    assert result.returncode in (0, 1), result.stdout + result.stderr
    called = json.loads(report.read_text())["stats"]["targets"]
    assert {label for label in TARGETS if called.get(label)} == TARGETS, called
