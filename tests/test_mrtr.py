"""mcpfuzz as a 2026-07-28 client: a call answered `input_required` retried with `inputResponses` and the
`requestState` echoed, then with broken and tampered retries; each bug of tests/servers/elicit_server.py found by
its oracle, its clean twin by none; then the real Python SDK 2.x, which seals its state."""

from __future__ import annotations

import base64
import json
import sys

import pytest
from mcpfuzz.strategies.client_answers import OVERSIZED, edited_state, retry_params, tampered_state

from mcpfuzz.jsonrpc.case_json import expectation_from_json, expectation_to_json
from mcpfuzz.jsonrpc.client_check import AnswerMode, RetryKind
from mcpfuzz.jsonrpc.expectation import Expectation
from mcpfuzz.jsonrpc.oracle_ids import OracleId
from mcpfuzz.jsonrpc.parts.client import ClientCheck
from tests.client_runs import SDK_SERVERS, client_run, elicit_run, titles

pytestmark = pytest.mark.slow

ROOTS = ("file:///tmp/r1",)
ORIGINAL = {"name": "greet", "arguments": {}, "_meta": {"m": 1}}
ASK = {"message": "name?", "requestedSchema": {"type": "object", "properties": {"name": {"type": "string"}}}}
ASKED = {"resultType": "input_required", "requestState": "abcdefgh",
         "inputRequests": {"who": {"method": "elicitation/create", "params": ASK},
                           "where": {"method": "roots/list"}}}
ACCEPTED = {"who": {"action": "accept", "content": {"name": "mcpfuzz"}},
            "where": {"roots": [{"uri": "file:///tmp/r1", "name": "mcpfuzz-root-1"}]}}


def test_a_valid_retry_answers_every_key_and_echoes_the_state() -> None:
    assert retry_params(ORIGINAL, ASKED, RetryKind.VALID, ROOTS) == {
        **ORIGINAL, "inputResponses": ACCEPTED, "requestState": "abcdefgh"}
    # No requestState in the result: none in the retry (basic/patterns/mrtr, client requirements).
    stateless = {key: value for key, value in ASKED.items() if key != "requestState"}
    assert "requestState" not in retry_params(ORIGINAL, stateless, RetryKind.VALID, ROOTS)


def test_each_broken_retry() -> None:
    def params(kind: RetryKind) -> dict:
        return retry_params(ORIGINAL, ASKED, kind, ROOTS)

    assert "inputResponses" not in params(RetryKind.NO_RESPONSES)
    assert sorted(params(RetryKind.WRONG_KEYS)["inputResponses"]) == ["mcpfuzz-unknown-where", "mcpfuzz-unknown-who"]
    assert "requestState" not in params(RetryKind.NO_STATE)
    assert params(RetryKind.TRUNCATED_STATE)["requestState"] == "abcd"
    assert params(RetryKind.FLIPPED_STATE)["requestState"] == "abcdBfgh"
    assert len(params(RetryKind.OVERSIZED_STATE)["requestState"]) == 8 + OVERSIZED
    assert params(RetryKind.EXTRA_PARAMS)["mcpfuzzExtra"] == {"nested": [1, "two", None]}
    assert all(params(kind)["_meta"] == {"m": 1} for kind in RetryKind)


def test_a_readable_state_has_a_value_edited() -> None:
    plain = json.dumps({"user": "ann", "n": 2, "ok": True})
    assert json.loads(edited_state(plain) or "") == {"user": "ann-mcpfuzz", "n": 2, "ok": True}
    packed = base64.urlsafe_b64encode(b'{"greeting":"Hello"}').decode().rstrip("=")
    edited = edited_state(packed) or ""
    assert json.loads(base64.urlsafe_b64decode(edited + "=" * (-len(edited) % 4))) == {"greeting": "Hello-mcpfuzz"}
    assert edited_state("opaque.blob") is None
    # An opaque state is still tampered with: one character changed.
    assert tampered_state("opaque.blob", RetryKind.EDITED_STATE) == "opaquB.blob"


def test_a_retry_check_survives_a_transcript() -> None:
    expect = Expectation(judge=OracleId.INPUT_REQUIRED, id=3, result_ok=True, error_ok=True, method="tools/call",
                         parts=(ClientCheck(AnswerMode.ACCEPT, ("elicitation",), RetryKind.EDITED_STATE,
                                            {"content": [], "resultType": "complete"}),))
    back = expectation_from_json(expectation_to_json(expect))
    client = back.part(ClientCheck)
    assert client == expect.part(ClientCheck) and client is not None
    assert client.baseline == {"content": [], "resultType": "complete"}


def retries(name: str) -> list[str]:
    """The client phase's cases of one request answered input_required, in order."""
    return [f"{name}: server's requests answered: accept", *(f"{name}: retry, {kind.value}" for kind in RetryKind),
            f"{name}: declaring no client capability"]


RETRIES = retries("greet")
# 2026-07-28 basic/patterns/mrtr lets tools/call, prompts/get and resources/read ask: each is retried the same way.
ASKING = {"tool/greet": "greet", "resource/greeting://card": "greeting://card", "prompt/introduce": "introduce"}
EVERY_SURFACE = [title for name in ASKING.values() for title in retries(name)]


@pytest.mark.parametrize(("bug", "found"), [
    (None, set()),
    ("unsigned-state", {(label, "input-required", "retry, edited-state") for label in ASKING}),
    ("ignores-capabilities", {(label, "missing-capability", "declaring no client capability") for label in ASKING}),
    ("crashes-without-responses", {(label, "no-crash", "retry, no-responses") for label in ASKING}),
], ids=["clean", "unsigned-state", "ignores-capabilities", "crashes-without-responses"])
def test_each_mrtr_bug_is_found_on_every_surface_and_the_clean_twin_gives_none(
        bug: str | None, found: set[tuple[str, str, str]]) -> None:
    """The tool, the prompt and the resource of tests/servers/elicit_server.py each retried, each bug found on all
    three (a crash is told apart by the method that crashed)."""
    finished, exchanges = elicit_run(*([bug] if bug else []))
    assert titles(exchanges) == EVERY_SURFACE
    assert [exchange.case.target for exchange in exchanges[::len(RETRIES)]] == list(ASKING)
    assert {(f.target, f.oracle, f.case_title.split(": ", 1)[1]) for f in finished.findings} == found


@pytest.mark.sdk
def test_the_python_sdk_seals_its_request_state_and_passes_prompts_and_templates_through() -> None:
    """mcp 2.x's MCPServer seals a tool's requestState (AES-GCM) and refuses -32021 without elicitation; a prompt
    and a resource template that return an InputRequiredResult of their own get the retry's answers: no finding."""
    pytest.importorskip("mcp.server.mcpserver")
    finished, exchanges = client_run([sys.executable, str(SDK_SERVERS / "sdk2_elicit_server.py")])
    asking = ("greet", "introduce", "greeting://card/{lang}")
    assert sorted(titles(exchanges)) == sorted(title for name in asking for title in retries(name))
    assert [f for f in finished.findings if f.severity.name != "LOW"] == []
