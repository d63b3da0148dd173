"""The pieces of protected-server support that need no process: tokens, challenges, discovery URLs, bad tokens,
the auth oracles' verdicts, settings in transcripts, and redaction of tokens obtained mid-run."""

from __future__ import annotations

import json
import time

import jwt
import pytest
from cryptography.hazmat.primitives.asymmetric import rsa

from mcpfuzz.corpus.redact import REDACTED, Redactor
from mcpfuzz.engine.auth.bad_tokens import forged_tokens
from mcpfuzz.jsonrpc.issued_secrets import remember
from mcpfuzz.oracles.auth import Attempt, judge_attempt, judge_resource_metadata, judge_served, same_resource
from mcpfuzz.oracles.base import Severity
from mcpfuzz.transport.auth.challenge import parse_challenge
from mcpfuzz.transport.auth.discovery import Discovery, Fetched, authorization_server_urls, resource_metadata_urls
from mcpfuzz.transport.auth.settings import AuthSettings
from mcpfuzz.transport.auth.token import Token, TokenFormatError, parse_token_output
from mcpfuzz.transport.http_target import HttpTarget

pytestmark = pytest.mark.unit

KEY = rsa.generate_private_key(public_exponent=65537, key_size=2048)
CLAIMS = {"iss": "http://127.0.0.1:1", "aud": "http://127.0.0.1:2/mcp", "sub": "c", "scope": "mcp"}


def good_jwt(lifetime: int = 600) -> str:
    return jwt.encode({**CLAIMS, "exp": int(time.time()) + lifetime}, KEY, algorithm="RS256", headers={"kid": "k1"})


def test_a_token_command_may_print_the_token_or_a_token_response() -> None:
    assert parse_token_output("  opaque-token-123\n") == Token("opaque-token-123")
    token = parse_token_output('{"access_token": "abc123", "expires_in": 15, "token_type": "Bearer"}')
    assert token.value == "abc123" and token.lifetime == 15.0
    assert not token.due() and token.due(now=time.monotonic() + 12.5)  # renewed with a fifth of its life left
    with pytest.raises(TokenFormatError):
        parse_token_output('{"token": "abc"}')
    with pytest.raises(TokenFormatError):
        parse_token_output("two words")


def test_a_jwt_without_expires_in_lives_until_its_exp() -> None:
    token = parse_token_output(good_jwt(lifetime=100))
    assert token.lifetime is not None and 95 <= token.lifetime <= 100


def test_challenges_are_parsed_as_rfc_6750_writes_them() -> None:
    challenge = parse_challenge('Bearer error="invalid_token", error_description="a, b", '
                                'resource_metadata="http://h/.well-known/oauth-protected-resource/mcp"')
    assert challenge is not None and challenge.bearer and challenge.error == "invalid_token"
    assert challenge.resource_metadata == "http://h/.well-known/oauth-protected-resource/mcp"
    assert parse_challenge("Basic realm=x") is not None and not parse_challenge("Basic realm=x").bearer  # type: ignore
    assert parse_challenge(None) is None and parse_challenge("  ") is None


def test_discovery_urls_follow_rfc_9728_and_rfc_8414() -> None:
    assert resource_metadata_urls("http://h:1/mcp", None) == [
        "http://h:1/.well-known/oauth-protected-resource/mcp", "http://h:1/.well-known/oauth-protected-resource"]
    assert resource_metadata_urls("http://h:1/mcp", parse_challenge('Bearer resource_metadata="http://x/m"')) == \
        ["http://x/m"]
    assert authorization_server_urls("http://a:1") == [
        "http://a:1/.well-known/oauth-authorization-server", "http://a:1/.well-known/openid-configuration"]
    assert authorization_server_urls("http://a:1/tenant") == [
        "http://a:1/.well-known/oauth-authorization-server/tenant", "http://a:1/.well-known/openid-configuration/tenant",
        "http://a:1/tenant/.well-known/openid-configuration"]


def test_bad_tokens_are_really_bad_for_a_verifier() -> None:
    good = good_jwt()
    tokens = {t.id: t for t in forged_tokens(good, None, None)}
    assert set(tokens) == {"none", "garbage", "expired", "alg-none", "other-key", "query"}
    assert tokens["none"].authorization is None and tokens["query"].query_token == good
    public = KEY.public_key()
    for name in ("expired", "alg-none", "other-key"):
        value = (tokens[name].authorization or "").removeprefix("Bearer ")
        assert jwt.decode(value, options={"verify_signature": False})["sub"] == "c"  # the good token's claims
        with pytest.raises(jwt.PyJWTError):
            jwt.decode(value, public, algorithms=["RS256"], audience=CLAIMS["aud"])
    assert jwt.get_unverified_header(tokens["alg-none"].authorization.removeprefix("Bearer "))["alg"] == "none"  # type: ignore[union-attr]
    opaque = {t.id for t in forged_tokens("opaque-token", None, "other-aud-token")}
    assert opaque == {"none", "garbage", "other-audience", "query"}  # nothing to re-sign in an opaque token


