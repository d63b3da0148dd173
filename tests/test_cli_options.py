"""Options a person types: durations with units, suggestions for mistyped names."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import click
import pytest

from mcpfuzz.cli.durations import DurationError, parse_duration
from tests.conftest import MCP_SERVER, run_cli

pytestmark = pytest.mark.slow

CLEAN_COMMAND = [sys.executable, str(MCP_SERVER)]


def describe(result: subprocess.CompletedProcess[str]) -> str:
    return f"exit {result.returncode}\n--- stdout\n{result.stdout}\n--- stderr\n{result.stderr}"


@pytest.mark.parametrize(("text", "seconds"), [
    ("90", 90.0), ("2.5", 2.5), ("30s", 30.0), ("500ms", 0.5), ("2m", 120.0), ("1h30m", 5400.0), ("7d", 604800.0),
    ("1m30s", 90.0), (" 2H ", 7200.0), ("0.5s", 0.5), (".5s", 0.5), ("1.5h", 5400.0), ("30m", 1800.0),
])
def test_durations_with_units(text: str, seconds: float) -> None:
    assert parse_duration(text) == pytest.approx(seconds)


@pytest.mark.parametrize("text", ["", "s", "h", "30x", "30 s", "1h 30m", "1h-5m", "m30", "30m1", "nan", "inf",
                                  "1e999", "30ss"])
def test_what_is_not_a_duration(text: str) -> None:
    with pytest.raises(DurationError, match="duration"):
        parse_duration(text)


def test_run_takes_its_budget_and_timeouts_with_units() -> None:
    """`--budget 30s --timeout 500ms --call-timeout 1m` run, and the header shows them in seconds."""
    result = run_cli(["run", "--budget", "30s", "--timeout", "500ms", "--call-timeout", "1m", "--grace", "100ms",
                      "--phases", "catalogue", "--seed", "1", "--", *CLEAN_COMMAND])
    assert result.returncode == 0, describe(result)
    assert "budget 30s · timeout 0.5s" in result.stdout, describe(result)


@pytest.mark.parametrize(("args", "words"), [
    (["run", "--budget", "30x"], ["--budget", "'30x' is not a duration", "30s, 500ms, 2m"]),
    (["run", "--budget", "0s"], ["--budget"]),
    (["run", "--timeout", "nan"], ["--timeout", "not a finite duration"]),
    (["soak", "--duration", "soon"], ["--duration", "'soon' is not a duration"]),
    (["soak", "--duration", "0"], ["--duration"]),
    (["soak", "--duration", "-5m"], ["--duration"]),
    (["lint", "--timeout", "5 minutes"], ["--timeout", "is not a duration"]),
    (["replay", "--call-timeout", "x"], ["--call-timeout", "is not a duration"]),
    (["run", "--shared-ttl", "forever"], ["--shared-ttl", "is not a duration"]),
])
def test_a_bad_duration_is_a_usage_error(args: list[str], words: list[str]) -> None:
    result = run_cli([*args, "--", *CLEAN_COMMAND])
    assert result.returncode == 2, describe(result)
    for word in words:
        assert word in result.stderr, describe(result)
    assert "Traceback" not in result.stderr


@pytest.mark.parametrize(("args", "suggestion"), [
    (["--phases", "catalog"], "Did you mean 'catalogue'?"),
    (["--phases", "catalogue,lifecyle"], "Did you mean 'lifecycle'?"),
    (["--oracles", "no-crsh"], "Did you mean 'no-crash'"),
    (["--exclude-oracles", "stdout-clen"], "Did you mean 'stdout-clean'"),
])
def test_a_mistyped_name_gets_the_closest_one(args: list[str], suggestion: str) -> None:
    result = run_cli(["run", *args, "--", *CLEAN_COMMAND])
    assert result.returncode == 2, describe(result)
    assert suggestion in result.stderr, describe(result)


def test_the_config_file_takes_durations_with_units(tmp_path: Path) -> None:
    (tmp_path / "mcpfuzz.toml").write_text('budget = "45s"\ntimeout = "1500ms"\nphases = "catalogue"\n'
                                           '[targets."tool/echo"]\ntimeout = "2m"\n', encoding="utf-8")
    result = run_cli(["run", "--seed", "1", "--", *CLEAN_COMMAND], cwd=tmp_path)
    assert result.returncode == 0, describe(result)
    assert "budget 45s · timeout 1.5s" in result.stdout, describe(result)


def load_json(path: Path) -> dict:
    import json

    return json.loads(path.read_text(encoding="utf-8"))


def test_exitfirst_stops_the_run_at_the_first_finding(tmp_path: Path) -> None:
    """`-x`: the first finding at or above --fail-on stops the run (the budget does not); it is reported, exit 1."""
    report = tmp_path / "report.json"
    result = run_cli(["run", "-x", "--seed", "3", "--budget", "120", "--json", str(report), "--",
                      sys.executable, str(MCP_SERVER), "--bug", "stdout-noise"], cwd=tmp_path, timeout=180)
    assert result.returncode == 1, describe(result)
    assert "1 finding at or above medium: stopping as --max-findings 1 asks" in result.stdout, describe(result)
    assert "SIGTERM" not in result.stdout + result.stderr
    data = load_json(report)
    # Its own reason, not a Ctrl-C's ("interrupted"), though the stop travels as a SIGTERM.
    assert data["stopped"] == "max-findings" and data["findings"], data["stopped"]
    assert "stopped early: max-findings" in result.stdout, describe(result)
    assert (tmp_path / "corpus").is_dir() and list((tmp_path / "corpus").glob("*.json"))


def test_max_findings_counts_only_findings_at_or_above_fail_on(tmp_path: Path) -> None:
    """With --fail-on critical a high finding does not stop the run: the phases run to their end."""
    report = tmp_path / "report.json"
    result = run_cli(["run", "--max-findings", "1", "--fail-on", "critical", "--phases", "catalogue", "--seed", "3",
                      "--timeout", "1", "--json", str(report), "--",
                      sys.executable, str(MCP_SERVER), "--bug", "stdout-noise"], cwd=tmp_path, timeout=180)
    assert result.returncode == 0, describe(result)
    data = load_json(report)
    assert data["findings"] and not data["stopped"], data


@pytest.mark.parametrize("args", [["-x", "--max-findings", "2"], ["-x", "--all-servers"],
                                  ["--max-findings", "1", "--compare", "x"]])
def test_max_findings_refuses_what_it_cannot_stop(args: list[str]) -> None:
    result = run_cli(["run", *args, "--", *CLEAN_COMMAND])
    assert result.returncode == 2, describe(result)
    assert "Error:" in result.stderr and "Traceback" not in result.stderr


def servers_file(folder: Path) -> Path:
    """An MCP client's server list naming the clean test server `clean`."""
    import json

    path = folder / "servers.json"
    path.write_text(json.dumps({"mcpServers": {"clean": {"command": sys.executable, "args": [str(MCP_SERVER)]}}}),
                    encoding="utf-8")
    return path


