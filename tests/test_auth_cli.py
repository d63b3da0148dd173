"""The authentication options on the command line, in a servers file and in a config file: refused where they
cannot apply, carried to the HTTP target where they can."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from mcpfuzz.cli.auth_options import with_auth
from mcpfuzz.cli.servers_file import entry_options, pick_server
from mcpfuzz.transport.auth.settings import AuthSettings
from mcpfuzz.transport.http_target import HttpTarget
from tests.conftest import run_cli

pytestmark = pytest.mark.process

PYTHON = sys.executable  # a plain HTTP server stands for the protected one: the token is needed before it is asked


def test_auth_options_are_refused_for_a_stdio_server() -> None:
    result = run_cli(["run", "--auth-token-command", "echo t", "--budget", "1", "--", "python", "server.py"])
    assert result.returncode == 2
    assert "only apply to an HTTP URL" in result.stderr


@pytest.mark.parametrize(("options", "says"), [
    (["--oauth-client-id", "c"], "need both the client id and the secret's variable"),
    (["--oauth-client-id", "c", "--oauth-client-secret-env", "V", "--auth-token-command", "x"], "not both"),
    (["--oauth-scope", "mcp"], "an OAuth scope needs OAuth client credentials"),
])
def test_options_that_do_not_go_together_are_a_usage_error(options: list[str], says: str) -> None:
    result = run_cli(["run", "http://127.0.0.1:9/mcp", "--budget", "1", *options])
    assert result.returncode == 2 and says in result.stderr, result.stderr


def test_a_missing_secret_variable_is_named_and_nothing_secret_printed(tmp_path: Path) -> None:
    """The variable is read when the first token is needed; the run stops saying which variable is unset."""
    launch = f"{PYTHON} -m http.server {{port}} --bind 127.0.0.1"
    result = run_cli(["run", "http://127.0.0.1:{port}/mcp", "--launch", launch,
                      "--budget", "3", "--oauth-client-id", "c", "--oauth-client-secret-env", "MCPFUZZ_UNSET_VAR_X"],
                     cwd=tmp_path)
    assert result.returncode not in (0, 1)
    assert "MCPFUZZ_UNSET_VAR_X" in result.stdout + result.stderr


def test_a_servers_file_auth_object_becomes_the_options(tmp_path: Path) -> None:
    path = tmp_path / "mcp.json"
    path.write_text(json.dumps({"mcpServers": {"remote": {
        "url": "http://127.0.0.1:8000/mcp", "headers": {"X-Team": "a"},
        "auth": {"clientId": "ci", "clientSecretEnv": "MCP_SECRET", "scope": "mcp"}}}}))
    entry = pick_server(path, "remote", {})
    options = entry_options(entry, {"header_lines": ()})
    target = with_auth(HttpTarget(entry.url or ""), options)
    assert target is not None and target.auth == AuthSettings(client_id="ci", client_secret_env="MCP_SECRET",
                                                                scope="mcp")
    # The command line's own settings win over the file's.
    mine = entry_options(entry, {"header_lines": (), "oauth_scope": "admin"})
    assert mine["oauth_scope"] == "admin" and mine["oauth_client_id"] == "ci"


def test_a_config_file_sets_the_token_command(tmp_path: Path) -> None:
    """`auth-token-command` in mcpfuzz.toml reaches the run: a failing command stops it with its exit status."""
    (tmp_path / "mcpfuzz.toml").write_text('url = "http://127.0.0.1:{port}/mcp"\n'
                                           f'launch = "{PYTHON} -m http.server {{port}} --bind 127.0.0.1"\n'
                                           'auth-token-command = "exit 7"\nbudget = "3s"\n')
    result = run_cli(["run"], cwd=tmp_path)
    assert "exit status 7" in result.stdout + result.stderr, result.stdout + result.stderr