def attempt(method: str, status: int, challenge: str | None = None, token: str = "garbage") -> Attempt:
    return Attempt(method, f"a {token} token", token, status, challenge, "application/json", "{}")


def test_served_bad_tokens_are_one_finding_per_set_of_request_kinds() -> None:
    attempts = [attempt(m, 200, token=t) for m in ("tools/list", "tools/call") for t in ("none", "garbage")]
    attempts += [attempt("initialize", 401, 'Bearer resource_metadata="x"', t) for t in ("none", "garbage")]
    found = list(judge_served(attempts))
    assert len(found) == 1
    failure, shown = found[0]
    assert failure.severity is Severity.CRITICAL and shown.method == "tools/list"
    only_lists = list(judge_served([attempt("tools/list", 200)]))
    assert only_lists[0][0].severity is Severity.HIGH


@pytest.mark.parametrize(("status", "challenge", "key"), [
    (500, None, "5xx"),
    (401, None, "no-challenge"),
    (401, "Basic realm=x", "no-challenge"),
    (400, 'Bearer resource_metadata="x"', "status:400"),
    (403, 'Bearer error="invalid_token"', "403"),
])
def test_refusals_that_break_the_rules(status: int, challenge: str | None, key: str) -> None:
    assert [f.key for f in judge_attempt(attempt("initialize", status, challenge))] == [key]


def test_a_refusal_by_the_rules_is_no_finding() -> None:
    assert list(judge_attempt(attempt("initialize", 401, 'Bearer error="invalid_token", resource_metadata="x"'))) == []
    assert list(judge_attempt(attempt("tools/call", 403, 'Bearer error="insufficient_scope", scope="mcp"'))) == []


def test_resource_metadata_must_name_this_server() -> None:
    good = Fetched("http://h/.well-known/oauth-protected-resource/mcp", 200,
                   {"resource": "http://h/mcp/", "authorization_servers": ["http://a"]})
    assert list(judge_resource_metadata(good, "http://H/mcp")) == []
    other = Fetched(good.url, 200, {"resource": "http://h/other", "authorization_servers": []})
    assert sorted(f.key for f in judge_resource_metadata(other, "http://h/mcp")) == [
        "resource-metadata:resource", "resource-metadata:servers"]
    assert same_resource("HTTP://h:80/mcp", "http://h:80/mcp/") and not same_resource("http://h/a", "http://h/b")


def test_settings_round_trip_through_a_transcript_without_a_secret() -> None:
    settings = AuthSettings(client_id="c1", client_secret_env="MY_SECRET", scope="mcp")
    data = json.loads(json.dumps(settings.to_json()))
    assert AuthSettings.from_json(data) == settings
    assert data["replay"] == "--oauth-client-id c1 --oauth-client-secret-env MY_SECRET --oauth-scope mcp"
    with pytest.raises(ValueError):
        AuthSettings(token_command="x", client_id="c", client_secret_env="V")
    with pytest.raises(ValueError):
        AuthSettings(client_id="c")


def test_a_token_obtained_mid_run_is_hidden_by_a_redactor_made_before_it() -> None:
    redactor = Redactor(["configured-secret-1"])
    opaque = "opaque0token0issued0late0zz9"
    assert redactor.text(f"server said {opaque}") == f"server said {opaque}"
    remember(opaque)
    assert redactor.text(f"server said {opaque}") == f"server said {REDACTED}"
    assert redactor.known(f"x{opaque}x") == f"x{REDACTED}x"


def test_a_transcripts_server_block_says_how_to_authenticate_on_replay() -> None:
    settings = AuthSettings(token_command="vault read -field=token secret/mcp")
    target = HttpTarget("http://127.0.0.1:8000/mcp", auth=settings)
    block = json.loads(json.dumps(target.to_json(Redactor())))
    assert block["auth"]["kind"] == "token-command"
    assert block["auth"]["replay"] == "--auth-token-command 'vault read -field=token secret/mcp'"
    assert HttpTarget.from_json(block) == target  # `mcpfuzz replay` gets its token the same way


def test_the_scope_asked_for_is_the_challenges_else_the_metadatas() -> None:
    metadata = Fetched("http://h/.well-known/oauth-protected-resource", 200,
                       {"resource": "http://h/mcp", "scopes_supported": ["mcp", "files:read"]})
    assert Discovery(None, 401, metadata).scope == "mcp files:read"
    named = parse_challenge('Bearer scope="mcp:tools", resource_metadata="x"')
    assert Discovery(named, 401, metadata).scope == "mcp:tools"
    assert Discovery(None, 401, Fetched("u", 200, {"resource": "r"})).scope is None


def test_secrets_remembered_after_a_mark_can_be_forgotten() -> None:
    """A process that makes one run after another (a test worker) forgets a run's tokens when it ends."""
    from mcpfuzz.corpus.redact import Redactor
    from mcpfuzz.jsonrpc.issued_secrets import count, forget_after

    mark = count()
    remember("token-of-one-run")
    assert Redactor().text("--auth-token-command x") == "--auth-<redacted>command x"  # a start of the token
    forget_after(mark)
    assert Redactor().text("--auth-token-command x") == "--auth-token-command x"
    assert count() == mark
