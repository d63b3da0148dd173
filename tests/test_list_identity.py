"""list-identity: in 2026-07-28 a server's tools, prompts and resources MUST NOT vary per connection.

`tests/servers/identity_server.py` lists its tools on one page; `--bug tools-per-process` adds a tool named after
the process, `--bug order-per-process` turns the order by the process id. Each list is sent on fresh processes and
compared with the same list on the process in use, asked just before.
"""

from __future__ import annotations

import sys

import anyio
import pytest
from mcpfuzz.strategies.identity_cases import CONNECTIONS, list_identity_cases
from mcpfuzz.strategies.messages import FrameBuilder

from mcpfuzz.engine.config import RunConfig
from mcpfuzz.engine.events import RunFinished
from mcpfuzz.engine.runner import run
from mcpfuzz.jsonrpc.case_json import expectation_from_json, expectation_to_json
from mcpfuzz.jsonrpc.oracle_ids import OracleId
from mcpfuzz.jsonrpc.parts.identity import IdentityCheck
from mcpfuzz.jsonrpc.versions import LATEST_LEGACY, MODERN_VERSIONS, Era
from mcpfuzz.oracles.base import all_oracles
from tests.conftest import REPO_ROOT

pytestmark = pytest.mark.process

MODERN_VERSION = MODERN_VERSIONS[0]
SERVER = REPO_ROOT / "tests" / "servers" / "identity_server.py"


def run_server(*bugs: str, version: str = MODERN_VERSION) -> RunFinished:
    """The probe and the lifecycle phase (where the fresh connections are), every oracle."""
    command = [sys.executable, str(SERVER), *[arg for bug in bugs for arg in ("--bug", bug)]]
    config = RunConfig(command=command, seed=5, timeout=5.0, budget=60, oracles=tuple(all_oracles()),
                       phases=("probe", "lifecycle"), protocol_version=version)
    return anyio.run(run, config, lambda event: None)


def test_each_declared_list_goes_round_robin_on_fresh_connections_in_the_modern_era_only() -> None:
    capabilities = {"tools": {}, "resources": {"subscribe": True}}
    cases = list_identity_cases(FrameBuilder(Era.MODERN, MODERN_VERSION, next_id=1), capabilities)
    assert [case.id for case in cases][:4] == ["list-identity-tools-1", "list-identity-resources-1",
                                               "list-identity-tools-2", "list-identity-resources-2"]
    assert len(cases) == 2 * CONNECTIONS and all(case.fresh for case in cases)
    assert cases[0].expect.part(IdentityCheck) == IdentityCheck("tools", "name", ordered=True)
    assert cases[1].expect.part(IdentityCheck) == IdentityCheck("resources", "uri", ordered=False)
    assert list_identity_cases(FrameBuilder(Era.LEGACY, LATEST_LEGACY, next_id=1), capabilities) == []


def test_a_saved_case_keeps_its_check_but_never_the_list_it_was_compared_with() -> None:
    case = list_identity_cases(FrameBuilder(Era.MODERN, MODERN_VERSION, next_id=1), {"prompts": {}})[0]
    expect = case.expect
    with_baseline = expect.with_part(IdentityCheck("prompts", "name", False, ({"name": "a"},)))
    loaded = expectation_from_json(expectation_to_json(with_baseline))
    assert loaded.part(IdentityCheck) == IdentityCheck("prompts", "name", False, None)


def test_clean_server_gives_zero_findings() -> None:
    finished = run_server()
    assert [(f.oracle, f.message) for f in finished.findings] == []
    assert finished.stats.phases["lifecycle"] >= CONNECTIONS


def test_a_tool_named_after_the_process_is_a_high_finding_once() -> None:
    findings = [f for f in run_server("tools-per-process").findings if f.oracle == OracleId.LIST_IDENTITY]
    assert [(str(f.severity), f.key) for f in findings] == [("high", "set:tools/list")]
    assert "session_" in findings[0].message and "MUST NOT vary per connection" in findings[0].message


def test_an_order_that_depends_on_the_process_is_low() -> None:
    findings = [f for f in run_server("order-per-process").findings if f.oracle == OracleId.LIST_IDENTITY]
    assert [(str(f.severity), f.key) for f in findings] == [("low", "order:tools/list")]


def test_legacy_sessions_are_not_compared() -> None:
    finished = run_server("tools-per-process", version=LATEST_LEGACY)
    assert [f for f in finished.findings if f.oracle == OracleId.LIST_IDENTITY] == []