def test_lint_without_a_server_lints_the_config_files_server(tmp_path: Path) -> None:
    command = ", ".join(f'"{word}"' for word in CLEAN_COMMAND)
    (tmp_path / "mcpfuzz.toml").write_text(f"command = [{command}]\n[lint]\nstrict = true\n", encoding="utf-8")
    result = run_cli(["lint"], cwd=tmp_path)
    assert result.returncode == 0, describe(result)
    assert f"{MCP_SERVER}: 2026-07-28 (modern); 0 errors, 0 warnings" in result.stdout, describe(result)


def test_lint_takes_a_server_from_a_servers_file(tmp_path: Path) -> None:
    path = servers_file(tmp_path)
    result = run_cli(["lint", "--servers-file", str(path), "--server", "clean"], cwd=tmp_path)
    assert result.returncode == 0, describe(result)
    assert "0 errors, 0 warnings" in result.stdout
    unnamed = run_cli(["lint", "--servers-file", str(path)], cwd=tmp_path)
    assert unnamed.returncode == 2 and "servers there: clean" in unnamed.stderr, describe(unnamed)


def test_lint_without_any_server_says_every_way_to_give_one(tmp_path: Path) -> None:
    result = run_cli(["lint"], cwd=tmp_path)
    assert result.returncode == 2, describe(result)
    assert "--servers-file" in result.stderr and "mcpfuzz.toml" in result.stderr


