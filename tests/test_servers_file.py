"""`--servers-file`: servers defined as Claude Desktop, Cursor, the Inspector and VS Code define them."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from mcpfuzz.cli.servers_file import ServersFileError, read_servers, strip_jsonc
from tests.conftest import MCP_SERVER, run_cli
from tests.http_servers import run_http_server

pytestmark = pytest.mark.process

RUN = ["run", "--timeout", "1", "--budget", "30", "--phases", "catalogue"]


def failure(result: subprocess.CompletedProcess[str]) -> str:
    return f"exit {result.returncode}\n--- stdout\n{result.stdout}\n--- stderr\n{result.stderr}"


def write(path: Path, document: object) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(document, indent=2))
    return path


def test_claude_desktop_format(tmp_path: Path) -> None:
    """mcpServers.NAME: command, args, env (with ${VAR}); disabled kept as a flag."""
    path = write(tmp_path / "claude_desktop_config.json", {"mcpServers": {
        "notes": {"command": "python", "args": ["-m", "notes", "--db", "${HOME}/n.db"], "env": {"KEY": "${K}"}},
        "off": {"command": "node", "args": ["x.js"], "disabled": True},
    }})
    servers = read_servers(path, {"HOME": "/home/u", "K": "secret-value"})
    notes = servers["notes"]
    assert notes.words == ["python", "-m", "notes", "--db", "/home/u/n.db"]
    assert notes.env == (("KEY", "secret-value"),)
    assert set(notes.secrets) == {"secret-value"}  # a path is no secret: hiding it would cut the command
    assert servers["off"].disabled and not notes.disabled


def test_cursor_and_inspector_remote_formats(tmp_path: Path) -> None:
    """url with headers (Cursor); type sse / streamable-http (the Inspector) picks the transport."""
    path = write(tmp_path / "mcp.json", {"mcpServers": {
        "remote": {"url": "https://127.0.0.1:9/mcp", "headers": {"Authorization": "Bearer ${TOKEN}"}},
        "old": {"type": "sse", "url": "http://127.0.0.1:9/sse"},
        "new": {"type": "streamable-http", "url": "http://127.0.0.1:9/mcp"},
    }})
    servers = read_servers(path, {"TOKEN": "abc123456"})
    assert servers["remote"].words == ["https://127.0.0.1:9/mcp"]
    assert servers["remote"].headers == (("Authorization", "Bearer abc123456"),)
    assert (servers["remote"].transport, servers["old"].transport, servers["new"].transport) == ("auto", "sse", "http")


def test_vscode_format_with_comments_env_variables_and_env_file(tmp_path: Path) -> None:
    """.vscode/mcp.json: `servers`, JSONC comments and trailing commas, ${env:VAR}, ${workspaceFolder}, envFile."""
    (tmp_path / ".env").write_text("# local\nexport DB_URL='postgres://x'\nEMPTY=\n")
    vscode = tmp_path / ".vscode"
    vscode.mkdir()
    (vscode / "mcp.json").write_text("""{
      // the project's servers
      "servers": {
        "local": {
          "type": "stdio",
          "command": "python",
          "args": ["${workspaceFolder}/server.py", "--url=http://x//y"], /* not a comment inside strings */
          "env": {"API_KEY": "${env:API_KEY}"},
          "envFile": "${workspaceFolder}/.env",
        },
      },
    }""")
    local = read_servers(vscode / "mcp.json", {"API_KEY": "k-123456"})["local"]
    assert local.words == ["python", f"{tmp_path.resolve()}/server.py", "--url=http://x//y"]
    assert local.env == (("DB_URL", "postgres://x"), ("EMPTY", ""), ("API_KEY", "k-123456"))
    settings = write(tmp_path / "settings.json", {"mcp": {"servers": {"s": {"command": "srv"}}}})
    assert read_servers(settings, {})["s"].words == ["srv"]


def test_jsonc_keeps_line_numbers() -> None:
    """Removed comments leave their newlines, so JSON errors point at the file's own lines."""
    text = '{\n/* a\nb */\n"a": 1,\n}'
    assert strip_jsonc(text).count("\n") == text.count("\n")
    assert json.loads(strip_jsonc(text)) == {"a": 1}


