"""Plain JSON-RPC 2.0 servers (`run --jsonrpc --openrpc FILE`): the OpenRPC document read into `method/NAME`
targets, the clean test server with zero findings, each switchable bug found by its oracle, usage errors."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import anyio
import pytest
from mcpfuzz.strategies.arguments.call import NEGATIVE, POSITIVE, ArgumentCall
from mcpfuzz.strategies.arguments.method_calls import method_call_case
from mcpfuzz.strategies.messages import FrameBuilder

from mcpfuzz.engine.config import RunConfig
from mcpfuzz.engine.events import RunFinished
from mcpfuzz.engine.runner import run
from mcpfuzz.jsonrpc.openrpc import OpenRpcError, read_methods
from mcpfuzz.jsonrpc.versions import Era
from mcpfuzz.oracles.base import all_oracles
from tests.conftest import REPO_ROOT, run_cli

pytestmark = pytest.mark.slow

SERVER = REPO_ROOT / "tests" / "servers" / "jsonrpc_server.py"
DOCUMENT = SERVER.with_suffix(".openrpc.json")
METHODS = tuple(read_methods(json.loads(DOCUMENT.read_text())))


def run_plain(*bugs: str, phases: tuple[str, ...], budget: float = 30.0, max_examples: int | None = None,
              corpus: Path | None = None) -> RunFinished:
    command = [sys.executable, str(SERVER), *[arg for bug in bugs for arg in ("--bug", bug)]]
    config = RunConfig(command=command, seed=1, timeout=2.0, budget=budget, oracles=tuple(all_oracles()),
                       phases=("probe", *phases), max_examples=max_examples, corpus=corpus,
                       jsonrpc_methods=METHODS)
    return anyio.run(run, config, lambda event: None)


def test_document_becomes_method_declarations() -> None:
    """Params by name with component refs resolved under $defs, positional order kept, declared errors read."""
    by_name = {m["name"]: m for m in METHODS}
    assert list(by_name) == ["store_memory", "recall_memory", "forget_memory", "add"]
    store = by_name["store_memory"]["paramsSchema"]
    assert store["required"] == ["text"] and store["additionalProperties"] is False
    assert store["properties"]["importance"] == {"$ref": "#/$defs/Importance"}
    assert store["$defs"]["Importance"]["maximum"] == 10
    assert by_name["recall_memory"]["errors"] == [-32001] and by_name["recall_memory"]["readOnly"] is True
    assert (by_name["add"]["paramStructure"], by_name["add"]["paramOrder"]) == ("by-position", ["a", "b"])


def test_positional_params_keep_the_declared_order() -> None:
    add = next(m for m in METHODS if m["name"] == "add")
    builder = FrameBuilder(Era.LEGACY, "2025-11-25")
    valid = method_call_case(builder, add, ArgumentCall(POSITIVE, {"b": 2, "a": 1}, "valid"))
    assert json.loads(valid.data)["params"] == [1, 2] and valid.target == "method/add"
    extra = method_call_case(builder, add, ArgumentCall(NEGATIVE, {"a": 1, "b": 2, "c": 3}, "extra",
                                                        "additionalProperties"))
    assert json.loads(extra.data)["params"] == [1, 2, 3]  # still one param too many
    assert extra.expect.codes == frozenset({-32602})


@pytest.mark.parametrize(("document", "problem"), [
    ({}, "`methods` array"), ({"methods": [{"params": []}]}, "no string `name`"),
    ({"methods": [{"name": "m", "params": [{"$ref": "#/components/contentDescriptors/X"}]}]}, "points nowhere"),
    ({"methods": [{"name": "m", "paramStructure": "sideways"}]}, "paramStructure"), ({"methods": []}, "no method")])
def test_malformed_documents_are_refused_with_where(document: dict, problem: str) -> None:
    with pytest.raises(OpenRpcError, match=problem):
        read_methods(document)


def test_clean_server_gives_zero_findings() -> None:
    """The JSON-RPC catalogue and every call phase, bounded by example counts: nothing is found."""
    finished = run_plain(phases=("catalogue", "coverage", "fuzz", "stateful"), max_examples=30, budget=60)
    assert not finished.error
    assert (finished.era, finished.protocol_version) == ("jsonrpc", "JSON-RPC 2.0")
    assert [(f.oracle, f.target, f.message) for f in finished.findings] == []
    assert finished.stats.phases["catalogue"] >= 25 and finished.stats.tool_calls > 0


@pytest.mark.parametrize(("bug", "phases", "expected"), [
    ("crash-at-max-importance", ("coverage",), {("no-crash", "method/store_memory")}),
    # One finding: the same wrong code on every method is one bug (server-wide), reported on the first method
    # given bad params (coverage goes round by round over the methods: add's first break comes first).
    ("params-code", ("coverage",), {("invalid-params", "method/add")}),
    ("id-coerce", ("catalogue",), {("id-preserved", "id/string-digits")}),
    ("string-sum", ("coverage",), {("response-schema", "method/add")}),
    ("undeclared-error", ("coverage",), {("response-schema", "method/recall_memory")}),
])
def test_each_bug_is_found_by_its_oracle(bug: str, phases: tuple[str, ...], expected: set[tuple[str, str]]) -> None:
    finished = run_plain(bug, phases=phases)
    assert not finished.error
    assert {(f.oracle, f.target) for f in finished.findings} == expected


def test_stateful_sequence_reuses_an_id_a_result_returned() -> None:
    """store, forget, recall with the id store returned: the crash shrinks to those three calls.

    60 sequences: every one drawn is valid now (none is filtered away), so this is how many run (the seed finds
    the crash within the first 40); the search goes on after the find until they are done."""
    finished = run_plain("crash-recall-forgotten", phases=("stateful",), max_examples=60, budget=120)
    crashes = [f for f in finished.findings if f.oracle == "no-crash"]
    assert [f.target for f in crashes] == ["method/recall_memory"]
    methods = [json.loads(frame)["method"] for frame in crashes[0].frames]
    assert methods[-3:] == ["store_memory", "forget_memory", "recall_memory"]


def test_cli_runs_a_plain_server_and_refuses_half_the_options(tmp_path: Path) -> None:
    report = tmp_path / "report.json"
    done = run_cli(["run", "--jsonrpc", "--openrpc", str(DOCUMENT), "--phases", "catalogue", "--json", str(report),
                    "--", sys.executable, str(SERVER), "--bug", "id-coerce"], cwd=tmp_path)
    assert done.returncode == 1, done.stdout + done.stderr
    data = json.loads(report.read_text())
    assert data["era"] == "jsonrpc" and [f["oracle"] for f in data["findings"]] == ["id-preserved"]
    replayed = run_cli(["replay", data["findings"][0]["corpus_path"]], cwd=tmp_path)  # no handshake either
    assert replayed.returncode == 1 and "FAILED" in replayed.stdout, replayed.stdout + replayed.stderr
    discovered = run_cli(["run", "--jsonrpc", "--phases", "catalogue,coverage", "--", sys.executable, str(SERVER),
                          "--bug", "id-coerce"], cwd=tmp_path)  # no document: the server's rpc.discover is asked
    assert discovered.returncode == 1, discovered.stdout + discovered.stderr
    assert "4 to call: store_memory, recall_memory, forget_memory, add" in discovered.stdout
    assert "id-preserved" in discovered.stdout
    alone = run_cli(["run", "--jsonrpc", "--", sys.executable, str(SERVER), "--no-discover"], cwd=tmp_path)
    assert alone.returncode == 2 and "--openrpc FILE" in alone.stdout + alone.stderr
    broken = tmp_path / "broken.json"
    broken.write_text('{"methods": [{"params": []}]}')
    refused = run_cli(["run", "--jsonrpc", "--openrpc", str(broken), "--", sys.executable, str(SERVER)], cwd=tmp_path)
    assert refused.returncode == 2 and "no string `name`" in refused.stderr and "Traceback" not in refused.stderr


def test_methods_from_the_command_line_without_a_document(tmp_path: Path) -> None:
    """--method with --params-schema (params by name): recall_memory is called by coverage, valid and invalid ids,
    and the clean server gives nothing; a schema for only some of the methods is refused."""
    schema = json.dumps({"type": "object", "properties": {"id": {"type": "string", "minLength": 1, "maxLength": 64}},
                         "required": ["id"], "additionalProperties": False})
    done = run_cli(["run", "--jsonrpc", "--method", "recall_memory", "--params-schema", schema, "--phases",
                    "coverage", "--json", "report.json", "--", sys.executable, str(SERVER), "--no-discover"],
                   cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    report = json.loads((tmp_path / "report.json").read_text())
    assert report["findings"] == [] and report["stats"]["tool_calls"] > 5
    unpaired = run_cli(["run", "--jsonrpc", "--method", "a", "--method", "b", "--params-schema", "{}", "--",
                        sys.executable, str(SERVER)], cwd=tmp_path)
    assert unpaired.returncode == 2 and "one schema per method" in unpaired.stderr


@pytest.mark.parametrize(("bugs", "expected"), [((), []), (("--bug", "string-sum"), ["response-schema"])])
def test_over_http_post_too(tmp_path: Path, bugs: tuple[str, ...], expected: list[str]) -> None:
    """A plain JSON-RPC endpoint over HTTP (204 for notifications, 200 with -32700 for bad JSON): MCP's HTTP
    transport rules do not apply; the methods' bugs are found as over stdio."""
    server = SERVER.with_name("jsonrpc_http_server.py")
    done = run_cli(["run", "--jsonrpc", "--openrpc", str(DOCUMENT), "--phases", "catalogue,coverage",
                    "--json", "report.json", "http://127.0.0.1:{port}/rpc", "--launch",
                    " ".join([sys.executable, str(server), "--port", "{port}", *bugs])], cwd=tmp_path, timeout=120)
    report = json.loads((tmp_path / "report.json").read_text())
    assert report["error"] is None, done.stdout + done.stderr
    assert [f["oracle"] for f in report["findings"]] == expected, done.stdout
    assert report["stats"]["tool_calls"] > 0
