"""No secret reaches any output: --env values a server prints, header values, a password in the URL.

The server under test repeats what it was given on stderr, and crashes so that its stderr tail lands
in finding messages; every report file, the event stream and the console must show `<redacted>`
instead, whichever writer produced them.
"""

from __future__ import annotations

import html
import sys
from pathlib import Path

import pytest

from mcpfuzz.corpus.redact import REDACTED, Redactor
from mcpfuzz.engine.config import RunConfig
from mcpfuzz.engine.events import Finding, FindingFound, Notice, RunStarted
from mcpfuzz.engine.redaction import RedactingSink
from mcpfuzz.oracles.base import Severity
from mcpfuzz.transport.http_target import HttpTarget
from tests.conftest import MCP_SERVER, kill_leftovers, private_copy, run_cli
from tests.http_servers import HTTP_SERVER, HTTP_SERVER_IMPORTS

pytestmark = pytest.mark.process

SECRET = "s3cr3t-value-4242"
PASSWORD = "pw-9f8e7d6c"
OUTPUTS = ("report.json", "junit.xml", "report.sarif", "summary.md", "report.html", "events.ndjson")


def _report_options() -> list[str]:
    return ["--json", "report.json", "--junit-xml", "junit.xml", "--sarif", "report.sarif",
            "--summary-md", "summary.md", "--html", "report.html", "--events", "events.ndjson"]


def test_a_secret_the_server_prints_is_in_no_report_no_stream_and_not_on_the_console(tmp_path: Path) -> None:
    script = f'echo "starting with token $TOKEN" >&2; exec {sys.executable} {MCP_SERVER} --bug crash-batch'
    result = run_cli(["run", "--budget", "60", "--timeout", "1", "--seed", "3", "--phases", "catalogue",
                      *_report_options(), "--env", f"TOKEN={SECRET}", "--", "sh", "-c", script],
                     cwd=tmp_path, timeout=120)
    assert result.returncode == 1, result.stdout + result.stderr
    texts = {name: (tmp_path / name).read_text() for name in OUTPUTS}
    texts["console"] = result.stdout + result.stderr
    assert [name for name, text in texts.items() if SECRET in text] == []
    # The secret was there to hide: the crash's stderr tail is in the report, redacted.
    assert f"starting with token {REDACTED}" in texts["report.json"]
    assert f"starting with token {html.escape(REDACTED)}" in texts["report.html"]


def test_a_password_in_the_url_and_header_values_are_in_no_output(tmp_path: Path) -> None:
    server = private_copy(HTTP_SERVER, tmp_path, imports=HTTP_SERVER_IMPORTS)
    url = f"http://user:{PASSWORD}@127.0.0.1:{{port}}/mcp"
    try:
        result = run_cli(["run", url, "--launch", f"{sys.executable} {server} --port {{port}} --bug no-origin-check",
                          "--header", f"X-Api-Key: {SECRET}", "--phases", "catalogue", "--budget", "40",
                          *_report_options()], cwd=tmp_path, timeout=90)
    finally:
        kill_leftovers(str(server))
    assert result.returncode == 1, result.stdout + result.stderr
    texts = {name: (tmp_path / name).read_text() for name in OUTPUTS}
    texts["console"] = result.stdout + result.stderr
    texts.update({path.name: path.read_text() for path in (tmp_path / "corpus").glob("*.json")})
    leaks = [name for name, text in texts.items() if PASSWORD in text or SECRET in text]
    assert leaks == [], leaks
    assert "user" not in texts["report.json"].split('"server"')[1].split(",")[0]  # the whole userinfo hidden


def test_the_sink_redacts_nested_findings_and_keeps_what_replays() -> None:
    """Findings inside events lose their secrets; frames and the finding's key (its identity) are kept."""
    seen: list = []
    sink = RedactingSink(seen.append, Redactor([SECRET]))
    frame = f'{{"jsonrpc":"2.0","id":1,"method":"ping","params":{{"note":"{SECRET}"}}}}'.encode()
    finding = Finding("no-crash", Severity.CRITICAL, "crash", f"died: token {SECRET}", "tool/x", "case", "no crash",
                      (frame,), (f"<stderr {SECRET}>",), key=f"k{SECRET}")
    sink(FindingFound(finding))
    sink(Notice(f"the server printed {SECRET}"))
    sink(RunStarted("python s.py", 1, ("no-crash",), 10.0, 1.0))
    redacted = seen[0].finding
    assert SECRET not in redacted.message and SECRET not in redacted.received[0]
    assert redacted.frames == (frame,) and redacted.key == finding.key and redacted.fingerprint == finding.fingerprint
    assert SECRET not in seen[1].message and seen[2] .server == "python s.py"


def test_the_public_config_hides_every_secret_value() -> None:
    config = RunConfig(command=[], env={"TOKEN": SECRET},
                       http=HttpTarget(f"http://user:{PASSWORD}@127.0.0.1:8000/mcp", headers=(("X-Key", SECRET),),
                                       launch=("python", "s.py", "--token", SECRET)))
    assert PASSWORD in config.secrets and SECRET in config.secrets
    public = config.public()
    shown = repr(public) + public.server_label
    assert SECRET not in shown and PASSWORD not in shown
    assert public.http is not None and public.http.headers == (("X-Key", REDACTED),)
    assert config.http is not None and config.http.url.startswith("http://user:")  # the real one is untouched


def test_a_setting_is_secret_by_its_name_or_its_look_and_never_as_a_path(tmp_path: Path) -> None:
    """--env and ${VAR} values: a credential's name or a random-looking value is hidden; a path is not (hiding it
    would cut that folder out of the server's command), unless a credential's name holds a path to no file."""
    from mcpfuzz.corpus.redact import is_secret_setting

    secret = [("API_TOKEN", "plainword"), ("OPENAI_KEY", "abc1"), ("DB_PASSWORD", "hunter2"),
              ("SOME_ID", "a3f9c2d18e7b6a5f4c3d2e1f0a9b8c7d"), ("X", "ghp_" + "a1" * 18),
              ("DATABASE_URL", "postgres://app:pw-9f8e@127.0.0.1/db"),
              ("GOOGLE_APPLICATION_CREDENTIALS", str(tmp_path / "missing.json"))]
    credentials = tmp_path / "creds.json"
    credentials.write_text("{}")
    plain = [("DATA_DIR", str(tmp_path)), ("HOME", "/home/u"), ("PYTHONPATH", "/a/b:/c/d"), ("CACHE", "~/cache"),
             ("GOOGLE_APPLICATION_CREDENTIALS", str(credentials)), ("REGION", "us-east-1"), ("LOG_LEVEL", "debug"),
             ("SERVER_URL", "http://127.0.0.1:8000/mcp"), ("KEYBOARD", "us"), ("REQUEST_ID",
                                                                              "550e8400-e29b-41d4-a716-446655440000")]
    assert [pair for pair in secret if not is_secret_setting(*pair)] == []
    assert [pair for pair in plain if is_secret_setting(*pair)] == []
    config = RunConfig(command=["python", f"{tmp_path}/server.py"], env=dict([*plain[:2], ("API_TOKEN", SECRET)]))
    assert config.secrets == [SECRET]
    assert config.public().command == ["python", f"{tmp_path}/server.py"]
