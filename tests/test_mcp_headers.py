"""Streamable HTTP headers in 2026-07-28: tool arguments mirrored into `Mcp-Param-*` (x-mcp-header, SEP-2243), sent
by mcpfuzz's own calls and sent missing, mismatched and broken by the HTTP family; and a foreign `Host`.

`tests/servers/http_server.py --mirror` serves a tool (`route`) that mirrors `region` and `shard`; the clean server
checks the headers against the body, `--bug ignore-param-headers` does not. `--host-check` refuses a foreign Host
with 421, as the Python SDK does (not a bug either way: the spec has no Host rule).
"""

from __future__ import annotations

import pytest
from mcpfuzz.strategies.http_cases import INVALID_SENTINEL, MirroredCall, http_cases
from mcpfuzz.strategies.messages import FrameBuilder

from mcpfuzz.engine.events import CaseDone, Event
from mcpfuzz.jsonrpc.param_headers import ParamHeader, mirrored, param_headers
from mcpfuzz.jsonrpc.parts.http_rule import HttpRule
from mcpfuzz.jsonrpc.versions import LATEST_LEGACY, MODERN_VERSIONS, Era
from mcpfuzz.transport.http_headers import mcp_headers
from mcpfuzz.transport.http_target import HttpTarget
from tests.engine_runs import run_engine
from tests.http_servers import SDK_SERVERS, free_port, launch, sdk_python, start_http_server

pytestmark = pytest.mark.slow

MODERN = MODERN_VERSIONS[0]
REGION = ParamHeader(("region",), "Region")
SCHEMA = {
    "type": "object",
    "properties": {
        "region": {"type": "string", "x-mcp-header": "Region"},
        "target": {"type": "object", "properties": {"zone": {"type": "integer", "x-mcp-header": "Zone"}}},
        "ratio": {"type": "number", "x-mcp-header": "Ratio"},           # numbers are not allowed
        "again": {"type": "string", "x-mcp-header": "region"},          # a duplicate, case-insensitively
        "spaced": {"type": "string", "x-mcp-header": "Two Words"},      # not an RFC 9110 token
        "list": {"type": "array", "items": {"type": "string", "x-mcp-header": "Item"}},  # not through `items`
        "either": {"anyOf": [{"type": "string", "x-mcp-header": "Either"}]},
        "flag": {"type": "boolean", "x-mcp-header": "Flag"},
    },
}


def test_only_annotations_reached_through_properties_on_primitives_count() -> None:
    assert param_headers(SCHEMA) == (REGION, ParamHeader(("flag",), "Flag"), ParamHeader(("target", "zone"), "Zone"))
    assert param_headers({"type": "object"}) == () and param_headers(None) == ()


def test_values_become_header_texts_and_absent_or_null_ones_no_header() -> None:
    headers = param_headers(SCHEMA)
    assert mirrored({"region": "us-west1", "flag": False, "target": {"zone": -7}}, headers) == {
        "Mcp-Param-Region": "us-west1", "Mcp-Param-Flag": "false", "Mcp-Param-Zone": "-7"}
    assert mirrored({"region": None, "target": {}}, headers) == {}


def test_a_modern_tools_call_carries_its_mirrored_arguments_encoded() -> None:
    meta = {"io.modelcontextprotocol/protocolVersion": MODERN}
    call = {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
            "params": {"name": "route", "arguments": {"region": "Hello, 世界"}, "_meta": meta}}
    headers = mcp_headers(call, None, {"route": (REGION,)})
    assert headers["Mcp-Param-Region"] == "=?base64?SGVsbG8sIOS4lueVjA==?="
    assert "Mcp-Param-Region" not in mcp_headers(call, None, {})
    legacy = {**call, "params": {"name": "route", "arguments": {"region": "x"}}}
    assert "Mcp-Param-Region" not in mcp_headers(legacy, LATEST_LEGACY, {"route": (REGION,)})


