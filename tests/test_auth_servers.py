"""Protected servers (slow: real SDK servers): a real authorization server (oauth2-mock-server) and the mcp 2.x
SDK's own resource server.

Each planted bug of tests/servers/protected_server.py is found by the oracle it breaks, and the clean twin gets no
auth finding; a run whose tokens expire every few seconds keeps calling tools with renewed tokens; no token the
authorization server issued reaches anything mcpfuzz writes; a failing token source stops the run saying why.
"""

from __future__ import annotations

import sys
from dataclasses import replace
from pathlib import Path

import anyio
import pytest

from mcpfuzz.engine.config import RunConfig
from mcpfuzz.engine.events import CaseDone, Event, Notice, PhaseName, RunFinished
from mcpfuzz.engine.runner import run
from mcpfuzz.oracles.base import all_oracles
from mcpfuzz.transport.auth.settings import AuthSettings
from mcpfuzz.transport.http_target import HttpTarget
from tests.auth_fixtures import CLIENT_SECRET_ENV, authorization_server, protected_target
from tests.conftest import run_cli

pytestmark = pytest.mark.slow

AUTH_ORACLES = ("auth-required", "auth-challenge")


@pytest.fixture(autouse=True)
def client_secret(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(CLIENT_SECRET_ENV, "test-client-secret-value")


def run_protected(target: HttpTarget, *, phases: tuple[str, ...] = ("probe",), budget: float = 30.0,
                  corpus: Path | None = None, log_frames: Path | None = None,
                  events: list[Event] | None = None) -> RunFinished:
    config = RunConfig(command=[], seed=3, timeout=5.0, budget=budget, oracles=tuple(all_oracles()), phases=phases,
                       corpus=corpus, log_frames=log_frames, http=target, replay_corpus=False)
    return anyio.run(run, config, (lambda event: None) if events is None else events.append)


def notices(events: list[Event]) -> list[str]:
    return [event.message for event in events if isinstance(event, Notice)]


def fuzz_span(events: list[Event]) -> float:
    """Seconds between the first and the last case of the fuzz phase."""
    times = [e.timestamp for e in events if isinstance(e, CaseDone) and e.phase is PhaseName.FUZZ]
    return max(times) - min(times) if times else 0.0


def auth_findings(finished: RunFinished) -> list[tuple[str, str, str]]:
    return sorted((f.oracle, f.severity.name.lower(), f.key) for f in finished.findings if f.oracle in AUTH_ORACLES)


PLANTED = [
    # bug, oracle, severity, what the key names
    ("initialize-only", "auth-required", "critical", "served:tools/list,tools/call:none,garbage"),
    ("alg-none", "auth-required", "critical", "served:initialize,tools/list,tools/call:alg-none"),
    ("any-audience", "auth-required", "critical", "served:initialize,tools/list,tools/call:other-audience"),
    ("query-token", "auth-required", "critical", "served:initialize,tools/list,tools/call:query"),
    ("garbage-500", "auth-challenge", "medium", "5xx:garbage"),
    ("no-challenge", "auth-challenge", "medium", "no-challenge"),
]


@pytest.mark.parametrize(("bug", "oracle", "severity", "key"), PLANTED, ids=[row[0] for row in PLANTED])
def test_each_planted_bug_is_found(tmp_path: Path, bug: str, oracle: str, severity: str, key: str) -> None:
    events: list[Event] = []
    with authorization_server(tmp_path) as issuer:
        finished = run_protected(protected_target(issuer.url, bug), events=events)
    found = auth_findings(finished)
    assert any(o == oracle and s == severity and k.startswith(key) for o, s, k in found), (found, notices(events))
    assert len(found) == 1, found  # one cause, one finding


def test_the_clean_twin_has_no_auth_finding(tmp_path: Path) -> None:
    events: list[Event] = []
    with authorization_server(tmp_path) as issuer:
        finished = run_protected(protected_target(issuer.url), events=events)
    assert auth_findings(finished) == []
    # The probes ran: seven kinds of bad token on the three request kinds, none served.
    assert "auth: 21 requests with 7 kinds of bad token, 0 served" in notices(events), notices(events)


def test_a_run_outlives_its_tokens_and_writes_none_of_them(tmp_path: Path) -> None:
    """Tokens living 4 s (renewed 2 s before they end) over a 60 s run: renewed all along, the tools called with
    them; no token issued is in the corpus, the frame log or any event."""
    events: list[Event] = []
    with authorization_server(tmp_path, lifetime=4) as issuer:
        finished = run_protected(protected_target(issuer.url), phases=("probe", "fuzz"), budget=60,
                                 corpus=tmp_path / "corpus", log_frames=tmp_path / "frames.log", events=events)
        issued = issuer.issued()
    assert finished.stats.tool_calls > 0, notices(events)
    # The fuzz phase's calls went on past several token lifetimes, and the token was renewed for them: every
    # request was served (a 401 would have been a finding), with tokens the authorization server issued anew.
    assert fuzz_span(events) > 3 * 4, (fuzz_span(events), notices(events))
    assert len(issued) >= 3, (len(issued), notices(events))
    assert not [f for f in finished.findings if f.oracle in ("response-schema", "no-hang", *AUTH_ORACLES)], \
        [(f.oracle, f.message) for f in finished.findings]
    written = [p.read_text(errors="replace") for p in tmp_path.rglob("*") if p.is_file()
               and "authorization-server" not in p.name]
    written.append(repr(events))
    for token in issued:
        assert not any(token in text for text in written)
        assert not any(token[-40:] in text for text in written)  # nor a piece of one


def test_a_token_command_is_run_again_as_its_tokens_expire(tmp_path: Path) -> None:
    """--auth-token-command printing the token endpoint's JSON (expires_in: 4): each renewal runs it again."""
    calls = tmp_path / "calls"
    script = tmp_path / "get_token.py"
    with authorization_server(tmp_path, lifetime=4) as issuer:
        script.write_text(
            "import sys, urllib.request, urllib.parse\n"
            f"open({str(calls)!r}, 'a').write('x')\n"
            "form = urllib.parse.urlencode({'grant_type': 'client_credentials', 'scope': 'mcp', "
            "'resource': sys.argv[1]}).encode()\n"
            f"print(urllib.request.urlopen({issuer.url + '/token'!r}, form).read().decode())\n")
        # The command asks for a token for the server's URL (its audience), so the port is chosen here.
        bound = protected_target(issuer.url).on_free_port()
        command = AuthSettings(token_command=f"{sys.executable} {script} {bound.url}")
        events: list[Event] = []
        finished = run_protected(replace(bound, auth=command), phases=("probe", "fuzz"), budget=60, events=events)
    assert finished.stats.tool_calls > 0
    assert fuzz_span(events) > 3 * 4, (fuzz_span(events), notices(events))
    assert len(calls.read_text()) >= 3  # the first token and renewals (each 2 s before the token ends)
    assert auth_findings(finished) == []


def test_a_failing_token_command_stops_the_run_with_its_status_and_stderr(tmp_path: Path) -> None:
    with authorization_server(tmp_path) as issuer:
        target = protected_target(issuer.url)
        result = run_cli(["run", target.url, "--launch", " ".join(target.launch), "--budget", "5",
                          "--auth-token-command", f"{sys.executable} -c \"import sys; sys.stderr.write('vault sealed');"
                          " sys.exit(3)\"", "--corpus", str(tmp_path / "corpus")])
    output = result.stdout + result.stderr
    assert result.returncode not in (0, 1), output
    assert "exit status 3" in output and "vault sealed" in output, output


def test_failed_discovery_says_which_url_answered_what(tmp_path: Path) -> None:
    """The server names an authorization server nothing listens on: the error names its metadata URLs."""
    dead = "http://127.0.0.1:9"
    target = protected_target(dead)
    result = run_cli(["run", target.url, "--launch", " ".join(target.launch), "--budget", "5",
                      "--oauth-client-id", "c", "--oauth-client-secret-env", CLIENT_SECRET_ENV,
                      "--corpus", str(tmp_path / "corpus")],
                     env={CLIENT_SECRET_ENV: "s3cret-value-never-shown"})
    output = result.stdout + result.stderr
    assert result.returncode not in (0, 1), output
    assert f"{dead}/.well-known/oauth-authorization-server" in output, output
    assert "s3cret-value-never-shown" not in output
