"""Resources, resource templates, prompts and completions: discovered, called, and judged by the right oracle.

`tests/servers/surface_server.py` serves every surface in both eras; each `--bug` is caught by exactly
its oracle, and the clean server gives no finding. The SDK surface servers (mcp 2.3.0, 1.30.0) get
only the findings pinned here, each checked by hand against the spec.
"""

from __future__ import annotations

import sys
from pathlib import Path

import anyio
import pytest
from mcpfuzz.strategies.surfaces.completions import completion_declarations
from mcpfuzz.strategies.surfaces.resources import missing_uris
from mcpfuzz.strategies.surfaces.templates import EDGE_VALUES, edge_calls, expand, template_variables

from mcpfuzz.engine.config import RunConfig
from mcpfuzz.engine.events import CaseDone, Event, RunFinished, TargetsPlanned
from mcpfuzz.engine.runner import run
from mcpfuzz.engine.surface.targets import Selection, plan_targets, target_types
from mcpfuzz.jsonrpc.exchange import Exchange
from mcpfuzz.jsonrpc.parts.concurrency import ConcurrencyCheck
from mcpfuzz.jsonrpc.target_kind import TargetKind
from mcpfuzz.oracles.base import all_oracles
from mcpfuzz.transport.http_target import HttpTarget
from tests.conftest import EXAMPLE_COMMAND
from tests.engine_runs import run_engine
from tests.http_servers import start_http_server, start_sdk_server
from tests.test_sdk_servers import _mcp1_python

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parent.parent
SURFACE_SERVER = ROOT / "tests" / "servers" / "surface_server.py"
SDK_SERVERS = ROOT / "tests" / "sdk_servers"
COVERAGE = ("probe", "coverage")
ALL_CALLS = ("probe", "catalogue", "lifecycle", "coverage", "fuzz", "stateful")
SURFACE_KINDS = ("resource/", "template/", "prompt/", "completion/")


def run_collecting(command: list[str], *, phases: tuple[str, ...] = COVERAGE, budget: float = 30.0,
                   protocol_version: str | None = None, exclude: tuple[str, ...] = (),
                   max_examples: int | None = None) -> tuple[RunFinished, list[Event]]:
    """One run with every oracle, its events kept."""
    events: list[Event] = []
    config = RunConfig(command=command, seed=3, timeout=5.0, budget=budget, oracles=tuple(all_oracles()),
                       protocol_version=protocol_version, phases=phases, exclude_targets=exclude,
                       max_examples=max_examples)
    finished = anyio.run(run, config, events.append)
    return finished, events


def surface(*bugs: str) -> list[str]:
    """The surface test server's command with some bugs switched on."""
    return [sys.executable, str(SURFACE_SERVER), *(arg for bug in bugs for arg in ("--bug", bug))]


def called_targets(events: list[Event]) -> set[str]:
    """The targets (`KIND/NAME`) the run sent a case to."""
    return {event.exchange.case.target for event in events if isinstance(event, CaseDone)}


@pytest.mark.parametrize("version", [None, "2025-06-18"], ids=["2026-07-28", "2025-06-18"])
def test_clean_surface_server_gives_no_finding_in_either_era(version: str | None) -> None:
    """Every surface discovered and called (every page listed), in every phase: zero findings."""
    # Ended by its examples, not by a budget: a slow machine calls every target too.
    finished, events = run_collecting(surface(), phases=ALL_CALLS, budget=300, protocol_version=version,
                                      max_examples=1)
    assert not finished.error
    assert finished.era == ("modern" if version is None else "legacy")
    assert [f"{f.oracle} {f.target}: {f.message}" for f in finished.findings] == []
    planned = next(event for event in events if isinstance(event, TargetsPlanned))
    # Every MCP kind (`method` is a plain JSON-RPC server's, declared by an OpenRPC document, never by MCP).
    assert {label.split("/")[0] for label in planned.fuzzed} == {kind.value for kind in TargetKind} - {"method"}
    called = called_targets(events)
    assert {"resource/mem://notes/welcome", "resource/mem://notes/readme",  # readme is on page 2
            "resource/mem://notes/welcome-mcpfuzz-missing", "template/mem://by-title/{title}",
            "prompt/summarize", "prompt/greet", "prompt/mcpfuzz-no-such-prompt",
            "completion/prompt:summarize:style", "completion/template:mem://by-title/{title}:title"} <= called


