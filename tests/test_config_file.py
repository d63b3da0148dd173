"""The config file: found from the working folder up, every key checked, ${VAR} expanded and kept secret,
the command line over the file; real CLI subprocesses against real server processes."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import click
import jsonschema
import pytest

from mcpfuzz.cli.config_file import COMMANDS, find_config, option_keys
from mcpfuzz.cli.config_schema import schema_text
from mcpfuzz.cli.main import main
from tests.conftest import EXAMPLE_COMMAND, MCP_SERVER, REPO_ROOT, run_cli

pytestmark = pytest.mark.slow

SCHEMA_FILE = REPO_ROOT / "docs" / "config.schema.json"
# The catalogue alone: a few seconds, deterministic.
QUICK = 'phases = "catalogue"\ntimeout = 1\nbudget = 30\n'
ID_COERCE = [sys.executable, str(MCP_SERVER), "--bug", "id-coerce"]


def toml_list(words: list[str]) -> str:
    """Words as a TOML array (JSON strings are valid TOML basic strings)."""
    return json.dumps(words)


def failure(result: subprocess.CompletedProcess[str]) -> str:
    return f"exit {result.returncode}\n--- stdout\n{result.stdout}\n--- stderr\n{result.stderr}"


def test_file_sets_the_options_and_the_command_line_overrides_them(tmp_path: Path) -> None:
    """seed, fail-on, json and the server come from mcpfuzz.toml; --seed and --fail-on given win."""
    (tmp_path / "mcpfuzz.toml").write_text(
        f'{QUICK}seed = 7\nfail-on = "critical"\njson = "report.json"\ncommand = {toml_list(ID_COERCE)}\n')
    from_file = run_cli(["run"], cwd=tmp_path)
    assert from_file.returncode == 0, failure(from_file)  # id-coerce is high: below critical
    report = json.loads((tmp_path / "report.json").read_text())
    assert report["seed"] == 7
    assert {f["oracle"] for f in report["findings"]} == {"id-preserved"}

    overridden = run_cli(["run", "--seed", "9", "--fail-on", "low"], cwd=tmp_path)
    assert overridden.returncode == 1, failure(overridden)
    assert json.loads((tmp_path / "report.json").read_text())["seed"] == 9


def test_pyproject_table_is_found_from_a_subfolder_and_paths_are_relative_to_it(tmp_path: Path) -> None:
    """[tool.mcpfuzz] in the project's pyproject.toml applies in any folder below it; its paths mean the same there."""
    (tmp_path / ".git").mkdir()
    (tmp_path / "pyproject.toml").write_text(
        '[project]\nname = "x"\n\n[tool.mcpfuzz]\n' + QUICK + 'json = "reports/out.json"\nseed = 3\n')
    (tmp_path / "reports").mkdir()
    below = tmp_path / "src" / "pkg"
    below.mkdir(parents=True)
    result = run_cli(["run", "--", *EXAMPLE_COMMAND], cwd=below)
    assert (tmp_path / "reports" / "out.json").is_file(), failure(result)
    assert json.loads((tmp_path / "reports" / "out.json").read_text())["seed"] == 3


def test_discovery_stops_at_the_repository_root(tmp_path: Path) -> None:
    """A config file above the repository (another project's, a home folder's) is never picked up."""
    (tmp_path / "mcpfuzz.toml").write_text("budget = 1\n")
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    (repo / "pyproject.toml").write_text('[project]\nname = "x"\n')
    assert find_config(repo) is None
    assert find_config(tmp_path) == (tmp_path / "mcpfuzz.toml").resolve()
    (repo / "pyproject.toml").write_text('[project]\nname = "x"\n[tool.mcpfuzz]\nbudget = 2\n')
    assert find_config(repo / ".git") == (repo / "pyproject.toml").resolve()


