"""Negative references and edges on every surface: completions of prompts, templates and arguments that do not
exist, template variables set to raw path-like values, subscriptions to URIs no listing names, prompts with
arguments of the wrong type.

`tests/servers/negative_refs_server.py` is the surface server with one bug per `--bug`; without one it gives zero
findings, and each bug is found by its oracle on the target that has it.
"""

from __future__ import annotations

import json
import sys

import anyio
import pytest
from mcpfuzz.strategies.messages import FrameBuilder
from mcpfuzz.strategies.surfaces.completions import (
    UNKNOWN_ARGUMENT,
    completion_declarations,
    unknown_ref_cases,
)
from mcpfuzz.strategies.surfaces.prompts import wrong_type_cases
from mcpfuzz.strategies.surfaces.templates import RAW_VALUES, raw_uris

from mcpfuzz.engine.config import RunConfig
from mcpfuzz.engine.events import CaseDone, Event, RunFinished
from mcpfuzz.engine.runner import run
from mcpfuzz.jsonrpc.versions import LATEST_LEGACY, Era
from mcpfuzz.oracles.base import all_oracles
from tests.conftest import REPO_ROOT

pytestmark = pytest.mark.unit

SERVER = REPO_ROOT / "tests" / "servers" / "negative_refs_server.py"
PROMPTS = [{"name": "summarize", "arguments": [{"name": "topic", "required": True}, {"name": "style"}]}]
TEMPLATES = [{"uriTemplate": "mem://by-title/{title}"}]


def run_server(*bugs: str, phases: tuple[str, ...] = ("coverage",), version: str | None = None,
               events: list[Event] | None = None) -> RunFinished:
    """One run with every oracle, a 60 s budget at most."""
    command = [sys.executable, str(SERVER), *[arg for bug in bugs for arg in ("--bug", bug)]]
    config = RunConfig(command=command, seed=3, timeout=2.0, budget=60, oracles=tuple(all_oracles()),
                       phases=("probe", *phases), protocol_version=version, max_examples=20)
    return anyio.run(run, config, (lambda event: None) if events is None else events.append)


def test_unknown_references_name_nothing_declared() -> None:
    builder = FrameBuilder(Era.LEGACY, LATEST_LEGACY, next_id=1)
    cases = unknown_ref_cases(builder, completion_declarations(PROMPTS, TEMPLATES))
    sent = [json.loads(case.data)["params"] for case in cases]
    assert [params["ref"] for params in sent[:2]] == [
        {"type": "ref/prompt", "name": "mcpfuzz-no-such-prompt"},
        {"type": "ref/resource", "uri": "mcpfuzz-missing://{mcpfuzz}"}]
    assert [(params["ref"], params["argument"]["name"]) for params in sent[2:]] == [
        ({"type": "ref/prompt", "name": "summarize"}, UNKNOWN_ARGUMENT),
        ({"type": "ref/resource", "uri": "mem://by-title/{title}"}, UNKNOWN_ARGUMENT)]
    assert cases[0].expect.codes == {-32602} and cases[0].expect.wrong_answer == "low" and cases[0].expect.result_ok
    assert all(case.expect.result_ok and case.expect.error_ok for case in cases[1:])
    assert unknown_ref_cases(builder, []) == []


def test_raw_values_reach_the_uri_unencoded() -> None:
    uris = [uri for _, uri in raw_uris("mem://by-title/{title}")]
    assert uris == [f"mem://by-title/{value}" for _, value in RAW_VALUES]
    other_operators = [uri for _, uri in raw_uris("file:///{+path}{?q}")]
    assert other_operators[0] == "file:////?q=mcpfuzz" and other_operators[4] == "file:///mcpfuzz?q=/"


def test_wrong_types_break_the_prompt_arguments_map() -> None:
    builder = FrameBuilder(Era.LEGACY, LATEST_LEGACY, next_id=1)
    sent = [json.loads(case.data)["params"]["arguments"] for case in wrong_type_cases(builder, PROMPTS)]
    assert sent == [{"topic": 42}, ["mcpfuzz"]]


def test_clean_server_gives_zero_findings_and_sends_every_negative_case() -> None:
    events: list[Event] = []
    finished = run_server(phases=("catalogue", "coverage"), version="2025-11-25", events=events)
    assert not finished.error
    assert [(f.oracle, f.target, f.message) for f in finished.findings] == []
    targets = {e.exchange.case.target for e in events if isinstance(e, CaseDone)}
    assert {"completion/unknown-prompt", "completion/unknown-template",
            f"completion/prompt:summarize:{UNKNOWN_ARGUMENT}", "subscription/subscribe-unknown",
            "subscription/unsubscribe-unknown"} <= targets
    titles = {e.exchange.case.title for e in events if isinstance(e, CaseDone)}
    assert any("not encoded" in title for title in titles)
    assert "summarize: `topic` a number, not a string" in titles


@pytest.mark.parametrize(("bug", "phases", "expected"), [
    ("completion-unknown-ref-crash", ("coverage",), {("no-crash", "completion/unknown-prompt")}),
    ("completion-unknown-argument-crash", ("coverage",),
     {("no-crash", f"completion/prompt:summarize:{UNKNOWN_ARGUMENT}"),
      ("no-crash", f"completion/template:mem://by-title/{{title}}:{UNKNOWN_ARGUMENT}")}),
    ("subscribe-unknown-silent", ("catalogue",), {("no-hang", "subscription/subscribe-unknown"),
                                                  ("no-hang", "subscription/unsubscribe-unknown")}),
    ("prompt-argument-type-code", ("coverage",), {("invalid-params", "prompt/summarize")}),
])
def test_each_negative_bug_is_found_by_its_oracle(bug: str, phases: tuple[str, ...],
                                                  expected: set[tuple[str, str]]) -> None:
    finished = run_server(bug, phases=phases, version="2025-11-25")
    assert not finished.error
    assert {(f.oracle, f.target) for f in finished.findings} == expected
