"""Server targets: labels, secrets and the transcript server block, for commands, URLs and handlers in memory."""

from __future__ import annotations

import json

import pytest

from mcpfuzz.corpus.redact import REDACTED, Redactor
from mcpfuzz.engine.config import RunConfig
from mcpfuzz.jsonrpc.transport_kind import TransportKind
from mcpfuzz.report.json_report import rerun_command
from mcpfuzz.report.reproduce import reproduction
from mcpfuzz.transport.connect import target_from_json
from mcpfuzz.transport.http_target import HttpTarget
from mcpfuzz.transport.memory import MemoryTarget
from mcpfuzz.transport.stdio_target import StdioTarget
from mcpfuzz.transport.target import ServerKind

pytestmark = pytest.mark.unit

COMMAND = StdioTarget(("python", "server.py", "--name", "two words"))
URL = HttpTarget("http://127.0.0.1:{port}/mcp", headers=(("Authorization", "Bearer s3cret-value"),),
                 launch=("python", "srv.py", "--port", "{port}"), transport=TransportKind.LEGACY_SSE)
FRAME = b'{"jsonrpc":"2.0","id":1,"method":"ping"}'


def test_each_target_names_its_kind() -> None:
    assert [t.kind for t in (COMMAND, URL, MemoryTarget(lambda frame: None))] == list(ServerKind)


def test_label_is_a_shell_line_or_the_url() -> None:
    assert COMMAND.label == "python server.py --name 'two words'"
    assert URL.label == "http://127.0.0.1:{port}/mcp"
    assert MemoryTarget(lambda frame: None, label="echo").label == "echo"


def test_secrets_are_the_header_values() -> None:
    assert URL.secrets == ("Bearer s3cret-value",)
    assert COMMAND.secrets == () and MemoryTarget(lambda frame: None).secrets == ()


def test_run_config_derives_its_target_from_command_or_http() -> None:
    stdio = RunConfig(command=["python", "server.py"], env={"API_KEY": "k3y-value"})
    assert stdio.target == StdioTarget(("python", "server.py"), env_names=("API_KEY",))  # names, never values
    assert stdio.server_label == "python server.py" and stdio.secrets == ["k3y-value"]
    assert stdio.target.to_json(Redactor(stdio.secrets)) == {"command": ["python", "server.py"], "env": ["API_KEY"]}
    assert target_from_json(stdio.target.to_json(Redactor())) == stdio.target
    http = RunConfig(command=[], http=URL)
    assert http.target is URL and http.server_label == URL.url and http.secrets == ["Bearer s3cret-value"]


def test_command_block_round_trips() -> None:
    block = COMMAND.to_json(Redactor())
    assert json.dumps(block) == '{"command": ["python", "server.py", "--name", "two words"]}'
    assert target_from_json(block) == COMMAND


def test_url_block_keeps_header_names_only_and_round_trips_without_their_values() -> None:
    block = URL.to_json(Redactor(URL.secrets))
    assert block == {"url": "http://127.0.0.1:{port}/mcp", "transport": "sse",
                     "launch": ["python", "srv.py", "--port", "{port}"], "headers": ["Authorization"]}
    assert "s3cret" not in json.dumps(block)
    assert target_from_json(block) == HttpTarget(URL.url, launch=URL.launch, transport=TransportKind.LEGACY_SSE)


def test_command_words_after_a_secret_flag_are_redacted() -> None:
    block = StdioTarget(("server", "--token", "abcdef123456")).to_json(Redactor())
    assert block == {"command": ["server", "--token", REDACTED]}


def test_old_server_blocks_load() -> None:
    # Written before transcripts recorded the transport: detection then decides, as it did.
    assert target_from_json({"url": "http://localhost:8000/mcp", "launch": [], "headers": ["X-Key"]}) == \
        HttpTarget("http://localhost:8000/mcp")
    assert target_from_json({"url": "http://h/mcp", "transport": "auto"}) == HttpTarget("http://h/mcp")
    assert target_from_json({"command": ["node", "index.js"]}) == StdioTarget(("node", "index.js"))


def test_a_block_naming_no_server_loads_as_none() -> None:
    assert target_from_json({}) is None
    assert target_from_json({"command": []}) is None
    assert target_from_json(MemoryTarget(lambda frame: None).to_json(Redactor())) is None


def test_reproduction_and_rerun_follow_the_kind() -> None:
    shell, _ = reproduction(COMMAND, [FRAME])
    assert shell.endswith("| timeout 13 python server.py --name 'two words'")  # the pauses and 10 s more
    curl, notes = reproduction(URL, [FRAME])
    assert curl.startswith("curl ") and any("Authorization" in note for note in notes)
    assert "s3cret" not in curl
    assert rerun_command(COMMAND) == "mcpfuzz run -- python server.py --name 'two words'"
    assert rerun_command(URL).startswith("mcpfuzz run 'http://127.0.0.1:{port}/mcp' --launch 'python srv.py ")
    text, notes = reproduction(MemoryTarget(lambda frame: None), [FRAME])
    assert text == "" and notes
