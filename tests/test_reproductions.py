"""Printed reproductions reproduce: a curl line sends exactly the headers its case sent, run against a real server."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from mcpfuzz.corpus.redact import Redactor
from mcpfuzz.engine.events import Finding
from mcpfuzz.engine.judge import FindingSet
from mcpfuzz.jsonrpc import expectation as ex
from mcpfuzz.jsonrpc.exchange import Exchange, ProcessEnd
from mcpfuzz.jsonrpc.frame import Case
from mcpfuzz.jsonrpc.versions import Era
from mcpfuzz.report.reproduce import REPRODUCTION_SECONDS, finding_reproduction
from mcpfuzz.transport.http_target import HttpTarget
from tests.conftest import kill_leftovers, private_copy, run_cli
from tests.engine_runs import SERVERS, run_engine
from tests.http_servers import start_http_server

pytestmark = pytest.mark.process

LEGACY = "2025-11-25"
FOREIGN_ORIGIN = "Origin: http://mcpfuzz-rebinding.example"


def _finding(url: str, oracle: str, target: str, version: str | None = None) -> Finding:
    finished = run_engine([], http=HttpTarget(url), protocol_version=version, phases=("probe", "catalogue"))
    assert not finished.error, finished.error
    found = [f for f in finished.findings if f.oracle == oracle and f.target == target]
    assert found, [f"{f.oracle} {f.target}" for f in finished.findings]
    return found[0]


def _run(script: str) -> str:
    """The printed reproduction, run by bash as a user pastes it."""
    done = subprocess.run(["bash", "-c", script], capture_output=True, text=True, timeout=60)
    return done.stdout + done.stderr


def test_the_curl_line_of_a_foreign_origin_case_sends_that_origin() -> None:
    with start_http_server("--bug", "no-origin-check") as url:
        finding = _finding(url, "origin-check", "http/origin-foreign")
        command, _ = finding_reproduction(HttpTarget(url), finding)
        assert FOREIGN_ORIGIN in command.splitlines()[0]
        assert "forbidden" not in _run(command)  # the bug: the foreign Origin is served
    with start_http_server() as fixed:
        command, _ = finding_reproduction(HttpTarget(fixed), finding)
        assert "forbidden: Origin not allowed" in _run(command)  # a correct server refuses the very same POST


def test_the_curl_line_of_a_case_without_the_session_id_leaves_it_out() -> None:
    """The case sent its ping without Mcp-Session-Id (the liveness request after it carries it again)."""
    with start_http_server("--bug", "lost-id-400") as url:
        finding = _finding(url, "id-preserved", "http/session-missing", LEGACY)
        command, _ = finding_reproduction(HttpTarget(url), finding)
        lines = command.splitlines()
        case_line = next(line for line in lines[1:] if '"method":"ping"' in line and "mcpfuzz-alive" not in line)
        assert "Mcp-Session-Id" not in case_line
        assert '"Mcp-Session-Id: $SID"' in lines[-1]
        out = _run(command)
    assert "missing Mcp-Session-Id" in out and '"id": null' in out.replace('"id":null', '"id": null'), out


# ---- a stdio server's environment, its crash keys and its secrets --------------------------------------------

SECRET = "supersecret123"


def _pieces(secret: str, shortest: int = 6) -> set[str]:
    """Every start of the secret at least `shortest` characters long (what a cut may leave of it)."""
    return {secret[:size] for size in range(shortest, len(secret) + 1)}


def test_a_servers_file_server_keeps_its_env_names_and_none_of_its_secret_anywhere(tmp_path: Path) -> None:
    """An `mcpServers` entry with `env`: the printed reproduction and the transcript name API_TOKEN (its value
    never); the server crashes printing its token, and no piece of it reaches the corpus, the reports or the
    console (crash keys and messages are cut from redacted text)."""
    servers = tmp_path / "mcp.json"
    servers.write_text(json.dumps({"mcpServers": {"tokens": {
        "command": sys.executable, "args": [str(SERVERS / "token_crash_server.py")], "env": {"API_TOKEN": SECRET}}}}))
    result = run_cli(["run", "--servers-file", str(servers), "--server", "tokens", "--phases", "coverage",
                      "--budget", "30", "--json", "r.json", "--events", "events.ndjson", "-v"], cwd=tmp_path,
                     timeout=120)
    assert result.returncode == 1, result.stdout + result.stderr
    report = json.loads((tmp_path / "r.json").read_text())
    crash = next(f for f in report["findings"] if f["oracle"] == "no-crash")
    assert f'env API_TOKEN="$API_TOKEN" {sys.executable}' in crash["reproducer"]["shell"]
    assert f'env API_TOKEN="$API_TOKEN" {sys.executable}' in result.stdout
    transcript = json.loads(Path(crash["corpus_path"]).read_text()) if Path(crash["corpus_path"]).is_absolute() \
        else json.loads((tmp_path / crash["corpus_path"]).read_text())
    assert transcript["server"]["env"] == ["API_TOKEN"]
    assert "token=<redacted>" in transcript["key"]
    texts = {"console": result.stdout + result.stderr, "report": (tmp_path / "r.json").read_text(),
             **{str(path): path.read_text() for path in (tmp_path / "corpus").glob("*.json")}}
    leaks = {(name, piece) for name, text in texts.items() for piece in _pieces(SECRET) if piece in text}
    assert not leaks, sorted(leaks)


def test_a_crash_keeps_its_fingerprint_when_the_server_is_renamed_or_copied(tmp_path: Path) -> None:
    """The crash signature names functions, never the server's paths or file names: one crash, one key."""
    first = private_copy(SERVERS / "token_crash_server.py", tmp_path, imports=("mcp_server.py",))
    renamed = first.with_name("renamed_server.py")
    first.rename(renamed)
    copied = private_copy(SERVERS / "token_crash_server.py", tmp_path / "elsewhere", imports=("mcp_server.py",))
    fingerprints = []
    for script in (renamed, copied):
        finished = run_engine([sys.executable, str(script)], phases=("probe", "coverage"))
        crashes = [f for f in finished.findings if f.oracle == "no-crash"]
        assert crashes, [f"{f.oracle} {f.target}" for f in finished.findings]
        assert script.name not in crashes[0].key and str(script.parent) not in crashes[0].key, crashes[0].key
        fingerprints.append(crashes[0].fingerprint)
    assert fingerprints[0] == fingerprints[1]