BUG_ORACLES = {
    "list-refused": ("declared-served", "probe/prompts-list"),
    "cursor-loop": ("declared-served", "probe/resources-list-page-2"),
    "unreadable-listed": ("declared-served", "resource/mem://notes/readme"),
    "not-found-code": ("resource-not-found", "resource/mem://notes/welcome-mcpfuzz-missing"),
    "template-crash": ("no-crash", "template/mem://by-title/{title}"),
    "prompt-missing-arg": ("invalid-params", "prompt/summarize"),
    "completion-overflow": ("response-schema", "completion/"),
    "log-level-code": ("invalid-params", "logging/unknown-level"),
    "subscribe-refused": ("method-not-found", "subscription/subscribe"),
    "listen-cancel-crash": ("no-crash", "subscription/listen-cancelled"),
    "listen-refused": ("method-not-found", "subscription/listen-cancelled"),
}


@pytest.mark.parametrize("bug", sorted(BUG_ORACLES))
def test_each_surface_bug_is_caught_by_exactly_its_oracle(bug: str) -> None:
    """One switch, one finding, of the oracle that owns it, on the target that has the bug."""
    oracle, target = BUG_ORACLES[bug]
    legacy = target.startswith(("logging/", "subscription/subscribe"))
    phases, version = (("probe", "catalogue"), "2025-11-25") if legacy else (COVERAGE, None)
    if target.startswith("subscription/listen"):
        phases = ("probe", "catalogue")
    finished, _ = run_collecting(surface(bug), phases=phases, protocol_version=version)
    assert not finished.error
    found = [(f.oracle, f.target) for f in finished.findings]
    assert len(found) == 1 and found[0][0] == oracle and found[0][1].startswith(target), found


@pytest.mark.parametrize("version", ["2025-11-25", "2026-07-28"])
def test_logging_and_subscriptions_follow_the_era(version: str) -> None:
    """Every log level and an unknown one in the legacy era only (2026-07-28 removed logging/setLevel);
    subscribe and unsubscribe in both, of a listed URI and of one no listing names (in 2026-07-28 -32601 is right),
    and a listen in 2026-07-28: acknowledged, never answered, ended with a cancel, and the server answers on."""
    finished, events = run_collecting(surface(), phases=("probe", "catalogue"), protocol_version=version)
    logging = {t for t in called_targets(events) if t.startswith("logging/")}
    subscription = {t for t in called_targets(events) if t.startswith("subscription/")}
    assert len(logging) == (9 if version == "2025-11-25" else 0) and not finished.findings
    assert subscription == {"subscription/subscribe", "subscription/unsubscribe", "subscription/subscribe-unknown",
                            "subscription/unsubscribe-unknown"} | (
        set() if version == "2025-11-25" else {"subscription/listen-cancelled"})
    if version == "2026-07-28":
        listen = next(e.exchange for e in events if isinstance(e, CaseDone)
                      and e.exchange.case.target == "subscription/listen-cancelled")
        assert [a.incoming.message.get("method") for a in listen.arrivals][0] == \
            "notifications/subscriptions/acknowledged"
        assert not [a for a in listen.responses() if a.incoming.id == listen.case.expect.id]
        assert listen.barrier_answered


def test_resource_not_found_code_follows_the_era() -> None:
    """-32002 is right up to 2025-11-25 and low from 2026-07-28 (SEP-2164 moved it to -32602)."""
    finished, events = run_collecting(surface(), protocol_version="2025-11-25")
    missing = [e.exchange for e in events if isinstance(e, CaseDone)
               and e.exchange.case.target == "resource/mem://notes/welcome-mcpfuzz-missing"]
    assert missing and b"-32002" in missing[0].arrivals[0].incoming.raw and not finished.findings


