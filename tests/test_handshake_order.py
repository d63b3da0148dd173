"""The run's own handshake in the SDK clients' order, out-of-order frames as cases of their own, and restarts of a
server that does not come back: with back-off, given up on with a verdict (real processes)."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

import pytest

from mcpfuzz.engine.session.comebacks import RestartPolicy
from tests.conftest import SERVERS_DIR, run_cli

pytestmark = pytest.mark.slow

STRICT = SERVERS_DIR / "strict_handshake_server.py"
BROKEN = SERVERS_DIR / "broken_for_good_server.py"
FRAME_LOG = "frames.log"
# The case families whose frames are malformed lines (not JSON, not a JSON-RPC message, params not an object).
MALFORMED_FAMILIES = ("parse/", "envelope/", "params/", "frames/")


def report(folder: Path) -> dict[str, Any]:
    return json.loads((folder / "report.json").read_text())


def targets_of(finding: dict[str, Any]) -> list[str]:
    """The finding's own case and the others its cause was seen on."""
    return [finding["target"], *(finding.get("also_on") or [])]


def test_a_server_strict_about_the_handshake_is_fuzzed_and_its_crashes_are_findings(tmp_path: Path) -> None:
    """It exits on anything between its initialize answer and notifications/initialized, and on any malformed
    line: the run's own handshake never sends it anything there, so its tools are called and each crash is a case's
    critical finding, never the end of the run. The catalogue's malformed lines crash it and coverage calls its tools
    (counted examples end the run; the budget only bounds it)."""
    result = run_cli(["run", "--phases", "catalogue,coverage", "--max-examples", "5", "--budget", "120",
                      "--json", "report.json", "--log-frames", FRAME_LOG, "--",
                      sys.executable, str(STRICT)], cwd=tmp_path, timeout=300)
    output = result.stdout + result.stderr
    assert result.returncode == 1, output  # findings; never 2 (untested)
    data = report(tmp_path)
    assert data["error"] is None and data["untested"] is None, output
    assert data["stats"]["targets"].get("tool/echo", 0) > 0 and data["stats"]["targets"].get("tool/add", 0) > 0
    crashes = [f for f in data["findings"] if f["oracle"] == "no-crash"]
    assert all(f["severity"] == "critical" for f in crashes), crashes
    malformed = [f for f in crashes if any(t.startswith(MALFORMED_FAMILIES) for t in targets_of(f))]
    assert malformed and any("panicked" in f["message"] for f in malformed), crashes
    assert "exited during initialize" not in output and "during initialize" not in output
    # Every handshake of the run, first and after each restart: initialize, then notifications/initialized at once.
    frames = [json.loads(line) for line in (tmp_path / FRAME_LOG).read_bytes().splitlines() if line.startswith(b"{")
              and line.endswith(b"}") and _is_json(line)]
    after_initialize = [frames[i + 1] for i, frame in enumerate(frames[:-1])
                        if isinstance(frame, dict) and frame.get("method") == "initialize"
                        and isinstance(frame.get("id"), int) and frame["id"] >= 10_000]
    assert after_initialize and all(f.get("method") == "notifications/initialized" for f in after_initialize)


def _is_json(line: bytes) -> bool:
    try:
        json.loads(line)
    except ValueError:
        return False
    return True


def test_a_ping_before_initialized_is_a_lifecycle_case_of_its_own(tmp_path: Path) -> None:
    """The ping the run's handshake no longer sends is its own lifecycle case: the strict server's exit on it is a
    critical no-crash finding of that case, verified on a fresh server (its setup waits for initialize's answer)."""
    result = run_cli(["run", "--budget", "60", "--phases", "lifecycle", "--json", "report.json", "--",
                      sys.executable, str(STRICT)], cwd=tmp_path, timeout=180)
    output = result.stdout + result.stderr
    assert result.returncode == 1, output
    findings = report(tmp_path)["findings"]
    ping = [f for f in findings if f["target"] == "lifecycle/ping-before-initialized"]
    assert [(f["oracle"], f["severity"], f["reproducible"]) for f in ping] == [("no-crash", "critical", True)], findings
    assert "expected initialized notification" in ping[0]["message"]


@pytest.mark.parametrize("mode", ["exit", "silent"])
def test_a_server_that_never_comes_back_is_given_up_on_after_a_few_restarts(tmp_path: Path, mode: str) -> None:
    """Its tool `corrupt` crashes it and every later start exits at once (or never answers): it is restarted a few
    times with back-off, then lost with a verdict that counts the restarts; the phases after it are skipped."""
    state = tmp_path / "state"
    state.mkdir()
    result = run_cli(["run", "--budget", "120", "--timeout", "2", "--startup-timeout", "3", "--json", "report.json",
                      "--", sys.executable, str(BROKEN), mode], cwd=tmp_path, timeout=300,
                     env={"BROKEN_STATE_DIR": str(state)})
    output = result.stdout + result.stderr
    data = report(tmp_path)
    assert (state / "corrupted").exists(), output
    assert data["stopped"] == "server-unrecoverable", output  # not "budget": given up on, not waited out
    lost = data["stats"]["lost"]
    assert 1 <= lost["failed_in_a_row"] <= 10 and lost["restarts"] <= data["stats"]["restarts"]
    words = re.search(r"server lost after (\d+) restarts in a row", data["untested"])
    assert words is not None and int(words.group(1)) == lost["failed_in_a_row"], data["untested"]
    assert f"{data['stats']['restarts']} restarts" in result.stdout  # the console summary counts them too
    crashes = [f for f in data["findings"] if f["oracle"] == "no-crash"]
    assert [f["target"] for f in crashes] == ["tool/corrupt"], crashes
    assert result.returncode == 1, output  # a critical finding, and not fully tested
    skipped = {p["name"]: p.get("skipped", "") for p in data["stats"]["plan"]["phases"]}
    assert any("the server was lost" in why for why in skipped.values()), skipped


def test_a_server_that_crashes_on_every_call_but_always_comes_back_is_never_given_up_on(tmp_path: Path) -> None:
    """The limit is on failed comebacks in a row, not on restarts: a crash on every call, each followed by a start
    that completes the handshake, is restarted as often as it takes (coverage alone calls its tool a dozen times)."""
    result = run_cli(["run", "--budget", "120", "--max-examples", "5", "--phases", "coverage",
                      "--json", "report.json", "--",
                      sys.executable, str(SERVERS_DIR / "token_crash_server.py")], cwd=tmp_path, timeout=180,
                     env={"API_TOKEN": "not-a-secret"})
    data = report(tmp_path)
    assert data["stats"]["restarts"] > RestartPolicy().max_failed, result.stdout + result.stderr
    assert "lost" not in data["stats"] and data["stopped"] != "server-unrecoverable"
    assert data["stats"]["targets"].get("tool/connect", 0) > RestartPolicy().max_failed


def test_a_server_that_exits_on_initialized_is_untested_and_the_error_names_the_step(tmp_path: Path) -> None:
    """No client can complete a handshake with it: exit 2, and the error says it answered initialize, the frames it
    was sent after, its exit status, its last line on stdout and its stderr; never "during initialize"."""
    result = run_cli(["run", "--budget", "30", "--json", "report.json", "--", sys.executable, str(STRICT),
                      "--die-when-initialized"], cwd=tmp_path, timeout=180)
    output = result.stdout + result.stderr
    assert result.returncode == 2, output
    error = report(tmp_path)["error"]
    assert "the server exited with status 2 after answering initialize" in error, error
    assert "`notifications/initialized`" in error and "its last line on stdout" in error and '"result"' in error
    assert "failed to start the tool router" in error and "during initialize" not in output