def test_findings_are_judged_on_redacted_text_before_anything_is_cut() -> None:
    """With the run's secrets, a failing exchange is judged again on its redacted copy: the crash key holds the
    marker where the token was, not a cut piece of it."""
    stderr = ("Traceback (most recent call last):\n  File \"/srv/s.py\", line 3, in call_tool\n"
              f"RuntimeError: upstream refused token={SECRET}; the key {SECRET} was rejected\n")
    case = Case("crash", "tool", "a call", b'{"jsonrpc":"2.0","id":1,"method":"ping"}', ex.result(1, "ping"))
    exchange = Exchange(case, Era.LEGACY, "2025-11-25", frames=[case.data], crash=ProcessEnd(1, stderr),
                        stderr_tail=stderr)
    (finding,) = FindingSet(Redactor([SECRET])).judge(exchange, ("no-crash",))
    assert "token=<redacted>; the key <redacted> was rejected@call_tool" in finding.key
    texts = [finding.key, finding.message, finding.stderr_tail, *finding.received]
    assert not [piece for piece in _pieces(SECRET) for text in texts if piece in text]
    assert exchange.crash is not None and SECRET in exchange.crash.stderr_tail  # the exchange itself is untouched


def test_a_launched_http_servers_env_names_are_kept_and_its_secret_is_not(tmp_path: Path) -> None:
    """`--launch` with `--env`: the variable goes to the launched server; its name is in each finding's
    reproduction notes, in the transcript's server block and in the rerun command, its value nowhere."""
    launch = f"{sys.executable} {SERVERS / 'http_server.py'} --port {{port}} --bug no-origin-check"
    result = run_cli(["run", "http://127.0.0.1:{port}/mcp", "--launch", launch, "--env", f"API_TOKEN={SECRET}",
                      "--phases", "catalogue", "--budget", "60", "--json", "r.json"], cwd=tmp_path, timeout=180)
    assert result.returncode == 1, result.stdout + result.stderr
    report = json.loads((tmp_path / "r.json").read_text())
    origin = next(f for f in report["findings"] if f["oracle"] == "origin-check")
    assert any("was launched with API_TOKEN set" in note for note in origin["reproducer"]["notes"]), origin
    transcript_path = Path(origin["corpus_path"])
    transcript = json.loads((transcript_path if transcript_path.is_absolute() else tmp_path / transcript_path)
                            .read_text())
    assert transcript["server"]["env"] == ["API_TOKEN"]
    texts = {"console": result.stdout + result.stderr, "report": (tmp_path / "r.json").read_text(),
             **{str(path): path.read_text() for path in (tmp_path / "corpus").glob("*.json")}}
    leaks = {(name, piece) for name, text in texts.items() for piece in _pieces(SECRET) if piece in text}
    assert not leaks, sorted(leaks)