def test_excluded_targets_are_not_called() -> None:
    """--exclude-target takes any kind's label."""
    exclude = ("template/mem://by-title/{title}", "prompt/summarize", "resource/mem://notes/readme")
    finished, events = run_collecting(surface("template-crash"), exclude=exclude, phases=("probe", "catalogue",
                                                                                          "coverage"))
    planned = next(event for event in events if isinstance(event, TargetsPlanned))
    assert {label for label, _ in planned.skipped} == set(exclude)
    assert not called_targets(events) & set(exclude)
    at_once = next(e.exchange for e in events if isinstance(e, CaseDone)
                   and e.exchange.case.target == "concurrency/read-only-at-once")
    assert b"mem://notes/welcome" in at_once.frames[-1] and b"mem://notes/readme" not in at_once.frames[-1]
    assert not finished.findings  # the crash is in the excluded template


def test_example_server_template_and_prompt_bugs_are_found() -> None:
    """The README's first run: the template's crash on an empty id and the prompt's system message."""
    finished, _ = run_collecting(EXAMPLE_COMMAND)
    found = {(f.oracle, f.target) for f in finished.findings}
    assert ("no-crash", "template/notes://note/{id}") in found
    assert ("response-schema", "prompt/summarize_note") in found


@pytest.mark.parametrize("mode", ["late-progress", "cancel-ignored"])
def test_cancelled_request_answered_after_the_cancel_was_read_is_found(mode: str) -> None:
    """A server that answers later on purpose but drops a cancelled answer gives nothing; one that answers it
    anyway, after the probe sent behind the cancel, is found (low)."""
    finished, events = run_collecting(surface(mode), phases=("probe", "catalogue"))
    assert "cancel/tools-list-cancelled" in called_targets(events)
    found = [(f.oracle, f.target, str(f.severity)) for f in finished.findings]
    assert found == ([("cancel-respected", "cancel/tools-list-cancelled", "low")] if mode == "cancel-ignored" else [])


def test_answers_swapped_between_requests_in_flight_are_found() -> None:
    """Reads sent at once: the second gets the first's contents (a shared buffer), and concurrency says so."""
    finished, _ = run_collecting(surface("swap-reads"), phases=("probe", "catalogue"))
    assert [(f.oracle, f.target) for f in finished.findings] == [("concurrency", "concurrency/read-only-at-once")]
    assert "mem://notes/readme" in finished.findings[0].message


@pytest.mark.parametrize("version", [None, "2025-11-25"], ids=["2026-07-28", "2025-11-25"])
@pytest.mark.parametrize("mode", ["reverse-at-once", "swap-at-once"])
def test_read_only_tool_calls_at_once_are_compared_with_their_answers_alone(mode: str, version: str | None) -> None:
    """The tools annotated readOnlyHint: true are called in the burst, and each answer is compared with what the
    same call got alone: answers in reverse order are right; results rotated between calls are found, though
    each still has a tool result's shape."""
    finished, events = run_collecting(surface(mode), phases=("probe", "catalogue"), protocol_version=version)
    at_once = next(e.exchange for e in events if isinstance(e, CaseDone)
                   and e.exchange.case.target == "concurrency/read-only-at-once")
    check = at_once.case.expect.part(ConcurrencyCheck)
    assert check is not None
    assert {subject for _, method, subject in check.requests if method == "tools/call"} == {"count_notes",
                                                                                            "find_notes"}
    assert len(check.alone) == len(check.requests) and all(a.before == a.after for a in check.alone)
    found = [(f.oracle, f.target) for f in finished.findings]
    if mode == "reverse-at-once":
        assert found == []
    else:
        assert found == [("concurrency", "concurrency/read-only-at-once")]
        assert "as it answers it alone" in finished.findings[0].message
        assert finished.findings[0].reproducible  # verified on a fresh server, with fresh answers alone


def test_only_tools_annotated_read_only_are_called_at_once() -> None:
    """--include-target lets a tool be called, never called at once: only readOnlyHint: true tools are."""
    _, events = run_collecting(surface(), phases=("probe", "catalogue"), exclude=("tool/find_notes",))
    at_once = next(e.exchange for e in events if isinstance(e, CaseDone)
                   and e.exchange.case.target == "concurrency/read-only-at-once")
    assert at_once.case.expect.part(ConcurrencyCheck) is not None
    tools = {subject for _, method,
             subject in at_once.case.expect.part(ConcurrencyCheck).requests if method == "tools/call"}
    assert tools == {"count_notes"}


