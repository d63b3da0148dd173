"""`mcpfuzz targets` and `run --dry-run`: a real server probed, its targets planned as a run plans them, none called."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from tests.conftest import SERVERS_DIR, run_cli
from tests.http_servers import start_http_server

pytestmark = pytest.mark.slow

TOOL_SERVER = [sys.executable, str(SERVERS_DIR / "tool_server.py")]
SURFACE_SERVER = [sys.executable, str(SERVERS_DIR / "surface_server.py")]


def failure(result: object) -> str:
    return f"stdout:\n{getattr(result, 'stdout', '')}\nstderr:\n{getattr(result, 'stderr', '')}"


def listing(args: list[str], cwd: Path | None = None) -> dict:
    result = run_cli(["targets", "--format", "json", *args], cwd=cwd)
    assert result.returncode == 0, failure(result)
    parsed: dict = json.loads(result.stdout)
    return parsed


def by_label(parsed: dict) -> dict[str, dict]:
    return {target["target"]: target for target in parsed["targets"]}


def test_lists_called_targets_and_says_why_the_others_are_skipped(tmp_path: Path) -> None:
    """Risk hints, --exclude-tool and --read-only each skip with their reason; nothing is written in the folder."""
    parsed = listing(["--", *TOOL_SERVER], cwd=tmp_path)
    targets = by_label(parsed)
    assert parsed["protocolVersion"] and parsed["callPhases"] is True
    assert targets["tool/search"]["called"] and targets["tool/get_item"]["safety"] == "read-only"
    assert parsed["catalogueTool"] == "tool/search"
    assert not targets["tool/purge_all"]["called"]
    assert "destructiveHint" in targets["tool/purge_all"]["skipped_because"]
    assert "openWorldHint" in targets["tool/fetch_page"]["skipped_because"]

    chosen = by_label(listing(["--exclude-tool", "search", "--include-tool", "purge_all", "--", *TOOL_SERVER],
                              cwd=tmp_path))
    assert chosen["tool/search"]["skipped_because"] == "--exclude-tool"
    assert chosen["tool/purge_all"]["called"] and chosen["tool/purge_all"]["safety"] == "destructive"

    read_only = by_label(listing(["--read-only", "--", *TOOL_SERVER], cwd=tmp_path))
    assert [label for label, target in read_only.items() if target["called"]] == ["tool/get_item"]
    assert "--read-only" in read_only["tool/search"]["skipped_because"]
    assert list(tmp_path.iterdir()) == []  # no corpus, no report: a listing writes nothing


def test_every_surface_is_listed_with_its_kind(tmp_path: Path) -> None:
    parsed = listing(["--", *SURFACE_SERVER], cwd=tmp_path)
    kinds = {target["kind"] for target in parsed["targets"] if target["called"]}
    assert {"tool", "resource", "template", "prompt", "completion"} <= kinds, parsed


def test_text_listing_and_a_name_that_matches_nothing_is_warned_about(tmp_path: Path) -> None:
    result = run_cli(["targets", "--exclude-tool", "nosuch", "--phases", "catalogue", "--", *TOOL_SERVER],
                     cwd=tmp_path)
    assert result.returncode == 0, failure(result)
    assert "would plan (no call phase in --phases" in result.stdout
    assert "tool/purge_all" in result.stdout and "annotated destructiveHint: true" in result.stdout
    assert "warning: --exclude-tool 'nosuch' names no tool of this server" in result.stdout


def test_run_dry_run_lists_without_calling(tmp_path: Path) -> None:
    """`run --dry-run` takes run's own options, runs no phase after planning and writes nothing."""
    report = tmp_path / "report.json"
    result = run_cli(["run", "--dry-run", "--json", str(report), "--exclude-tool", "add", "--", *SURFACE_SERVER],
                     cwd=tmp_path)
    assert result.returncode == 0, failure(result)
    assert "tool/echo" in result.stdout and "--exclude-tool" in result.stdout
    assert "findings" not in result.stdout  # no run summary: nothing ran
    assert list(tmp_path.iterdir()) == []


def test_config_file_gives_the_server_and_the_selection(tmp_path: Path) -> None:
    """The config file's `command` and top-level selection keys apply, as they do to `run`."""
    (tmp_path / "mcpfuzz.toml").write_text(f"command = {json.dumps(TOOL_SERVER)}\nexclude-tool = [\"search\"]\n"
                                           "[run]\nbudget = 5\n[soak]\nduration = \"1m\"\n")
    targets = by_label(listing([], cwd=tmp_path))
    assert targets["tool/search"]["skipped_because"] == "--exclude-tool"
    assert targets["tool/get_item"]["called"]


def test_http_url(tmp_path: Path) -> None:
    with start_http_server() as url:
        parsed = listing([url], cwd=tmp_path)
    assert parsed["server"] == url and any(t["called"] for t in parsed["targets"])


def test_an_unusable_server_exits_2_with_the_error_on_stderr(tmp_path: Path) -> None:
    for command in (["/nonexistent/server"], [sys.executable, "-c", "import sys; sys.exit(3)"]):
        result = run_cli(["targets", "--", *command], cwd=tmp_path)
        assert result.returncode == 2, failure(result)
        assert "error: the server could not be probed" in result.stderr
        assert "error" not in result.stdout
    result = run_cli(["targets"], cwd=tmp_path)
    assert result.returncode == 2 and "no server given" in result.stderr


def test_help_of_targets_and_call_groups_run_options_in_sections() -> None:
    """targets takes run's own target and selection options, call only those one call uses (no selection: it
    names its target), listed in the same sections."""
    for command, own in (("targets", "--format"), ("call", "--args")):
        result = run_cli([command, "--help"])
        assert result.returncode == 0, failure(result)
        text = result.stdout
        assert "Target:" in text and own in text
        for option in ("--servers-file", "--startup-timeout", "--env"):
            assert option in text, (command, option)
        for selection in ("--exclude-tool", "--include-target", "--read-only"):
            assert (selection in text) == (command == "targets"), (command, selection)
        for report_option in ("--html", "--sarif", "--budget", "--workers"):
            assert report_option not in text, (command, report_option)


def test_run_dry_run_of_a_plain_json_rpc_server_lists_its_methods(tmp_path: Path) -> None:
    """`run --jsonrpc --dry-run` plans as the plain run does: each OpenRPC method is a `method/NAME` target."""
    result = run_cli(["run", "--dry-run", "--jsonrpc", "--openrpc", str(SERVERS_DIR / "jsonrpc_server.openrpc.json"),
                      "--", sys.executable, str(SERVERS_DIR / "jsonrpc_server.py")], cwd=tmp_path)
    assert result.returncode == 0, failure(result)
    assert "(JSON-RPC 2.0)" in result.stdout and "method/add" in result.stdout
