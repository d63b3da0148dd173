"""The `mcpfuzz` command end to end: real CLI subprocess, real server processes over real pipes."""

from __future__ import annotations

import json
import re
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import (
    EXAMPLE_COMMAND,
    MCP_SERVER,
    ORACLE_IDS,
    SEVERITIES,
    output_lines,
    run_cli,
)

pytestmark = pytest.mark.slow

# The protocol phases only: the tool phases would use the whole budget (tested below, ended by their examples).
RUN = ["run", "--timeout", "1", "--budget", "30", "--phases", "catalogue,lifecycle"]
# Tests of options and output, not of what a run finds on the clean server: the catalogue alone (a few seconds).
OPTION_RUN = ["run", "--timeout", "1", "--budget", "30", "--phases", "catalogue"]
# Every phase, each search ended by its one example (a budget no machine spends): all the example's bugs.
FULL_RUN = ["run", "--timeout", "1", "--max-examples", "1", "--budget", "300"]
CLEAN_COMMAND = [sys.executable, str(MCP_SERVER)]
ID_COERCE_COMMAND = [sys.executable, str(MCP_SERVER), "--bug", "id-coerce"]
# Two bugs, two oracles: selecting one of them has something to filter out.
TWO_BUG_COMMAND = [sys.executable, str(MCP_SERVER), "--bug", "id-coerce", "--bug", "stdout-noise"]
FINDING_HEADER = re.compile(r"^(\d+)\. (CRITICAL|HIGH|MEDIUM|LOW) (\S+) on ")
ANSI = "\x1b["
COLOUR_SGR = re.compile(r"\x1b\[([0-9;]*)m")


def load_report(path: Path) -> dict[str, Any]:
    """The JSON report a run wrote."""
    assert path.is_file(), f"no JSON report at {path}"
    return json.loads(path.read_text(encoding="utf-8"))


def oracles_of(report: dict[str, Any]) -> set[str]:
    """The oracle ids of a report's findings."""
    return {finding["oracle"] for finding in report["findings"]}


def describe(result: subprocess.CompletedProcess[str]) -> str:
    """A run's status and output, for assertion messages."""
    return f"exit {result.returncode}\n--- stdout\n{result.stdout}\n--- stderr\n{result.stderr}"


@pytest.fixture(scope="module")
def clean_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[subprocess.CompletedProcess[str], Path]:
    """One run against the spec-correct server, with a JSON report and a fixed seed."""
    report = tmp_path_factory.mktemp("clean") / "report.json"
    result = run_cli([*RUN, "--seed", "4242", "--json", str(report), "--", *CLEAN_COMMAND])
    return result, report


@pytest.fixture(scope="module")
def example_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[subprocess.CompletedProcess[str], Path]:
    """One run against the bundled example server with its known bugs."""
    folder = tmp_path_factory.mktemp("example")
    report = folder / "report.json"
    result = run_cli([*FULL_RUN, "--seed", "7", "--json", str(report), "--corpus", str(folder / "corpus"), "--",
                      *EXAMPLE_COMMAND])
    return result, report


def test_clean_server_passes(clean_run: tuple[subprocess.CompletedProcess[str], Path]) -> None:
    """The spec-correct server exits 0 and the summary says PASSED."""
    result, _ = clean_run
    assert result.returncode == 0, describe(result)
    assert "PASSED" in result.stdout
    assert "Traceback" not in result.stdout + result.stderr


def test_json_report_of_clean_server(clean_run: tuple[subprocess.CompletedProcess[str], Path]) -> None:
    """`--json` writes the version 1 report contract, with zero findings for the clean server."""
    result, path = clean_run
    report = load_report(path)
    for key in ("version", "seed", "server", "protocolVersion", "stats", "findings"):
        assert key in report, f"report lacks {key!r}: {sorted(report)}"
    assert report["version"] == 1
    assert report["seed"] == 4242
    assert isinstance(report["server"], str) and MCP_SERVER.name in report["server"]
    assert isinstance(report["protocolVersion"], str) and report["protocolVersion"]
    assert isinstance(report["stats"], dict) and report["stats"]
    assert report["findings"] == [], describe(result)


def test_example_server_findings_exit_1(example_run: tuple[subprocess.CompletedProcess[str], Path]) -> None:
    """The example server's known bugs are found by the right oracles and the exit status is 1."""
    result, path = example_run
    assert result.returncode == 1, describe(result)
    assert "FAILED" in result.stdout
    assert "Traceback (most recent call last)" not in result.stderr
    found = oracles_of(load_report(path))
    missing = {"no-crash", "id-preserved", "stdout-clean", "invalid-request", "invalid-params", "no-internal-leak",
               "valid-input-accepted", "output-schema"} - found
    assert not missing, f"oracles {sorted(missing)} found nothing; found {sorted(found)}"
    tools = {f["tool"] for f in load_report(path)["findings"] if f["oracle"] in ("valid-input-accepted",
                                                                                  "output-schema")}
    assert tools == {"search", "add_note"}


