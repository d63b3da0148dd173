"""Protected servers (slow: real SDK servers): a real authorization server (oauth2-mock-server) and the mcp 2.x
SDK's own resource server.

Each planted bug of tests/servers/protected_server.py is found by the oracle it breaks, and the clean twin gets no
auth finding; a connection whose tokens expire every few seconds keeps calling tools with renewed tokens; no token the
authorization server issued reaches anything mcpfuzz writes; a failing token source stops the run saying why.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Iterator
from dataclasses import replace
from pathlib import Path

import anyio
import pytest

from mcpfuzz.engine.config import RunConfig
from mcpfuzz.engine.events import Event, Notice, RunFinished
from mcpfuzz.engine.runner import run
from mcpfuzz.oracles.base import all_oracles
from mcpfuzz.transport.auth.settings import AuthSettings
from mcpfuzz.transport.base import ConnectionCallbacks, ConnectionOptions
from mcpfuzz.transport.connect import open_connection
from mcpfuzz.transport.http_target import HttpTarget
from tests.auth_fixtures import (
    CLIENT_SECRET_ENV,
    ROOT,
    AuthorizationServer,
    authorization_server,
    protected_target,
)
from tests.conftest import run_cli

pytestmark = pytest.mark.slow

AUTH_ORACLES = ("auth-required", "auth-challenge")


@pytest.fixture(autouse=True)
def client_secret(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(CLIENT_SECRET_ENV, "test-client-secret-value")


@pytest.fixture(scope="module")
def issuer(tmp_path_factory: pytest.TempPathFactory) -> Iterator[AuthorizationServer]:
    """One authorization server for the module's runs, its tokens living an hour (no run outlives one)."""
    with authorization_server(tmp_path_factory.mktemp("issuer")) as server:
        yield server


@pytest.fixture(scope="module")
def short_issuer(tmp_path_factory: pytest.TempPathFactory) -> Iterator[AuthorizationServer]:
    """One authorization server whose tokens live 4 s, for the tests of renewal (each counts from its own start)."""
    with authorization_server(tmp_path_factory.mktemp("short-issuer"), lifetime=4) as server:
        yield server


def run_protected(target: HttpTarget, *, phases: tuple[str, ...] = ("probe",), budget: float = 300.0,
                  corpus: Path | None = None, log_frames: Path | None = None,
                  events: list[Event] | None = None) -> RunFinished:
    """A run on the protected server; the probe alone (and its auth phase) leaves out lint, which no test here reads
    and whose listing would only add requests."""
    oracles = tuple(o for o in all_oracles() if phases != ("probe",) or o != "lint")
    config = RunConfig(command=[], seed=3, timeout=5.0, budget=budget, oracles=oracles, phases=phases,
                       corpus=corpus, log_frames=log_frames, http=target, replay_corpus=False)
    return anyio.run(run, config, (lambda event: None) if events is None else events.append)


def notices(events: list[Event]) -> list[str]:
    return [event.message for event in events if isinstance(event, Notice)]


def auth_findings(finished: RunFinished) -> list[tuple[str, str, str]]:
    return sorted((f.oracle, f.severity.name.lower(), f.key) for f in finished.findings if f.oracle in AUTH_ORACLES)


PLANTED = [
    # bug, oracle, severity, what the key names
    ("initialize-only", "auth-required", "critical", "served:tools/list,tools/call:none,garbage"),
    ("alg-none", "auth-required", "critical", "served:initialize,tools/list,tools/call:alg-none"),
    ("any-audience", "auth-required", "critical", "served:initialize,tools/list,tools/call:other-audience"),
    ("query-token", "auth-required", "critical", "served:initialize,tools/list,tools/call:query"),
    ("garbage-500", "auth-challenge", "medium", "5xx"),
    ("no-challenge", "auth-challenge", "medium", "no-challenge"),
]


