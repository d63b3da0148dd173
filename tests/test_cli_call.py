"""`mcpfuzz call`: one call of a real server by hand, its answer printed and judged, exit 0 / 1 / 2."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

from tests.conftest import SERVERS_DIR
from tests.http_servers import start_http_server
from tests.in_process_cli import cli_in_process

pytestmark = pytest.mark.process

TOOL_SERVER = [sys.executable, str(SERVERS_DIR / "tool_server.py")]
TOKEN_SERVER = [sys.executable, str(SERVERS_DIR / "token_crash_server.py")]


def failure(result: object) -> str:
    return f"stdout:\n{getattr(result, 'stdout', '')}\nstderr:\n{getattr(result, 'stderr', '')}"


def answer_of(stdout: str) -> dict:
    """The pretty JSON answer between the heading line and the verdict lines."""
    lines = stdout.splitlines()
    end = max(i for i, line in enumerate(lines) if line == "}")
    parsed: dict = json.loads("\n".join(lines[1:end + 1]))
    return parsed


def test_a_clean_call_prints_the_answer_and_exits_0(tmp_path: Path) -> None:
    result = cli_in_process(["call", "search", "--args", '{"query": "abc"}', "--", *TOOL_SERVER], cwd=tmp_path)
    assert result.returncode == 0, failure(result)
    answer = answer_of(result.stdout)
    assert answer["result"]["structuredContent"]["count"] == 3
    assert "valid arguments" in result.stdout and "ok: no oracle failed" in result.stdout
    assert list(tmp_path.iterdir()) == []


def test_arguments_from_a_file_that_break_the_schema_are_judged_as_invalid(tmp_path: Path) -> None:
    """Invalid arguments answered with an isError result are what the spec asks: exit 0."""
    (tmp_path / "args.json").write_text('{"query": 5}')
    result = cli_in_process(["call", "tool/search", "--args", "@args.json", "--", *TOOL_SERVER], cwd=tmp_path)
    assert result.returncode == 0, failure(result)
    assert "invalid (against its schema)" in result.stdout
    assert answer_of(result.stdout)["result"]["isError"] is True


def test_a_broken_rule_exits_1_and_names_the_oracle(tmp_path: Path) -> None:
    result = cli_in_process(["call", "search", "--args", '{"query": "hello"}', "--", *TOOL_SERVER, "--bug",
                      "bad-structured"], cwd=tmp_path)
    assert result.returncode == 1, failure(result)
    assert "FAILED output-schema (medium)" in result.stdout

    crash = cli_in_process(["call", "search", "--args", '{"query": "x", "limit": 10}', "--", *TOOL_SERVER, "--bug",
                     "crash-at-maximum"], cwd=tmp_path)
    assert crash.returncode == 1, failure(crash)
    assert "(no answer)" in crash.stdout and "FAILED no-crash (critical)" in crash.stdout
    assert crash.stdout.count("IndexError: list index out of range") == 1


def test_secrets_are_redacted(tmp_path: Path) -> None:
    """The token the crashing server prints in its traceback never reaches the output."""
    token = "tok-" + os.urandom(8).hex()
    result = cli_in_process(["call", "connect", "--env", f"API_TOKEN={token}", "--", *TOKEN_SERVER], cwd=tmp_path)
    assert result.returncode == 1, failure(result)
    assert "FAILED no-crash" in result.stdout
    assert token not in result.stdout + result.stderr


def test_http_url(tmp_path: Path) -> None:
    with start_http_server() as url:
        result = cli_in_process(["call", "echo", "--args", '{"text": "hi"}', url], cwd=tmp_path)
    assert result.returncode == 0, failure(result)
    assert "hi" in json.dumps(answer_of(result.stdout))


def test_usage_errors_and_unusable_servers_exit_2(tmp_path: Path) -> None:
    unknown = cli_in_process(["call", "nosuch", "--", *TOOL_SERVER], cwd=tmp_path)
    assert unknown.returncode == 2 and "declares no tool 'nosuch'" in unknown.stderr, failure(unknown)
    assert "search" in unknown.stderr  # the tools it does declare
    bad_json = cli_in_process(["call", "search", "--args", "{bad", "--", *TOOL_SERVER], cwd=tmp_path)
    assert bad_json.returncode == 2 and "--args is not JSON" in bad_json.stderr, failure(bad_json)
    missing = cli_in_process(["call", "search", "--args", "@nope.json", "--", *TOOL_SERVER], cwd=tmp_path)
    assert missing.returncode == 2 and "cannot read nope.json" in missing.stderr, failure(missing)
    dead = cli_in_process(["call", "search", "--", "/nonexistent/server"], cwd=tmp_path)
    assert dead.returncode == 2 and dead.stderr.startswith("error:"), failure(dead)