def test_example_report_findings_shape(example_run: tuple[subprocess.CompletedProcess[str], Path]) -> None:
    """Every finding in the JSON report carries the fields of the report contract."""
    _, path = example_run
    report = load_report(path)
    assert report["seed"] == 7
    assert report["findings"]
    for finding in report["findings"]:
        assert finding["oracle"] in ORACLE_IDS
        assert finding["severity"] in SEVERITIES
        assert "tool" in finding and (finding["tool"] is None or isinstance(finding["tool"], str))
        assert isinstance(finding["message"], str) and finding["message"]
        frames = finding["reproducer"]["frames"]
        assert isinstance(frames, list) and frames, finding
        for frame in frames:
            assert isinstance(frame, str) or (isinstance(frame, dict) and set(frame) == {"hex"}), frame
        assert "corpus_path" in finding


def test_printed_findings_have_printf_reproduction(
        example_run: tuple[subprocess.CompletedProcess[str], Path]) -> None:
    """Each printed finding ends with a `printf ... | CMD` line that pipes its frames into the server."""
    result, path = example_run
    lines = result.stdout.splitlines()
    starts = [index for index, line in enumerate(lines) if FINDING_HEADER.match(line)]
    assert len(starts) == len(load_report(path)["findings"]), result.stdout
    command = shlex.join(EXAMPLE_COMMAND)
    for number, start in enumerate(starts):
        end = starts[number + 1] if number + 1 < len(starts) else len(lines)
        block = lines[start:end]
        reproductions = [line.strip().removeprefix("reproduce: ") for line in block if "printf" in line]
        assert reproductions, "finding without a reproduction:\n" + "\n".join(block)
        assert reproductions[-1].startswith("{ printf"), reproductions[-1]
        assert re.search(rf"\| timeout \d+ {re.escape(command)}$", reproductions[-1]), reproductions[-1]


def test_fail_on_critical_passes_below_it(tmp_path: Path) -> None:
    """`--fail-on critical` exits 0 when the only finding is high, and still lists it."""
    report = tmp_path / "report.json"
    result = run_cli([*OPTION_RUN, "--fail-on", "critical", "--json", str(report), "--", *ID_COERCE_COMMAND])
    assert result.returncode == 0, describe(result)
    assert "id-preserved" in result.stdout
    assert "PASSED" in result.stdout
    findings = load_report(report)["findings"]
    assert [(f["oracle"], f["severity"]) for f in findings] == [("id-preserved", "high")]


@pytest.mark.parametrize(("args", "words"), [
    pytest.param(["run", "--"], ["no server given"], id="no-command"),
    pytest.param(["run", "--oracles", "no-such-oracle", "--", *CLEAN_COMMAND],
                 ["unknown oracle", "no-such-oracle", *ORACLE_IDS], id="unknown-oracle"),
    pytest.param(["run", "--protocol-version", "1.0", "--", *CLEAN_COMMAND],
                 ["'1.0'", "protocol version", "2025-11-25"], id="bad-protocol-version"),
    pytest.param(["run", "--env", "BADPAIR", "--", *CLEAN_COMMAND], ["BADPAIR", "NAME=VALUE"], id="bad-env"),
])
def test_usage_errors_exit_2(args: list[str], words: list[str]) -> None:
    """A usage error exits 2 with one `Error:` line that says what was wrong; no traceback, no run."""
    result = run_cli(args, timeout=30)
    assert result.returncode == 2, describe(result)
    assert "Traceback" not in result.stdout + result.stderr
    errors = [line for line in output_lines(result) if line.startswith("Error:")]
    assert len(errors) == 1, describe(result)
    for word in words:
        assert word in errors[0], f"{word!r} missing from {errors[0]!r}"
    assert "summary" not in result.stdout, "the run started despite the usage error"


def test_oracles_command_lists_ids() -> None:
    """`mcpfuzz oracles` lists every oracle id, each with a title."""
    result = run_cli(["oracles"], timeout=30)
    assert result.returncode == 0, describe(result)
    listed = {}
    for line in result.stdout.splitlines():
        oracle_id, _, title = line.partition(" ")
        listed[oracle_id] = title.strip()
    missing = set(ORACLE_IDS) - set(listed)
    assert not missing, f"not listed: {sorted(missing)}\n{result.stdout}"
    assert all(listed[oracle_id] for oracle_id in ORACLE_IDS), result.stdout