@pytest.mark.parametrize(("document", "environ", "expected"), [
    ({"other": {}}, {}, 'has no "mcpServers"'),
    ({"mcpServers": {"s": {"args": ["x"]}}}, {}, "server 's' needs either \"command\""),
    ({"mcpServers": {"s": {"command": "x", "type": "grpc"}}}, {}, "type 'grpc' is not one of"),
    ({"mcpServers": {"s": {"command": "x", "env": {"A": "${UNSET_FOR_TEST}"}}}}, {},
     "the environment variable UNSET_FOR_TEST is not set"),
    ({"servers": {"s": {"command": "x", "env": {"A": "${input:api-key}"}}}}, {},
     "VS Code prompts for it when it starts the server; tip: replace ${input:api-key} with ${env:API_KEY}"),
    ({"mcpServers": {"s": {"command": ["x"]}}}, {}, '"command" must be a string'),
])
def test_bad_entries_name_the_file_and_server(tmp_path: Path, document: object, environ: dict[str, str],
                                              expected: str) -> None:
    """Every refusal says which file, which server and why."""
    path = write(tmp_path / "mcp.json", document)
    with pytest.raises(ServersFileError) as raised:
        read_servers(path, environ)
    assert expected in raised.value.message
    assert str(path) in raised.value.message


def test_run_fuzzes_the_named_server_as_the_client_launches_it(tmp_path: Path) -> None:
    """The entry's command, args and env reach the server; env values are secrets; bad names list the servers."""
    path = write(tmp_path / "claude_desktop_config.json", {"mcpServers": {
        "buggy": {"command": sys.executable, "args": [str(MCP_SERVER), "--bug", "${BUG}"],
                  "env": {"API_TOKEN": "tok-0123456789"}},
        "clean": {"command": sys.executable, "args": [str(MCP_SERVER)]},
    }})
    report = tmp_path / "r.json"
    result = run_cli([*RUN, "--json", str(report), "--servers-file", str(path), "--server", "buggy"],
                     env={"BUG": "id-coerce"})
    assert result.returncode == 1, failure(result)
    data = json.loads(report.read_text())
    assert {f["oracle"] for f in data["findings"]} == {"id-preserved"}
    assert "id-coerce" not in data["server"] and "<redacted>" in data["server"]  # a ${VAR} value is a secret

    unknown = run_cli([*RUN, "--servers-file", str(path), "--server", "bugy"])
    assert unknown.returncode == 2
    assert "has no server 'bugy'. Did you mean 'buggy'? Servers there: buggy, clean" in unknown.stderr
    missing = run_cli([*RUN, "--servers-file", str(path)])
    assert missing.returncode == 2 and "Give --server NAME" in missing.stderr and "buggy, clean" in missing.stderr
    both = run_cli([*RUN, "--servers-file", str(path), "--server", "clean", "--", sys.executable, str(MCP_SERVER)])
    assert both.returncode == 2 and "not both" in both.stderr


def test_all_servers_runs_each_with_its_own_reports(tmp_path: Path) -> None:
    """--all-servers: one run per enabled server, report files and corpus per server, the worst exit status."""
    path = write(tmp_path / "mcp.json", {"mcpServers": {
        "clean": {"command": sys.executable, "args": [str(MCP_SERVER)]},
        "buggy": {"command": sys.executable, "args": [str(MCP_SERVER), "--bug", "id-coerce"]},
        "skipped": {"command": "no-such-command-anywhere", "disabled": True},
    }})
    result = run_cli([*RUN, "--json", "out.json", "--servers-file", str(path), "--all-servers"], cwd=tmp_path,
                     timeout=120)
    assert result.returncode == 1, failure(result)
    clean, buggy = (json.loads((tmp_path / f"out.{name}.json").read_text()) for name in ("clean", "buggy"))
    assert clean["findings"] == []
    assert {f["oracle"] for f in buggy["findings"]} == {"id-preserved"}
    assert list((tmp_path / "corpus" / "buggy").glob("*_id-preserved_*.json"))
    assert not list((tmp_path / "corpus" / "clean").glob("*_*.json"))
    assert not (tmp_path / "out.skipped.json").exists()


def test_remote_entry_with_headers_over_http(tmp_path: Path) -> None:
    """A url entry is fuzzed over HTTP with its headers, whose values never reach the report."""
    with run_http_server() as server:
        path = write(tmp_path / "mcp.json", {"mcpServers": {
            "remote": {"type": "streamable-http", "url": server.url, "headers": {"X-Api-Key": "${KEY}"}}}})
        report = tmp_path / "r.json"
        result = run_cli([*RUN, "--json", str(report), "--servers-file", str(path), "--server", "remote"],
                         env={"KEY": "hdr-secret-987654"})
    assert result.returncode == 0, failure(result)
    data = report.read_text()
    assert json.loads(data)["server"] == server.url
    assert "hdr-secret-987654" not in data + result.stdout + result.stderr
