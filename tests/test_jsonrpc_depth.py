"""Plain JSON-RPC depth (`run --jsonrpc`): id null, method names in other letters, params by position where the
OpenRPC document allows them (and where it does not), one array item of the wrong type, a 1 MB request line.

`tests/servers/jsonrpc_depth_server.py` is clean without `--bug` (zero findings); each bug is found by its oracle
on the method (or catalogue case) that has it.
"""

from __future__ import annotations

import json
import sys

import anyio
import pytest
from mcpfuzz.strategies.jsonrpc_catalogue import jsonrpc_catalogue
from mcpfuzz.strategies.jsonrpc_depth import BIG_LINE, depth_cases, other_case_name
from mcpfuzz.strategies.messages import FrameBuilder

from mcpfuzz.engine.config import RunConfig
from mcpfuzz.engine.events import CaseDone, Event, RunFinished
from mcpfuzz.engine.runner import run
from mcpfuzz.jsonrpc.openrpc import read_methods
from mcpfuzz.jsonrpc.versions import LATEST_LEGACY, Era
from mcpfuzz.oracles.base import all_oracles
from tests.conftest import REPO_ROOT

pytestmark = pytest.mark.unit

SERVER = REPO_ROOT / "tests" / "servers" / "jsonrpc_depth_server.py"
METHODS = tuple(read_methods(json.loads(SERVER.with_suffix(".openrpc.json").read_text())))


def run_depth(*bugs: str, phases: tuple[str, ...] = ("coverage",), events: list[Event] | None = None) -> RunFinished:
    """One plain JSON-RPC run of the depth server, every oracle, a 60 s budget at most."""
    command = [sys.executable, str(SERVER), *[arg for bug in bugs for arg in ("--bug", bug)]]
    config = RunConfig(command=command, seed=1, timeout=2.0, budget=60, oracles=tuple(all_oracles()),
                       phases=("probe", *phases), max_examples=20, jsonrpc_methods=METHODS)
    return anyio.run(run, config, (lambda event: None) if events is None else events.append)


def test_names_in_other_letters_skip_declared_ones() -> None:
    assert other_case_name("store_memory", set()) == "Store_Memory"
    assert other_case_name("add", {"Add"}) == "ADD"
    assert other_case_name("x", {"X"}) is None


def test_depth_cases_follow_the_document() -> None:
    """by-name: positional is a -32602 case; by-position: by name is; either: positional is valid. One wrong item
    per typed array param; one line of about a megabyte; the same frames each time."""
    valid = {"store_memory": {"text": "a", "importance": 1}, "recall_memory": {"id": "x"},
             "forget_memory": {"id": "x"}, "add": {"a": 1, "b": 2}, "total": {"values": [1], "scale": 1}}

    def make() -> list:
        builder = FrameBuilder(Era.LEGACY, LATEST_LEGACY, next_id=1)
        return depth_cases(builder, [(method, valid[method["name"]]) for method in METHODS])

    cases = make()
    assert [case.data for case in cases] == [case.data for case in make()]
    by_title = {case.title: case for case in cases}
    positional = by_title["store_memory: valid values by position; the document says by-name"]
    assert json.loads(positional.data)["params"] == ["a", 1] and positional.expect.codes == {-32602}
    assert json.loads(by_title["add: valid values by name; the document says by-position"].data)["params"] == \
        {"a": 1, "b": 2}
    either = by_title["total: valid values by position; the document says either"]
    assert json.loads(either.data)["params"] == [[1], 1] and either.expect.result_ok
    wrong = next(case for case in cases if "one item" in case.title)
    assert json.loads(wrong.data)["params"]["values"] == [1, "not a number"] and wrong.expect.codes == {-32602}
    assert json.loads(by_title["Store_Memory: the method's name in other letters (names match exactly)"]
                      .data)["method"] == "Store_Memory"
    big = next(case for case in cases if "-byte line" in case.title)
    assert len(big.data) >= BIG_LINE and json.loads(big.data)["method"] == "recall_memory"


def test_catalogue_sends_a_request_with_id_null() -> None:
    null = next(case for case in jsonrpc_catalogue("add") if case.target == "id/null")
    assert json.loads(null.data)["id"] is None and null.expect.id is None and null.expect.reply


def test_clean_depth_server_gives_zero_findings() -> None:
    events: list[Event] = []
    finished = run_depth(phases=("catalogue", "coverage"), events=events)
    assert not finished.error
    assert [(f.oracle, f.target, f.message) for f in finished.findings] == []
    titles = {e.exchange.case.title for e in events if isinstance(e, CaseDone)}
    assert "total: valid values by position; the document says either" in titles
    assert any("-byte line" in title for title in titles) and "id null" in " ".join(titles)


@pytest.mark.parametrize(("bug", "phases", "expected"), [
    ("null-id-silent", ("catalogue",), {("method-not-found", "id/null")}),
    ("any-case-methods", ("coverage",), {("method-not-found", "method/store_memory")}),
    ("by-position-refused", ("coverage",), {("valid-input-accepted", "method/total")}),
    ("items-unchecked", ("coverage",), {("invalid-params", "method/total")}),
    ("line-limit-crash", ("coverage",), {("no-crash", "method/recall_memory")}),
])
def test_each_depth_bug_is_found_by_its_oracle(bug: str, phases: tuple[str, ...],
                                               expected: set[tuple[str, str]]) -> None:
    finished = run_depth(bug, phases=phases)
    assert not finished.error
    assert {(f.oracle, f.target) for f in finished.findings} == expected
