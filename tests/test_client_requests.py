"""mcpfuzz as a legacy-era client: the capabilities it declares, the answers it gives to a server's elicitation,
sampling and roots requests (valid, then broken), and each bug of tests/servers/elicit_server.py found by its
oracle, its clean twin by none; then the same tool on the real Python and TypeScript SDKs."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from mcpfuzz.strategies.client_answers import OVERSIZED, client_answer, schema_value

from mcpfuzz.engine.client.capabilities import (
    ALL_CAPABILITIES,
    ClientCapability,
    declared_capabilities,
    parse_client_capabilities,
)
from mcpfuzz.engine.client.responder import ClientResponder
from mcpfuzz.jsonrpc.client_check import FUZZ_MODES, VALID_MODES, AnswerMode
from tests.client_runs import (
    ELICIT_SERVER,
    LEGACY,
    SDK_SERVERS,
    client_run,
    elicit_run,
    mcp1_python,
    node_ready,
    titles,
)
from tests.diffs import assert_same_lines

pytestmark = pytest.mark.slow

ROOTS = ("file:///tmp/r1",)
SCHEMA = {"type": "object", "required": ["name", "age"], "properties": {
    "name": {"type": "string", "minLength": 12}, "age": {"type": "integer", "minimum": 18},
    "ok": {"type": "boolean"}, "size": {"type": "string", "enum": ["s", "m"]},
    "mail": {"type": "string", "format": "email"}, "tags": {"type": "array", "items": {"enum": ["a", "b"]}}}}
ELICIT = {"message": "who?", "requestedSchema": SCHEMA}


def test_capabilities_are_parsed_and_declared() -> None:
    assert parse_client_capabilities("all") == ALL_CAPABILITIES
    assert parse_client_capabilities("none") == frozenset()
    assert parse_client_capabilities("Elicitation, roots") == {ClientCapability.ELICITATION, ClientCapability.ROOTS}
    with pytest.raises(ValueError, match="unknown client capability 'tasks'"):
        parse_client_capabilities("elicitation,tasks")
    assert declared_capabilities(ALL_CAPABILITIES) == {"elicitation": {"form": {}}, "sampling": {}, "roots": {}}
    assert declared_capabilities(frozenset()) == {}


def test_an_accepted_elicitation_carries_values_its_schema_accepts() -> None:
    content = client_answer("elicitation/create", ELICIT, AnswerMode.ACCEPT, ROOTS).result
    assert content == {"action": "accept", "content": {
        "name": "mcpfuzzxxxxx", "age": 18, "ok": True, "size": "s", "mail": "fuzz@example.com", "tags": ["a"]}}
    assert schema_value({"type": "number", "maximum": -3}) == -3
    assert schema_value({"type": "string", "default": "d"}) == "d"


def test_every_answer_mode_of_each_request() -> None:
    def result(method: str, mode: AnswerMode, params: dict | None = None) -> dict | None:
        return client_answer(method, params or ELICIT, mode, ROOTS).result

    assert result("elicitation/create", AnswerMode.DECLINE) == {"action": "decline"}
    assert result("elicitation/create", AnswerMode.CANCEL) == {"action": "cancel"}
    wrong = result("elicitation/create", AnswerMode.WRONG_TYPES)
    assert wrong is not None and wrong["content"]["name"] == 12345 and wrong["content"]["age"] == "not a number"
    assert "action" not in (result("elicitation/create", AnswerMode.MISSING_FIELDS) or {})
    big = result("elicitation/create", AnswerMode.OVERSIZED)
    assert big is not None and len(big["content"]["name"]) == OVERSIZED
    assert result("sampling/createMessage", AnswerMode.ACCEPT) == {
        "role": "assistant", "content": {"type": "text", "text": "mcpfuzz sampled text"}, "model": "mcpfuzz",
        "stopReason": "endTurn"}
    assert result("sampling/createMessage", AnswerMode.MISSING_FIELDS) == {"model": "mcpfuzz"}
    assert result("roots/list", AnswerMode.ACCEPT) == {"roots": [{"uri": "file:///tmp/r1", "name": "mcpfuzz-root-1"}]}
    assert result("roots/list", AnswerMode.WRONG_TYPES) == {"roots": "file:///"}
    error = client_answer("roots/list", {}, AnswerMode.ERROR, ROOTS)
    assert error.result is None and error.error is not None and error.error[0] == -32603
    silent = client_answer("sampling/createMessage", {}, AnswerMode.SILENCE, ROOTS)
    assert silent.result is None and silent.error is None


def test_the_responder_serves_only_what_was_declared() -> None:
    responder = ClientResponder(frozenset({ClientCapability.ROOTS}))
    try:
        assert responder.reply({"id": 1, "method": "ping"}) == {"jsonrpc": "2.0", "id": 1, "result": {}}
        refused = responder.reply({"id": 2, "method": "elicitation/create", "params": ELICIT})
        assert refused is not None and refused["error"]["code"] == -32601
        listed = responder.reply({"id": 3, "method": "roots/list"})
        assert listed is not None and [root["name"] for root in listed["result"]["roots"]] == [
            "mcpfuzz-root-1", "mcpfuzz-root-2"]
        assert all(root["uri"].startswith("file:///") for root in listed["result"]["roots"])
        responder.mode = AnswerMode.SILENCE
        assert responder.reply({"id": 4, "method": "roots/list"}) is None
        assert [(asked.method, asked.mode) for asked in responder.asked] == [
            ("elicitation/create", None), ("roots/list", AnswerMode.ACCEPT), ("roots/list", AnswerMode.SILENCE)]
    finally:
        responder.close()


EVERY_MODE = [f"greet: server's requests answered: {mode.value}" for mode in (*VALID_MODES, *FUZZ_MODES)]
# The tool, the card and the prompt all elicit a name: each is asked every answer mode, by the same path.
ASKING = {"tool/greet": "greet", "resource/greeting://card": "greeting://card", "prompt/introduce": "introduce"}
EVERY_SURFACE = [f"{name}: server's requests answered: {mode.value}" for name in ASKING.values()
                 for mode in (*VALID_MODES, *FUZZ_MODES)]


@pytest.mark.parametrize(("bug", "found"), [
    (None, set()),
    ("trusts-answer", {("no-crash", "decline"), ("no-crash", "wrong-types"), ("no-crash", "error")}),
    ("drops-on-error", {("client-requests", "error")}),
], ids=["clean", "trusts-answer", "drops-on-error"])
def test_each_bug_of_the_elicit_server_is_found_and_the_clean_twin_gives_none(bug: str | None,
                                                                              found: set[tuple[str, str]]) -> None:
    finished, exchanges = elicit_run(*([bug] if bug else []), version=LEGACY)
    assert titles(exchanges) == EVERY_SURFACE
    assert {(f.oracle, f.case_title.rsplit(": ", 1)[-1]) for f in finished.findings} == found
    if bug == "drops-on-error":
        assert sorted(f.target for f in finished.findings) == sorted(ASKING)  # the prompt and the card alike
        assert all(f.severity.name == "MEDIUM" and "elicitation/create" in f.message for f in finished.findings)


def test_a_server_that_blocks_on_the_answer_is_found_stuck() -> None:
    """The stuck call is waited for as any call, up to --call-timeout (short here), then judged stuck; the budget is
    the run's end (its first stuck cases are judged long before)."""
    finished, exchanges = elicit_run("blocks-on-answer", version=LEGACY, budget=30.0, timeout=1.0, call_timeout=3.0)
    assert exchanges, "the client phase ran"
    assert {f.oracle for f in finished.findings} == {"no-hang"}