@pytest.mark.parametrize("command", ["run", "soak", "lint"])
def test_config_with_a_json_file_points_to_servers_file(tmp_path: Path, command: str) -> None:
    """`--config x.json` (what other tools call a client's server list) names --servers-file, not a TOML error."""
    path = servers_file(tmp_path)
    result = run_cli([command, "--config", str(path)], cwd=tmp_path)
    assert result.returncode == 2, describe(result)
    assert f"--servers-file {path}" in result.stderr, describe(result)
    named = run_cli([command, "--config-file", str(path)], cwd=tmp_path)
    assert named.returncode == 2, describe(named)
    assert f"--servers-file {path}" in named.stderr and "TOML" in named.stderr, describe(named)
    assert "is not valid TOML" not in named.stderr  # said before any parser error


def test_config_with_a_toml_file_points_to_config_file(tmp_path: Path) -> None:
    path = tmp_path / "settings.toml"
    path.write_text("budget = 10\n", encoding="utf-8")
    result = run_cli(["run", "--config", str(path)], cwd=tmp_path)
    assert result.returncode == 2, describe(result)
    assert f"--config-file {path}" in result.stderr and "--servers-file" not in result.stderr


def help_sections(text: str) -> dict[str, list[str]]:
    """The option names printed under each section title of a --help page."""
    import re

    sections: dict[str, list[str]] = {}
    current = None
    for line in text.splitlines():
        if line and not line.startswith(" ") and line.endswith(":"):
            current = line[:-1]
            sections[current] = []
        elif current is not None:
            sections[current] += re.findall(r"^\s{2}(?:-\w, )?(--[\w-]+)", line)
    return sections


@pytest.mark.parametrize("command", ["run", "soak", "lint", "replay"])
def test_help_lists_every_option_once_in_its_section(command: str) -> None:
    """--help groups the options (target, budget and time, selection, output, CI, advanced), none left out."""
    from mcpfuzz.cli.main import main

    result = run_cli([command, "--help"])
    assert result.returncode == 0, describe(result)
    sections = help_sections(result.stdout)
    order = [title for title in ("Target", "Budget and time", "Selection", "Output", "CI", "Advanced")
             if title in sections]
    assert list(sections) == order, list(sections)
    printed = [name for names in sections.values() for name in names]
    declared = [next(opt for opt in param.opts if opt.startswith("--")) for param in main.commands[command].params
                if isinstance(param, click.Option) and not param.hidden]
    assert sorted(printed) == sorted([*declared, "--help"]), describe(result)


def test_run_help_puts_the_options_a_newcomer_needs_where_they_look() -> None:
    sections = help_sections(run_cli(["run", "--help"]).stdout)
    assert sections["Target"][0] == "--servers-file"
    assert sections["Budget and time"][:2] == ["--budget", "--timeout"]
    assert "--exitfirst" in sections["Budget and time"]
    assert sections["Output"][:2] == ["--quiet", "--verbose"]
    assert sections["CI"][0] == "--fail-on"


@pytest.mark.parametrize("command", ["run", "soak"])
def test_usage_doc_names_every_option(command: str) -> None:
    """docs/usage.md documents every option of `run` and `soak` (a new option fails this until it is written up)."""
    from mcpfuzz.cli.main import main

    text = (Path(__file__).resolve().parent.parent / "docs" / "usage.md").read_text(encoding="utf-8")
    missing = [opt for param in main.commands[command].params if isinstance(param, click.Option) and not param.hidden
               for opt in param.opts if f"`{opt}" not in text]
    assert not missing, f"docs/usage.md does not mention {missing}"