# -- over streamable HTTP: one POST per request ------------------------------------------------------

def run_over_http(*args: str, version: str | None = None) -> tuple[RunFinished, list[Event]]:
    """The catalogue against tests/servers/http_server.py serving the surface server, with `args`."""
    events: list[Event] = []
    with start_http_server("--surface", *args) as url:
        finished = run_engine([], http=HttpTarget(url), protocol_version=version, phases=("probe", "catalogue"),
                              timeout=10, budget=90, events=events)
    return finished, events


def several_posts(events: list[Event]) -> dict[str, Exchange]:
    """The cancel and concurrency cases, by target."""
    return {e.exchange.case.target: e.exchange for e in events if isinstance(e, CaseDone)
            and e.exchange.case.family in ("cancel", "concurrency")}


@pytest.mark.parametrize("version", [None, "2025-11-25"], ids=["2026-07-28", "2025-11-25"])
def test_clean_server_over_http_gives_no_finding_with_requests_posted_together(version: str | None) -> None:
    """The cancel case is four POSTs (the cancel answered 202), the concurrency case one POST per request."""
    finished, events = run_over_http(version=version)
    assert not finished.error and [(f.oracle, f.target) for f in finished.findings] == []
    cases = several_posts(events)
    cancel, at_once = cases["cancel/tools-list-cancelled"], cases["concurrency/read-only-at-once"]
    assert [reply.status for reply in cancel.posts] == [200, 200, 202, 200]
    assert at_once.case.expect.part(ConcurrencyCheck) is not None
    assert len(at_once.posts) == len(at_once.case.expect.part(ConcurrencyCheck).requests) == 8
    assert all(reply.messages == 1 for reply in at_once.posts)


@pytest.mark.parametrize("mode", ["late-in-flight", "swap-in-flight"])
def test_tool_calls_in_flight_over_http_are_compared_with_their_answers_alone(mode: str) -> None:
    """Two read-only tool calls that each wait for the other are right; trading results is found."""
    finished, _ = run_over_http("--bug", mode)
    found = [(f.oracle, f.target) for f in finished.findings]
    assert found == ([] if mode == "late-in-flight" else [("concurrency", "concurrency/read-only-at-once")])


@pytest.mark.parametrize("mode", ["late-cancel", "cancel-ignored"])
def test_cancelled_request_over_http_answered_after_the_probe_is_found(mode: str) -> None:
    """A request answered late on its SSE stream: dropped once cancelled (right), or answered anyway after
    the probe POSTed behind the cancel was answered (low)."""
    finished, events = run_over_http("--bug", mode)
    cancel = several_posts(events)["cancel/tools-list-cancelled"]
    assert [reply.status for reply in cancel.posts] == [200, 200, 202, 200]
    found = [(f.oracle, f.target, str(f.severity)) for f in finished.findings]
    assert found == ([("cancel-respected", "cancel/tools-list-cancelled", "low")] if mode == "cancel-ignored"
                     else [])


# -- the real SDKs ----------------------------------------------------------------------------------

# The SDK surface servers' read-only tools are for the concurrency case; the budget here is the surfaces'.
SDK_TOOLS_NAMES = ("count_notes", "find_notes")
SDK_TOOLS = tuple(f"tool/{name}" for name in SDK_TOOLS_NAMES)


def _surface_findings(finished: RunFinished) -> set[tuple[str, str, str]]:
    """Findings on the surfaces, except the SDKs' documented habit (a lone surrogate is dropped silently, low).
    slow-input is judged too: an SDK's error path (its logged traceback) starved of a CPU on a loaded machine answers
    seconds late, but its server's own time is what slow-input judges (mcpfuzz/engine/session/starvation.py)."""
    return {(f.oracle, f.target, str(f.severity)) for f in finished.findings if f.target.startswith(SURFACE_KINDS)
            and not (f.oracle == "parse-error" and str(f.severity) == "low")}