def test_the_family_sends_the_header_missing_mismatched_and_broken_in_the_modern_era_only() -> None:
    call = MirroredCall("route", {"region": "eu", "query": "q"}, REGION)
    cases = [c for c in http_cases(FrameBuilder(Era.MODERN, MODERN), tool="route", has_session=False, mirrored=call)
             if c.id.startswith("param-header-")]
    assert [(c.id, c.http_headers) for c in cases] == [
        ("param-header-missing", (("Mcp-Param-Region", None),)),
        ("param-header-mismatch", (("Mcp-Param-Region", "mcpfuzz-other"),)),
        ("param-header-invalid", (("Mcp-Param-Region", INVALID_SENTINEL),))]
    assert all((rule := c.expect.part(HttpRule)) is not None and rule.statuses == (400,) and rule.codes == (-32020,)
               for c in cases)
    legacy = http_cases(FrameBuilder(Era.LEGACY, LATEST_LEGACY), tool="route", has_session=True, mirrored=call)
    assert not [c for c in legacy if c.id.startswith("param-header-")]


def _run(url: str, *, version: str | None = MODERN, phases: tuple[str, ...] = ("probe", "catalogue"),
         events: list[Event] | None = None) -> list:
    finished = run_engine([], http=HttpTarget(url), protocol_version=version, phases=phases, events=events)
    assert not finished.error, finished.error
    return list(finished.findings)


def test_a_server_that_checks_mirrored_headers_gives_zero_findings_and_mcpfuzz_calls_send_them() -> None:
    events: list[Event] = []
    with start_http_server("--mirror") as url:
        findings = _run(url, phases=("probe", "catalogue", "coverage"), events=events)
    assert [(f.oracle, f.target, f.message) for f in findings] == []
    answered = [e.exchange for e in events if isinstance(e, CaseDone) and e.exchange.case.target == "tool/route"
                and e.exchange.http is not None and e.exchange.http.status == 200]
    assert answered, "no call of route got through: mcpfuzz did not send its Mcp-Param headers"


def test_a_server_that_ignores_mirrored_headers_is_found_on_each_case() -> None:
    with start_http_server("--mirror", "--bug", "ignore-param-headers") as url:
        findings = _run(url)
    assert {(f.oracle, f.target) for f in findings} == {
        ("http-status", "http/param-header-missing"), ("http-status", "http/param-header-mismatch"),
        ("http-status", "http/param-header-invalid")}
    assert all("-32020" in f.message for f in findings)


def test_a_foreign_host_may_be_refused_or_served() -> None:
    for version in (MODERN, LATEST_LEGACY):
        events: list[Event] = []
        with start_http_server("--host-check") as url:
            findings = _run(url, version=version, events=events)
        assert [(f.oracle, f.target, f.message) for f in findings] == []
        statuses = [e.exchange.http.status for e in events if isinstance(e, CaseDone)
                    and e.exchange.case.id == "host-foreign" and e.exchange.http is not None]
        assert statuses == [421], statuses


def test_the_python_sdk_checks_mirrored_headers_and_refuses_a_foreign_host() -> None:
    """mcp 2.x validates `Mcp-Param-*` against the tool's schema (400, -32020) and answers a foreign Host 421."""
    python = sdk_python("sdk2")
    port = free_port()
    command = [python, str(SDK_SERVERS / "sdk2_mirror_http_server.py"), str(port)]
    events: list[Event] = []
    with launch(command, port=port, ready_timeout=30):
        findings = _run(f"http://127.0.0.1:{port}/mcp", events=events)
    statuses = {e.exchange.case.id: e.exchange.http.status for e in events if isinstance(e, CaseDone)
                and e.exchange.http is not None and e.exchange.case.family == "http"}
    assert {case: statuses.get(case) for case in ("param-header-missing", "param-header-mismatch",
                                                  "param-header-invalid", "host-foreign")} == {
        "param-header-missing": 400, "param-header-mismatch": 400, "param-header-invalid": 400, "host-foreign": 421}
    assert not [f for f in findings if f.target.startswith(("http/param-header", "http/host"))]