def test_oracles_option_selects_only_those(tmp_path: Path) -> None:
    """`--oracles id-preserved` reports id-preserved findings and nothing from other oracles."""
    report = tmp_path / "report.json"
    result = run_cli([*OPTION_RUN, "--oracles", "id-preserved", "--json", str(report), "--", *TWO_BUG_COMMAND])
    assert result.returncode == 1, describe(result)
    assert oracles_of(load_report(report)) == {"id-preserved"}
    assert "stdout-clean" not in result.stdout


def test_exclude_oracles_removes_one(tmp_path: Path) -> None:
    """`--exclude-oracles id-preserved` drops that oracle's findings and keeps the others."""
    report = tmp_path / "report.json"
    result = run_cli([*OPTION_RUN, "--exclude-oracles", "id-preserved", "--json", str(report), "--",
                      *TWO_BUG_COMMAND])
    assert result.returncode == 1, describe(result)
    assert oracles_of(load_report(report)) == {"stdout-clean"}
    assert "id-preserved" not in result.stdout


def test_no_color_output_has_no_ansi() -> None:
    """With NO_COLOR=1 nothing mcpfuzz writes contains an ANSI escape sequence."""
    result = run_cli([*OPTION_RUN, "--", *CLEAN_COMMAND], env={"NO_COLOR": "1"})
    assert result.returncode == 0, describe(result)
    assert ANSI not in result.stdout + result.stderr


def test_no_color_beats_forced_colour() -> None:
    """NO_COLOR=1 removes colours even when FORCE_COLOR asks for a colour terminal."""
    forced = run_cli([*OPTION_RUN, "--", *CLEAN_COMMAND], env={"FORCE_COLOR": "1"})
    assert forced.returncode == 0, describe(forced)
    assert any(colour_codes(params) for params in COLOUR_SGR.findall(forced.stdout)), \
        "FORCE_COLOR=1 gave no colour: this test cannot tell colour from none"
    result = run_cli([*OPTION_RUN, "--", *CLEAN_COMMAND], env={"FORCE_COLOR": "1", "NO_COLOR": "1"})
    assert result.returncode == 0, describe(result)
    escapes = COLOUR_SGR.findall(result.stdout + result.stderr)
    coloured = [params for params in escapes if colour_codes(params)]
    assert not coloured, f"colour escapes despite NO_COLOR: {coloured[:5]}"


def colour_codes(params: str) -> list[str]:
    """The colour-setting parameters of one SGR escape (foreground, background, 256 and true colour)."""
    codes = [code for code in params.split(";") if code]
    if "38" in codes or "48" in codes:
        return codes
    return [code for code in codes if 30 <= int(code) <= 49 or 90 <= int(code) <= 107]


@pytest.mark.parametrize("how", ["module", "script"])
def test_help(how: str) -> None:
    """`mcpfuzz --help` (module and console script) exits 0 and names the commands."""
    if how == "module":
        result = run_cli(["--help"], timeout=30)
    else:
        script = Path(sys.executable).with_name("mcpfuzz")
        if not script.exists():
            pytest.skip(f"no console script next to {sys.executable}")
        result = subprocess.run([str(script), "--help"], capture_output=True, text=True, timeout=30)
    assert result.returncode == 0, describe(result)
    assert "run" in result.stdout and "oracles" in result.stdout
    assert "Usage:" in result.stdout


def test_run_help_names_options() -> None:
    """`mcpfuzz run --help` documents the report-contract options."""
    result = run_cli(["run", "--help"], timeout=30)
    assert result.returncode == 0, describe(result)
    options = ("--seed", "--budget", "--timeout", "--json", "--oracles", "--exclude-oracles", "--fail-on")
    for option in options:
        assert option in result.stdout, option


def test_a_server_refusing_its_command_line_gets_the_options_before_dashes_tip(tmp_path: Path) -> None:
    """A server that exits with its own usage error (mcpfuzz options put after `--`) is told so, exit 2."""
    argparse_server = "import argparse; argparse.ArgumentParser().parse_args()"
    result = run_cli(["run", "--budget", "10", "--", sys.executable, "-c", argparse_server, "--exclude-tool", "x"],
                     cwd=tmp_path)
    assert result.returncode == 2, result.stdout + result.stderr
    assert "options go before `--`" in result.stdout + result.stderr
    assert "Traceback" not in result.stderr