def test_the_rerun_command_passes_each_env_name_from_the_users_shell() -> None:
    from mcpfuzz.report.json_report import rerun_command
    from mcpfuzz.transport.stdio_target import StdioTarget

    stdio = StdioTarget(("python", "server.py"), env_names=("API_TOKEN",))
    assert rerun_command(stdio) == 'mcpfuzz run --env API_TOKEN="$API_TOKEN" -- python server.py'
    launched = HttpTarget("http://127.0.0.1:{port}/mcp", launch=("python", "srv.py"), env_names=("API_TOKEN",))
    assert rerun_command(launched).endswith(' --env API_TOKEN="$API_TOKEN"')


# ---- a hang's reproduction ends by itself ------------------------------------------------------------------

def test_the_printed_reproduction_of_a_hang_ends_by_itself(tmp_path: Path) -> None:
    """A tool that blocks its server's one thread for five minutes is a hang under --call-timeout 2; the printed
    line runs the server under `timeout`, so pasted it ends (status 124: timeout stopped the server) instead of
    holding the terminal until the server reads the end of its input."""
    server = private_copy(SERVERS / "slow_tool_server.py", tmp_path, imports=("mcp_server.py",))
    try:
        result = run_cli(["run", "--timeout", "1", "--call-timeout", "2", "--phases", "coverage", "--budget", "30",
                          "--json", "r.json", "--", sys.executable, str(server), "--delay", "300"], cwd=tmp_path,
                         timeout=180)
        assert result.returncode == 1, result.stdout + result.stderr
        report = json.loads((tmp_path / "r.json").read_text())
        hang = next(f for f in report["findings"] if f["oracle"] == "no-hang")
        shell = hang["reproducer"]["shell"]
        assert shell in result.stdout
        # The limit is the line's pauses plus REPRODUCTION_SECONDS for the server to answer: far sooner than the
        # server's five minutes. The line is run with the pauses' limit alone: `timeout` stopping it is what counts.
        limit = re.search(r" \| timeout (\d+) ", shell)
        assert limit is not None, shell
        paused = sum(int(seconds) for seconds in re.findall(r"; sleep (\d+)", shell))
        assert int(limit.group(1)) == REPRODUCTION_SECONDS + paused
        quick = shell.replace(limit.group(0), f" | timeout {paused + 1} ")
        done = subprocess.run(["bash", "-c", quick], capture_output=True, text=True, timeout=200)
        assert done.returncode == 124, done.stdout + done.stderr
    finally:
        kill_leftovers(str(server))