@pytest.mark.parametrize(("name", "text", "expected"), [
    ("mcpfuzz.toml", 'budget = 5\nfail_on = "high"\n',
     "mcpfuzz.toml:2: unknown key 'fail_on' in the top-level table; did you mean 'fail-on'?"),
    ("mcpfuzz.toml", 'budget = 5\n\n[soak]\nworker = 2\n',
     "mcpfuzz.toml:4: unknown key 'worker' in [soak]; did you mean 'workers'?"),
    ("mcpfuzz.toml", '[run]\nduration = "2h"\n',
     "mcpfuzz.toml:2: 'duration' is not an option of `mcpfuzz run` (it is one of `mcpfuzz soak`)"),
    ("pyproject.toml", '[tool.mcpfuzz]\nbudget = 5\n\n[tool.mcpfuzz.run]\ntimeuot = 3\n',
     "pyproject.toml:5: unknown key 'timeuot' in [tool.mcpfuzz.run]; did you mean 'timeout'?"),
    ("mcpfuzz.toml", 'timeout = "soon"\n', "mcpfuzz.toml:1: timeout = 'soon': 'soon' is not a duration"),
    ("mcpfuzz.toml", 'fail-on = "severe"\n', "mcpfuzz.toml:1: fail-on = 'severe': 'severe' is not one of"),
    ("mcpfuzz.toml", 'strict-types = "yes"\n', "strict-types is a flag: write strict-types = true"),
    ("mcpfuzz.toml", 'exclude-tool = [{ a = 1 }]\n', "exclude-tool takes a list of strings"),
    ("mcpfuzz.toml", 'budget = 5\ncommand = ["x"]\nurl = "http://127.0.0.1:1/mcp"\n',
     "both command and url are set"),
    ("mcpfuzz.toml", '[targets."fetch"]\nexclude = true\n', "'fetch' is not KIND/NAME"),
    ("mcpfuzz.toml", '[targets."tool/x"]\nexclud = true\n', "did you mean 'exclude'?"),
    ("mcpfuzz.toml", '[targets."tool/x"]\ntimeout = 0\n', "mcpfuzz.toml:2: timeout is a duration above 0"),
    ("mcpfuzz.toml", 'header = ["Authorization: ${MCPFUZZ_UNSET_FOR_TEST}"]\n',
     "mcpfuzz.toml:1: header: ${MCPFUZZ_UNSET_FOR_TEST}: the environment variable MCPFUZZ_UNSET_FOR_TEST is not set"),
    ("mcpfuzz.toml", "budget = \n", "is not valid TOML"),
])
def test_mistakes_in_the_file_exit_2_naming_file_line_and_key(tmp_path: Path, name: str, text: str,
                                                               expected: str) -> None:
    """Each mistake stops the run before any server starts, with the place and a suggestion, never a traceback."""
    (tmp_path / ".git").mkdir()
    (tmp_path / name).write_text(text)
    result = run_cli(["run", "--", *EXAMPLE_COMMAND], cwd=tmp_path)
    assert result.returncode == 2, failure(result)
    assert expected in result.stderr, failure(result)
    assert "Traceback" not in result.stderr


def test_named_config_file_and_soak_table(tmp_path: Path) -> None:
    """--config-file names a file anywhere; [soak] keys reach `soak` only; a pyproject without the table is refused."""
    config = tmp_path / "ci.toml"
    config.write_text(f'timeout = 1\njson = "soak.json"\ncommand = {toml_list(EXAMPLE_COMMAND)}\n[soak]\n'
                      'duration = "3s"\nphases = "catalogue"\nno-replay = true\n[run]\nbudget = 0.5\n')
    folder = tmp_path / "work"
    folder.mkdir()
    result = run_cli(["soak", "--config-file", str(config)], cwd=folder, timeout=120)
    report = tmp_path / "soak.json"
    assert report.is_file(), failure(result)
    assert json.loads(report.read_text())["stats"]["duration_s"] >= 1.0  # the soak's 3s, not run's budget
    bare = tmp_path / "pyproject.toml"
    bare.write_text('[project]\nname = "x"\n')
    refused = run_cli(["run", "--config-file", str(bare), "--", *EXAMPLE_COMMAND], cwd=folder)
    assert refused.returncode == 2 and "has no [tool.mcpfuzz] table" in refused.stderr, failure(refused)