@pytest.mark.sdk
def test_mcp_2x_surfaces_give_true_findings_only() -> None:
    """mcp 2.3.0 answers an unknown prompt with -32603; the spec says SHOULD -32602 (low)."""
    pytest.importorskip("mcp.server.mcpserver")
    # One example per search and a budget no machine spends: the run ends once every search has had its example
    # (about 10 s), however slow the machine, so every target gets its coverage calls and a fuzz example.
    finished, events = run_collecting([sys.executable, str(SDK_SERVERS / "sdk2_surface_server.py")],
                                      phases=("probe", "coverage", "fuzz"), budget=300, exclude=SDK_TOOLS,
                                      max_examples=1)
    assert not finished.error and finished.era == "modern" and not finished.stopped
    # Every declared target of every kind is prepared (only the excluded tools are skipped) and called.
    planned = next(event for event in events if isinstance(event, TargetsPlanned))
    assert {label for label, _ in planned.skipped} == set(SDK_TOOLS)
    assert {label.split("/")[0] for label in planned.fuzzed} == {"resource", "template", "prompt", "completion"}
    assert set(planned.fuzzed) <= called_targets(events)
    assert _surface_findings(finished) == {("invalid-params", "prompt/mcpfuzz-no-such-prompt", "low")}


@pytest.mark.sdk
def test_mcp_1x_surfaces_give_true_findings_only() -> None:
    """mcp 1.30.0 answers an unknown resource, an unknown prompt and a missing prompt argument with error
    code 0 (the spec says SHOULD -32002 / -32602: low)."""
    python = _mcp1_python()
    if python is None:
        pytest.skip("no mcp 1.x environment: .ci/run creates .venv-mcp1 (or set MCPFUZZ_MCP1_PYTHON)")
    # As on mcp 2.x: one example per search, ended by the examples and not by a budget a slow machine would spend.
    finished, _ = run_collecting([python, str(SDK_SERVERS / "sdk1_surface_server.py")],
                                 phases=("probe", "coverage", "fuzz"), budget=300, exclude=SDK_TOOLS,
                                 max_examples=1)
    assert not finished.error and finished.era == "legacy" and not finished.stopped
    assert _surface_findings(finished) == {
        ("resource-not-found", "resource/notes://static/welcome-mcpfuzz-missing", "low"),
        ("invalid-params", "prompt/mcpfuzz-no-such-prompt", "low"),
    }


TOGETHER = ("cancel/", "concurrency/", "subscription/")


@pytest.mark.sdk
@pytest.mark.parametrize("sdk", ["sdk2", "sdk1"])
def test_sdk_surface_servers_get_no_finding_from_requests_sent_together(sdk: str) -> None:
    """Both SDKs on stdio: the read-only tools called at once with the lists and reads, each answer equal to its
    answer alone; the cancelled list request answered before the cancel; mcp 2.x keeps a listen open (silent)
    and answers on after its cancel. None of it is a finding."""
    python = sys.executable if sdk == "sdk2" else _mcp1_python()
    if python is None:
        pytest.skip("no mcp 1.x environment: .ci/run creates .venv-mcp1 (or set MCPFUZZ_MCP1_PYTHON)")
    if sdk == "sdk2":
        pytest.importorskip("mcp.server.mcpserver")
    finished, events = run_collecting([python, str(SDK_SERVERS / f"{sdk}_surface_server.py")],
                                      phases=("probe", "catalogue"))
    assert [(f.oracle, f.target) for f in finished.findings if f.target.startswith(TOGETHER)] == []
    at_once = next(e.exchange for e in events if isinstance(e, CaseDone)
                   and e.exchange.case.target == "concurrency/read-only-at-once")
    check = at_once.case.expect.part(ConcurrencyCheck)
    assert check is not None and {s for _, m, s in check.requests if m == "tools/call"} == set(SDK_TOOLS_NAMES)
    assert all(a.before is not None and a.before == a.after for a in check.alone)
    assert ("subscription/listen-cancelled" in called_targets(events)) == (sdk == "sdk2")


@pytest.mark.sdk
@pytest.mark.parametrize("sdk", ["sdk2", "sdk1"])
def test_sdk_http_servers_get_no_finding_from_requests_posted_together(sdk: str) -> None:
    """Both SDKs over streamable HTTP: the cancel case's four POSTs and the concurrency case's POSTs in flight
    at once give no finding."""
    events: list[Event] = []
    with start_sdk_server(sdk) as url:
        finished = run_engine([], http=HttpTarget(url), phases=("probe", "catalogue"), timeout=5, budget=90,
                              events=events)
    assert [(f.oracle, f.target) for f in finished.findings if f.target.startswith(TOGETHER)] == []
    cases = several_posts(events)
    assert len(cases["concurrency/read-only-at-once"].posts) > 1
    assert [reply.status for reply in cases["cancel/tools-list-cancelled"].posts][2] == 202  # the cancel's