def test_input_of_an_undeclared_capability_is_missing_capability() -> None:
    none = frozenset[ClientCapability]()
    finished, exchanges = elicit_run("ignores-capabilities", version=LEGACY, capabilities=none)
    assert titles(exchanges) == [f"{name}: declaring no client capability" for name in ASKING.values()]
    # The card's read, refused once the server's undeclared request got -32601, is declared-served's too.
    assert {(f.target, f.oracle, f.severity.name) for f in finished.findings} == {
        *((label, "missing-capability", "HIGH") for label in ASKING),
        ("resource/greeting://card", "declared-served", "MEDIUM")}
    finished, exchanges = elicit_run(version=LEGACY, capabilities=none)
    assert exchanges == [] and not finished.findings  # it asked for nothing: no client phase


def test_the_same_seed_sends_the_same_frames_and_answers(tmp_path: Path) -> None:
    """The client phase's calls and every answer mcpfuzz gave the server (roots' folders included) repeat."""
    logs = []
    for run_number in range(2):
        log = tmp_path / f"frames-{run_number}.log"
        client_run([sys.executable, str(ELICIT_SERVER)], version=LEGACY, log_frames=log)
        logs.append(log.read_bytes())
    assert_same_lines(logs[0], logs[1], what="frames")
    assert logs[0].count(b'"action":"decline"') == len(ASKING)


@pytest.mark.sdk
@pytest.mark.parametrize("sdk", ["python-1", "python-2", "typescript"])
def test_real_sdk_servers_that_elicit_give_no_finding(sdk: str) -> None:
    """FastMCP (mcp 1.30), MCPServer (mcp 2.x, speaking 2025-11-25 here) and the TypeScript SDK, each asked every
    answer mode: each turns every answer into a result or an error (and waits for no answer), so no finding."""
    if sdk == "python-1":
        python = mcp1_python()
        if python is None:
            pytest.skip("no mcp 1.x environment: .ci/run creates .venv-mcp1 (or set MCPFUZZ_MCP1_PYTHON)")
        command = [python, str(SDK_SERVERS / "sdk1_elicit_server.py")]
    elif sdk == "python-2":
        pytest.importorskip("mcp.server.mcpserver")
        command = [sys.executable, str(SDK_SERVERS / "sdk2_elicit_server.py")]
    else:
        if not node_ready():
            pytest.skip("no node, or tests/sdk_servers/ts is not installed (npm ci)")
        command = ["node", str(SDK_SERVERS / "ts" / "elicit_server.mjs")]
    finished, exchanges = client_run(command, version=LEGACY)
    assert [t for t in titles(exchanges) if t.startswith("greet:")] == EVERY_MODE
    assert [f for f in finished.findings if f.severity.name != "LOW"] == []