def test_variables_are_expanded_and_never_reported(tmp_path: Path) -> None:
    """A ${VAR} value in the command is used, and no console line, report or transcript shows it."""
    token = "sk-config-secret-0123456789abcdef"
    # `sh -c` ignores its $0 word: the token travels in the command line without changing the server.
    command = ["sh", "-c", f'exec "{ID_COERCE[0]}" "{ID_COERCE[1]}" --bug id-coerce', "${MCPFUZZ_TEST_TOKEN}"]
    (tmp_path / "mcpfuzz.toml").write_text(
        f'{QUICK}json = "r.json"\nsarif = "r.sarif"\ncommand = {toml_list(command)}\n')
    result = run_cli(["run"], cwd=tmp_path, env={"MCPFUZZ_TEST_TOKEN": token})
    assert result.returncode == 1, failure(result)
    written = [tmp_path / "r.json", tmp_path / "r.sarif", *(tmp_path / "corpus").glob("*.json")]
    assert len(written) > 2
    for text in (result.stdout, result.stderr, *(p.read_text() for p in written)):
        assert token not in text
    assert "<redacted>" in json.loads((tmp_path / "r.json").read_text())["server"]


def test_targets_table_excludes_a_tool(tmp_path: Path) -> None:
    """[targets."tool/NAME"] exclude = true is added to the command line's --exclude-tool."""
    (tmp_path / "mcpfuzz.toml").write_text(
        'phases = "coverage"\ntimeout = 1\nbudget = 120\nmax-examples = 1\n[targets."tool/add_note"]\nexclude = true\n')
    result = run_cli(["run", "--exclude-tool", "search", "--", *EXAMPLE_COMMAND], cwd=tmp_path)
    assert "skipped add_note" in result.stdout, failure(result)
    assert "skipped search" in result.stdout, failure(result)


def test_published_schema_matches_the_commands() -> None:
    """docs/config.schema.json is what the commands say (regenerate: python -m mcpfuzz.cli.config_schema)."""
    assert SCHEMA_FILE.read_text() == schema_text(), "regenerate docs/config.schema.json"
    schema = json.loads(SCHEMA_FILE.read_text())
    for name in COMMANDS:
        command = main.commands[name]
        assert isinstance(command, click.Command)
        keys = set(option_keys(command))
        assert keys <= set(schema["properties"]), keys - set(schema["properties"])
        assert keys <= set(schema["properties"][name]["properties"])
    good = {"budget": 30, "fail-on": "high", "exclude-tool": ["a"], "env": {"K": "v"},
            "command": ["python", "s.py"], "soak": {"duration": "2h", "workers": 2},
            "targets": {"tool/x": {"exclude": True}, "tool/y": {"timeout": 30}}}
    jsonschema.validate(good, schema)
    for bad in ({"fail_on": "high"}, {"budget": -1}, {"run": {"duration": "1h"}}, {"fail-on": "severe"},
                {"targets": {"tool/x": {"skip": True}}}):
        with pytest.raises(jsonschema.ValidationError):
            jsonschema.validate(bad, schema)


def test_a_target_timeout_replaces_the_global_one_for_its_calls(tmp_path: Path) -> None:
    """A tool that blocks its server for 3 s is a hang under --call-timeout 2, and fine with its own timeout = 20."""
    slow = [sys.executable, str(REPO_ROOT / "tests" / "servers" / "slow_tool_server.py"), "--delay", "3"]
    quick = ["run", "--timeout", "1", "--call-timeout", "2", "--phases", "coverage", "--budget", "30", "--json",
             "r.json", "--", *slow]
    without = tmp_path / "without"
    without.mkdir()
    hang = run_cli(quick, cwd=without)
    assert hang.returncode == 1, failure(hang)
    assert {(f["oracle"], f["target"]) for f in json.loads((without / "r.json").read_text())["findings"]} == {
        ("no-hang", "tool/wait")}
    (tmp_path / "mcpfuzz.toml").write_text('[targets."tool/wait"]\ntimeout = 20\n')
    patient = run_cli(quick, cwd=tmp_path)
    assert patient.returncode == 0, failure(patient)
    assert json.loads((tmp_path / "r.json").read_text())["findings"] == []
