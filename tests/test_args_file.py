"""`--args-file FILE`: argument objects the user knows to be valid, read from JSON or TOML, refused with where and
why when malformed, called first by coverage (and a config-file key too)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import anyio
import pytest

from mcpfuzz.cli.args_file import ArgsFileError, load_args_file
from mcpfuzz.engine.config import RunConfig
from mcpfuzz.engine.events import Event, Notice
from mcpfuzz.engine.runner import run
from mcpfuzz.oracles.base import all_oracles
from tests.conftest import run_cli

pytestmark = pytest.mark.slow

SEEDED_SERVER = Path(__file__).parent / "servers" / "seeded_server.py"
SEEDED_COMMAND = [sys.executable, str(SEEDED_SERVER)]


def written(folder: Path, name: str, text: str) -> Path:
    path = folder / name
    path.write_text(text, encoding="utf-8")
    return path


def test_json_and_toml_give_the_same_objects_by_target_label(tmp_path: Path) -> None:
    """A bare name is a tool's; KIND/NAME stays as it is; the file's order is kept."""
    from_json = load_args_file(written(tmp_path, "args.json", json.dumps(
        {"get_item": [{"id": "a"}, {"id": "b", "verbose": True}], "prompt/greet": [{"name": "x"}]})))
    from_toml = load_args_file(written(tmp_path, "args.toml", '[["get_item"]]\nid = "a"\n\n[["get_item"]]\nid = "b"\n'
                                       'verbose = true\n\n[["prompt/greet"]]\nname = "x"\n'))
    assert from_json == from_toml == {"tool/get_item": ({"id": "a"}, {"id": "b", "verbose": True}),
                                      "prompt/greet": ({"name": "x"},)}


@pytest.mark.parametrize(("name", "text", "words"), [
    ("bad.json", '{"get_item": [{"id": 1},]}', ["line 1", "not valid JSON", "tip:"]),
    ("list.json", '[{"id": 1}]', ["the top level", "is a list", "tip:"]),
    ("one.json", '{"get_item": {"id": 1}}', ["target 'get_item'", "not a list", "tip:"]),
    ("item.json", '{"get_item": [{"id": 1}, "x"]}', ["target 'get_item', item 2", "is a string", "tip:"]),
    ("twice.json", '{"get_item": [], "tool/get_item": []}', ["second time", "tip:"]),
    ("bad.toml", "get_item = [1, 2", ["neither JSON nor valid TOML", "tip:"]),
])
def test_a_malformed_file_says_what_where_why_and_a_tip(tmp_path: Path, name: str, text: str, words: list[str]) -> None:
    """Each way a file can be wrong is refused with its place and a way out."""
    with pytest.raises(ArgsFileError) as raised:
        load_args_file(written(tmp_path, name, text))
    message = raised.value.format_message()
    assert all(word in message for word in words), message
    assert raised.value.exit_code == 2


def test_the_cli_refuses_a_malformed_file_before_the_run_with_exit_2(tmp_path: Path) -> None:
    """No server is started for a run whose --args file cannot be used."""
    bad = written(tmp_path, "args.json", '{"get_item": "item-1"}')
    result = run_cli(["run", "--args-file", str(bad), "--budget", "10", "--", *SEEDED_COMMAND], cwd=tmp_path)
    assert result.returncode == 2, result.stdout + result.stderr
    assert "--args-file" in result.stderr and "not a list" in result.stderr and "tip:" in result.stderr


def coverage_run(known: dict[str, tuple[dict, ...]], events: list[Event]) -> list[tuple[str, str]]:
    """The (oracle, target) of each finding of a coverage-only run of the seeded server with these arguments."""
    config = RunConfig(command=SEEDED_COMMAND, seed=1, budget=60.0, timeout=5.0, oracles=tuple(all_oracles()),
                       phases=("probe", "coverage"), known_arguments=known)
    finished = anyio.run(run, config, events.append)
    return sorted((finding.oracle, finding.target or "") for finding in finished.findings)


def test_coverage_calls_the_given_arguments_and_reaches_the_bug_only_they_reach() -> None:
    """close_account crashes only on the account the user knows; a refused object and an unknown target are said."""
    events: list[Event] = []
    found = coverage_run({"tool/close_account": ({"account": 93}, {"account": "acct-93"}),
                          "tool/no_such_tool": ({},)}, events)
    assert ("no-crash", "tool/close_account") in found
    notices = [event.message for event in events if isinstance(event, Notice)]
    assert any("tool/close_account #1 left out" in notice for notice in notices), notices
    assert any("tool/no_such_tool is not a target" in notice for notice in notices), notices
    assert ("no-crash", "tool/close_account") not in coverage_run({}, [])


def test_the_config_file_takes_args_too(tmp_path: Path) -> None:
    """`args-file = "FILE"` in mcpfuzz.toml is --args-file."""
    written(tmp_path, "known.json", json.dumps({"close_account": [{"account": "acct-93"}]}))
    written(tmp_path, "mcpfuzz.toml", 'args-file = "known.json"\nphases = "coverage"\n')
    report = tmp_path / "report.json"
    result = run_cli(["run", "--seed", "1", "--budget", "60", "--json", str(report), "--", *SEEDED_COMMAND],
                     cwd=tmp_path, timeout=180)
    assert result.returncode == 1, result.stdout + result.stderr
    findings = json.loads(report.read_text(encoding="utf-8"))["findings"]
    assert any(f["oracle"] == "no-crash" and f.get("target") == "tool/close_account" for f in findings), findings


@pytest.mark.parametrize("phase", ["fuzz", "stateful"])
def test_the_fuzz_and_stateful_phases_start_from_the_given_arguments(phase: str) -> None:
    """Without coverage, the fuzz phase's seeded draws and the stateful phase's steps reach the account too."""
    # Counted examples end the run (the budget is only a bound): the given object is among the first draws.
    config = RunConfig(command=SEEDED_COMMAND, seed=1, budget=120.0, timeout=5.0, oracles=tuple(all_oracles()),
                       phases=("probe", phase), known_arguments={"tool/close_account": ({"account": "acct-93"},)},
                       max_examples=5)
    finished = anyio.run(run, config, lambda event: None)
    assert ("no-crash", "tool/close_account") in {(f.oracle, f.target) for f in finished.findings}