# -- generation, without a server -------------------------------------------------------------------

def test_template_values_are_expanded_by_rfc_6570() -> None:
    """Simple expansion percent-encodes reserved characters; `{+var}` keeps them."""
    assert template_variables("file:///{dir}/{+path}{?q}") == ["dir", "path", "q"]
    assert expand("mem://{a}", {"a": "x y/z"}) == "mem://x%20y%2Fz"
    assert expand("mem://{+a}", {"a": "x/y"}) == "mem://x/y"
    calls = edge_calls({"uriTemplate": "mem://{a}/{b}"})
    assert len(calls) == 1 + 2 * len(EDGE_VALUES)
    assert expand("mem://{a}/{b}", calls[1].arguments) == "mem:///mcpfuzz"  # the empty value


def test_missing_uris_avoid_listed_uris_and_template_matches() -> None:
    """A made-up URI is one no listing names and no template could produce."""
    assert missing_uris(["mem://a", "file:///x"], []) == ["mem://a-mcpfuzz-missing", "file:///x-mcpfuzz-missing"]
    assert missing_uris(["mem://a"], ["mem://{name}"]) == []
    assert missing_uris(["mem://a", "mem://b"], ["other://{x}"]) == ["mem://a-mcpfuzz-missing"]


def test_completion_targets_come_from_prompt_arguments_and_template_variables() -> None:
    """One completion target per argument, named after its ref."""
    found = completion_declarations([{"name": "p", "arguments": [{"name": "x"}]}],
                                    [{"uriTemplate": "mem://{v}"}])
    assert [d["name"] for d in found] == ["prompt:p:x", "template:mem://{v}:v"]
    assert found[1]["ref"] == {"type": "ref/resource", "uri": "mem://{v}"}


def test_every_kind_is_one_registration_with_its_own_name_member() -> None:
    """Resources are named by `uri`, templates by `uriTemplate`; read-only kinds are planned as such."""
    types = target_types()
    assert set(types) == set(TargetKind)
    declared = {TargetKind.RESOURCE: [{"uri": "mem://a", "name": "a"}, {"name": "no uri"}],
                TargetKind.TEMPLATE: [{"uriTemplate": "mem://{x}", "name": "t"}],
                TargetKind.PROMPT: [{"name": "p", "arguments": [{"name": "q", "required": True}]}]}
    plan = plan_targets(declared, Selection(), seed=1)
    assert [t.label for t in plan.targets] == ["resource/mem://a", "template/mem://{x}", "prompt/p"]
    assert plan.skipped == [("resource/None", "it has no string uri")]
    assert plan.targets[2].schema.is_valid({"q": "v"}) and not plan.targets[2].schema.is_valid({})


def test_a_sequence_reads_what_a_tool_linked_to_across_surfaces() -> None:
    """archive_note returns a resource_link; a call sequence reads it with resources/read, and the crash that
    read causes is found with the tool call that made the link in its reproduction.

    Counted, not timed: 40 sequences with seed 3 follow links on both servers; the budget only bounds the runs."""
    finished, events = run_collecting(surface("crash-linked"), phases=("probe", "stateful"), budget=240,
                                      max_examples=40)
    crashes = [f for f in finished.findings if f.oracle == "no-crash"]
    assert crashes, [(f.oracle, f.target) for f in finished.findings]
    (crash,) = crashes
    assert crash.target.startswith("linked/mem://archive/") and b'"resources/read"' in crash.frames[-1]
    assert any(b'"archive_note"' in frame for frame in crash.frames[:-1]), crash.frames
    clean, _ = run_collecting(surface(), phases=("probe", "stateful"), budget=240, max_examples=40)
    assert [(f.oracle, f.target) for f in clean.findings] == []
    linked = [e for e in _ if isinstance(e, CaseDone) and e.exchange.case.family == "linked"]
    assert linked, "no sequence followed a link on the clean server"