@pytest.mark.parametrize(("bug", "oracle", "severity", "key"), PLANTED, ids=[row[0] for row in PLANTED])
def test_each_planted_bug_is_found(issuer: AuthorizationServer, bug: str, oracle: str, severity: str,
                                   key: str) -> None:
    events: list[Event] = []
    finished = run_protected(protected_target(issuer.url, bug), events=events)
    found = auth_findings(finished)
    assert any(o == oracle and s == severity and k.startswith(key) for o, s, k in found), (found, notices(events))
    assert len(found) == 1, found  # one cause, one finding


def test_the_clean_twin_has_no_auth_finding(issuer: AuthorizationServer) -> None:
    events: list[Event] = []
    finished = run_protected(protected_target(issuer.url), events=events)
    assert auth_findings(finished) == []
    # The probes ran: seven kinds of bad token on the three request kinds, none served.
    assert "auth: 21 requests with 7 kinds of bad token, 0 served" in notices(events), notices(events)


async def keep_calling(target: HttpTarget, issued: Callable[[], int], renewals: int) -> list[int]:
    """Over one connection: a session, then tools/call until the token source has issued `renewals` more tokens
    (and ten calls after that); the HTTP status of every call. The wait is for a condition, with a deadline far
    above what any machine needs (tokens live 4 s)."""
    lines: list[bytes] = []
    callbacks = ConnectionCallbacks(on_line=lambda data, size: lines.append(data), on_exit=lambda end: None,
                                    on_change=lambda: None)
    statuses: list[int] = []
    connection = await open_connection(target, callbacks, ConnectionOptions(timeout=10, startup_timeout=60))
    async with connection:
        await connection.start()
        await connection.send(INITIALIZE)
        await connection.send(b'{"jsonrpc":"2.0","method":"notifications/initialized"}')
        first, after = issued(), 0
        with anyio.fail_after(RENEWAL_DEADLINE):
            while issued() < first + renewals or after < 10:
                after += issued() >= first + renewals
                reply = await connection.send(CALL)
                while not reply.done:
                    await anyio.sleep(0.05)
                assert reply.status is not None, reply.error
                statuses.append(reply.status)
                await anyio.sleep(0.2)
    return statuses


INITIALIZE = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
    "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}}).encode()
CALL = b'{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"add","arguments":{"a":1,"b":2}}}'
RENEWAL_DEADLINE = 240.0


def test_a_connection_outlives_its_tokens(short_issuer: AuthorizationServer) -> None:
    """OAuth tokens living 4 s: renewed before they expire (or after a 401), every call served."""
    statuses = anyio.run(keep_calling, protected_target(short_issuer.url).on_free_port(),
                         lambda: len(short_issuer.issued()), 3)
    assert statuses and set(statuses) == {200}, statuses


def test_a_token_command_is_run_again_as_its_tokens_expire(short_issuer: AuthorizationServer, tmp_path: Path) -> None:
    """--auth-token-command printing the token endpoint's JSON (expires_in: 4): each renewal runs it again, and
    every call is served."""
    calls = tmp_path / "calls"
    calls.write_text("")
    script = tmp_path / "get_token.py"
    script.write_text(
        "import sys, urllib.request, urllib.parse\n"
        f"open({str(calls)!r}, 'a').write('x')\n"
        "form = urllib.parse.urlencode({'grant_type': 'client_credentials', 'scope': 'mcp', "
        "'resource': sys.argv[1]}).encode()\n"
        f"print(urllib.request.urlopen({short_issuer.url + '/token'!r}, form).read().decode())\n")
    # The command asks for a token for the server's URL (its audience), so the port is chosen here.
    bound = protected_target(short_issuer.url).on_free_port()
    command = AuthSettings(token_command=f"{sys.executable} {script} {bound.url}")
    statuses = anyio.run(keep_calling, replace(bound, auth=command), lambda: len(calls.read_text()), 3)
    assert statuses and set(statuses) == {200}, statuses


