"""What a newcomer hits first: one meaning per option name, config keys every command takes, short tips, globs."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from mcpfuzz.cli.replay_env import missing_env, with_env_tip
from mcpfuzz.engine.replay import ReplayOutcome
from mcpfuzz.transport.stdio_target import StdioTarget
from tests.conftest import SERVERS_DIR
from tests.in_process_cli import cli_in_process

pytestmark = pytest.mark.process

TOOL_SERVER = [sys.executable, str(SERVERS_DIR / "tool_server.py")]


def test_the_documented_config_example_works_with_targets(tmp_path: Path) -> None:
    """docs/config.md's `json = "reports/mcpfuzz.json"` is run's report path; `targets` ignores it (it lists with
    --format json) instead of exiting 2 with "json is a flag"."""
    (tmp_path / "mcpfuzz.toml").write_text('json = "reports/mcpfuzz.json"\nfail-on = "high"\n')
    done = cli_in_process(["targets", "--", *TOOL_SERVER], cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "would call" in done.stdout
    done = cli_in_process(["targets", "--format", "json", "--", *TOOL_SERVER], cwd=tmp_path)
    assert done.returncode == 0 and json.loads(done.stdout)["targets"]
    old = cli_in_process(["targets", "--json", "--", *TOOL_SERVER], cwd=tmp_path)
    assert old.returncode == 0 and json.loads(old.stdout)["targets"] and "--format json" in old.stderr


def test_glob_filters_and_warnings_name_the_option_typed(tmp_path: Path) -> None:
    """`--exclude-target "tool/*"` skips every tool; a glob or label that names nothing is warned about under the
    option the user typed."""
    done = cli_in_process(["targets", "--format", "json", "--exclude-target", "tool/*", "--", *TOOL_SERVER])
    assert done.returncode == 0, done.stderr
    targets = json.loads(done.stdout)
    tools = [t for t in targets["targets"] if t["kind"] == "tool"]
    assert tools and all(not t["called"] and "--exclude-tool" in t["skipped_because"] for t in tools)
    done = cli_in_process(["targets", "--format", "json", "--exclude-target", "tool/nothing_*", "--exclude-target",
                    "tool/get_*", "--", *TOOL_SERVER])
    parsed = json.loads(done.stdout)
    assert any(w.startswith("--exclude-target 'tool/nothing_*' names no tool") for w in parsed["warnings"])
    called = {t["target"] for t in parsed["targets"] if t["called"]}
    assert "tool/get_item" not in called and "tool/search" in called
    done = cli_in_process(["targets", "--format", "json", "--exclude-tool", "nothing", "--", *TOOL_SERVER])
    assert any(w.startswith("--exclude-tool 'nothing' names no tool") for w in json.loads(done.stdout)["warnings"])


def test_a_pyproject_header_in_mcpfuzz_toml_gets_a_short_tip(tmp_path: Path) -> None:
    """Not the list of every known key: the header to drop."""
    (tmp_path / "mcpfuzz.toml").write_text('[tool.mcpfuzz]\nfail-on = "high"\n')
    done = cli_in_process(["targets", "--", *TOOL_SERVER], cwd=tmp_path)
    assert done.returncode == 2
    assert "drop that header in mcpfuzz.toml" in done.stderr and "known keys" not in done.stderr
    assert len(done.stderr) < 600


def test_args_means_one_thing_run_takes_args_file(tmp_path: Path) -> None:
    """`run --args-file FILE`; `--args FILE` and the config key `args` still work, with a notice; `call --args` is
    JSON and `call --help` offers no run-only option."""
    args = tmp_path / "args.json"
    args.write_text(json.dumps({"tool/search": [{"query": "a"}]}))
    (tmp_path / "mcpfuzz.toml").write_text(f'args = "{args.name}"\n')
    done = cli_in_process(["run", "--dry-run", "--", *TOOL_SERVER], cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "'args' is now 'args-file'" in done.stderr
    done = cli_in_process(["run", "--dry-run", "--args", str(args), "--", *TOOL_SERVER])
    assert done.returncode == 0 and "--args-file FILE" in done.stderr
    done = cli_in_process(["run", "--dry-run", "--args-file", str(args), "--", *TOOL_SERVER])
    assert done.returncode == 0 and "warning" not in done.stderr
    help_text = cli_in_process(["call", "--help"]).stdout
    for useless in ("--exclude-tool", "--include-target", "--read-only", "--phases", "--seed", "--args-file"):
        assert useless not in help_text, useless
    assert "--args JSON" in help_text and "--env" in help_text
    done = cli_in_process(["call", "search", "--args", '{"query": "a"}', "--", *TOOL_SERVER], cwd=tmp_path)
    assert done.returncode in (0, 1), done.stderr  # the config's `args` (a path) is not call's JSON


def test_replay_names_the_variables_the_transcripts_server_needed() -> None:
    """A transcript keeps the names of the variables the run gave its server; an ERROR replay says which are
    missing here."""
    server = StdioTarget(("python", "server.py"), None, ("API_TOKEN", "HOME"))
    assert missing_env(server, {"HOME": "/root"}, {}) == ["API_TOKEN"]
    assert missing_env(server, {"HOME": "/root"}, {"API_TOKEN": "x"}) == []
    outcome = with_env_tip(ReplayOutcome(Path("t.json"), "ERROR", "the server could not be run: exit 1"),
                           ["API_TOKEN"])
    assert "API_TOKEN" in outcome.reason and "--env API_TOKEN=VALUE" in outcome.reason
    fixed = ReplayOutcome(Path("t.json"), "FIXED")
    assert with_env_tip(fixed, ["API_TOKEN"]) is fixed


def test_commands_without_a_table_ignore_the_keys_they_do_not_share_with_run(tmp_path: Path) -> None:
    """lint's `format` and `output`, run's `json`, a duration `budget`: targets, call and snapshot run with them."""
    (tmp_path / "mcpfuzz.toml").write_text('format = "sarif"\noutput = "lint.sarif"\njson = "run.json"\n'
                                           'budget = "30s"\nstrict = true\nfail-on-change = "any"\n'
                                           'exclude-target = ["tool/purge_*"]\n')
    done = cli_in_process(["targets", "--", *TOOL_SERVER], cwd=tmp_path)
    assert done.returncode == 0 and "would call" in done.stdout, done.stderr
    assert "tool/purge_all" in done.stdout.split("skipped", 1)[1]
    done = cli_in_process(["snapshot", "--", *TOOL_SERVER], cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "search" in json.loads(done.stdout)["tools"]
    assert not (tmp_path / "lint.sarif").exists() and not (tmp_path / "run.json").exists()
    done = cli_in_process(["call", "search", "--args", '{"query": "a"}', "--", *TOOL_SERVER], cwd=tmp_path)
    assert done.returncode in (0, 1) and "answer" in done.stdout, done.stderr


def test_replay_of_a_server_that_needs_a_variable_names_it(tmp_path: Path) -> None:
    """A transcript keeps the names of the variables its run gave the server; without one here, the ERROR says
    which, and with it the tip is gone."""
    source = next((SERVERS_DIR.parent.parent / "corpus" / "mcp-python-2.3.0").glob("*.json"))
    transcript = json.loads(source.read_text())
    transcript["server"] = {"command": [sys.executable, str(SERVERS_DIR / "needs_env_server.py")],
                            "env": ["MCPFUZZ_NEEDED_TOKEN"]}
    path = tmp_path / "t.json"
    path.write_text(json.dumps(transcript))
    done = cli_in_process(["replay", str(path)], cwd=tmp_path)
    assert done.returncode == 2, done.stdout + done.stderr
    assert "MCPFUZZ_NEEDED_TOKEN" in done.stdout + done.stderr
    assert "--env MCPFUZZ_NEEDED_TOKEN=VALUE" in done.stdout + done.stderr
    done = cli_in_process(["replay", str(path), "--env", "MCPFUZZ_NEEDED_TOKEN=x"], cwd=tmp_path)
    assert "--env MCPFUZZ_NEEDED_TOKEN=VALUE" not in done.stdout + done.stderr
    assert done.returncode in (0, 1), done.stdout + done.stderr
