"""command-injection: a server that pastes its argument into a shell command line is caught under --security.

The shell payloads are coverage calls of every free string property, each naming a file of its own in the canary
folder mcpfuzz watches; the argv twin gets the same calls and more and is never reported.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from tests.conftest import SERVERS_DIR
from tests.test_sandbox_escape import SECURITY_ORACLES, report_of, workspace_of

pytestmark = pytest.mark.slow

SHELL = [sys.executable, str(SERVERS_DIR / "shell_server.py")]


def test_shell_command_line_is_an_injection(tmp_path: Path) -> None:
    status, out, report = report_of(tmp_path, "--security", "--phases", "coverage", "--budget", "120", "--",
                                    *SHELL, "--root", "{workspace}", "--bug", "shell")
    injections = [f for f in report["findings"] if f["oracle"] == "command-injection"]
    assert status == 1, out
    assert len(injections) == 1  # one cause, however many shell forms ran
    assert injections[0]["target"] == "tool/greet"
    assert injections[0]["severity"] == "high"
    sent = "".join(frame for frame in injections[0]["reproducer"]["frames"])
    message = injections[0]["message"]
    if message.startswith("the file"):  # the hit file: its token is in the call that was sent
        name = message.split('"')[1]
        assert name.startswith("hit-") and name in sent
    else:  # the hook saw the shell start, its command line holding the call's input (a line break counts)
        assert message.startswith("a shell ran a command line holding the call's input"), message
        assert "exec(" in message and "/bin/sh" in message
    assert not workspace_of(out).exists()


def test_argv_twin_has_no_injection(tmp_path: Path) -> None:
    status, out, report = report_of(tmp_path, "--security", "--phases", "coverage,fuzz", "--max-examples", "20",
                                    "--budget", "200", "--",
                                    *SHELL, "--root", "{workspace}")
    assert [f for f in report["findings"] if f["oracle"] in SECURITY_ORACLES] == []
    assert report["findings"] == [], out
    assert status == 0, out


def test_without_security_nothing_is_looked_for(tmp_path: Path) -> None:
    status, out, report = report_of(tmp_path, "--phases", "coverage", "--budget", "120", "--cwd", str(tmp_path),
                                    "--", *SHELL, "--root", str(tmp_path), "--bug", "shell")
    assert [f for f in report["findings"] if f["oracle"] in SECURITY_ORACLES] == []
    assert "security oracles off" in out
    assert status == 0, out