def test_a_run_writes_no_token_anywhere(short_issuer: AuthorizationServer, tmp_path: Path) -> None:
    """A whole run with 4-second tokens: no token the authorization server issued (nor a piece of one) is in the
    corpus, the frame log or any event, and no request was refused for its token."""
    events: list[Event] = []
    before = len(short_issuer.issued())
    finished = run_protected(protected_target(short_issuer.url), phases=("probe", "catalogue", "fuzz"), budget=15,
                             corpus=tmp_path / "corpus", log_frames=tmp_path / "frames.log", events=events)
    issued = short_issuer.issued()[before:]  # this run's tokens (and any a test before it left: hidden as well)
    assert issued and auth_findings(finished) == [], notices(events)
    assert (tmp_path / "frames.log").stat().st_size > 0
    written = [p.read_text(errors="replace") for p in tmp_path.rglob("*") if p.is_file()]
    written.append(repr(events))
    for token in short_issuer.issued():
        assert not any(token in text for text in written)
        assert not any(token[-40:] in text for text in written)  # nor a piece of one


def test_a_failing_token_command_stops_the_run_with_its_status_and_stderr(issuer: AuthorizationServer,
                                                                         tmp_path: Path) -> None:
    target = protected_target(issuer.url)
    # The run ends at the token command's failure; the budget is only a bound (a loaded machine starts the SDK
    # server slowly).
    result = run_cli(["run", target.url, "--launch", " ".join(target.launch), "--budget", "240",
                      "--auth-token-command", f"{sys.executable} -c \"import sys; sys.stderr.write('vault sealed');"
                      " sys.exit(3)\"", "--corpus", str(tmp_path / "corpus")], timeout=300)
    output = result.stdout + result.stderr
    assert result.returncode not in (0, 1), output
    assert "exit status 3" in output and "vault sealed" in output, output


def test_failed_discovery_says_which_url_answered_what(tmp_path: Path) -> None:
    """The server names an authorization server nothing listens on: the error names its metadata URLs."""
    dead = "http://127.0.0.1:9"
    target = protected_target(dead)
    result = run_cli(["run", target.url, "--launch", " ".join(target.launch), "--budget", "240",
                      "--oauth-client-id", "c", "--oauth-client-secret-env", CLIENT_SECRET_ENV,
                      "--corpus", str(tmp_path / "corpus")],
                     env={CLIENT_SECRET_ENV: "s3cret-value-never-shown"}, timeout=300)
    output = result.stdout + result.stderr
    assert result.returncode not in (0, 1), output
    assert f"{dead}/.well-known/oauth-authorization-server" in output, output
    assert "s3cret-value-never-shown" not in output


TS_PROTECTED = ROOT / "tests" / "sdk_servers" / "ts" / "protected_server.mjs"


@pytest.mark.parametrize("bug", [None, "garbage-500"])
def test_the_typescript_sdk_bearer_middleware(issuer: AuthorizationServer, bug: str | None) -> None:
    """The TypeScript SDK's requireBearerAuth and metadata router: correct with an InvalidTokenError verifier (no auth
    finding, every probe refused), a 500 for bad tokens when the verifier lets its library's error through."""
    if not (TS_PROTECTED.parent / "node_modules" / "@modelcontextprotocol").is_dir():
        pytest.skip("the TypeScript SDK is not installed (tests/sdk_servers/ts: npm ci)")
    events: list[Event] = []
    planted = ("--bug", bug) if bug else ()
    launch = ("node", str(TS_PROTECTED), "--port", "{port}", "--issuer", issuer.url, *planted)
    target = replace(protected_target(issuer.url), launch=launch)
    finished = run_protected(target, events=events)
    found = auth_findings(finished)
    if bug is None:
        assert found == [], found
        assert "auth: 21 requests with 7 kinds of bad token, 0 served" in notices(events), notices(events)
    else:
        assert any(k == "5xx" for _, _, k in found), (found, notices(events))
        assert len(found) == 1, found  # every bad token answered 500: one cause
