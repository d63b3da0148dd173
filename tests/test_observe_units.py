"""Observation's pure parts: which paths are outside, how records parse and find their call, what the oracles say."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

import pytest
from mcpfuzz.strategies.payloads.canaries import CanaryLayout
from mcpfuzz.strategies.payloads.paths import path_payloads
from mcpfuzz.strategies.payloads.urls import url_payloads

from mcpfuzz.engine.observe.places import Places
from mcpfuzz.engine.observe.records import RecordFile, parse
from mcpfuzz.engine.observe.watch import ObservationWatch
from mcpfuzz.engine.observe.would_find import would_find
from mcpfuzz.jsonrpc.case_json import case_from_json, case_to_json
from mcpfuzz.jsonrpc.effects import Effect, Observation, Op
from mcpfuzz.jsonrpc.exchange import ID_CURRENT, Arrival, Exchange
from mcpfuzz.jsonrpc.expectation import Expectation
from mcpfuzz.jsonrpc.frame import Case
from mcpfuzz.jsonrpc.incoming import classify
from mcpfuzz.jsonrpc.oracle_ids import OracleId
from mcpfuzz.jsonrpc.parts.observed import ObservedCall, needs_observation
from mcpfuzz.jsonrpc.versions import Era
from mcpfuzz.oracles.canaries import command_injection, sandbox_escape
from mcpfuzz.oracles.observed import network_egress
from mcpfuzz.oracles.semantic import read_only_truthful

pytestmark = pytest.mark.unit

TEMP = str(Path(tempfile.gettempdir()).resolve())
ROOT = f"{TEMP}/mcpfuzz-workspace-unit"
WORKSPACE = f"{ROOT}/workspace"


def places() -> Places:
    return Places.create([WORKSPACE, "/srv/allowed"], planted=[ROOT], own=[f"{TEMP}/mcpfuzz-canary-unit"],
                         code=["/opt/server"])


@pytest.mark.parametrize(("op", "path", "outside"), [
    (Op.READ, f"{WORKSPACE}/notes.txt", False),
    (Op.WRITE, f"{WORKSPACE}/a/b.txt", False),
    (Op.READ, f"{ROOT}/workspace-private/secret.txt", True),  # the prefix sibling
    (Op.STAT, f"{ROOT}/linked/linked.txt", True),
    (Op.STAT, ROOT, False),  # a folder above the workspace, on the way to it
    (Op.LIST, ROOT, True),  # listing it shows the sibling's name
    (Op.DELETE, f"{ROOT}/outside.txt", True),
    (Op.READ, "/srv/allowed/x", False),  # --allow-path
    (Op.READ, "/srv/allowed-not/x", True),
    (Op.READ, "/usr/lib/locale/C.utf8/LC_CTYPE", False),
    (Op.READ, "/home/u/.venv/lib/python3.12/site-packages/yaml/__init__.py", False),
    (Op.WRITE, "/usr/lib/x", True),
    (Op.READ, "/opt/server/data.json", False),  # the server's own code folder, read
    (Op.WRITE, "/home/u/elsewhere.txt", True),
    (Op.WRITE, f"{TEMP}/tmpabc123", False),  # the runtime's temporary files
    (Op.WRITE, f"{TEMP}/mcpfuzz-canary-unit/hit-0123", False),  # a shell's marker is command-injection's
    (Op.WRITE, "/dev/null", False),
])
def test_a_path_is_outside_only_past_every_allowed_place(op: Op, path: str, outside: bool) -> None:
    assert places().outside(op, path) is outside


def test_start_up_paths_are_learnt_but_never_the_planted_ones() -> None:
    found = places()
    found.learn_startup("/home/u/.config/server/settings.json")
    found.learn_startup(f"{ROOT}/outside.txt")
    assert not found.outside(Op.READ, "/home/u/.config/server/settings.json")
    assert not found.outside(Op.READ, "/home/u/.config/server/other.json")  # its folder
    assert found.outside(Op.READ, f"{ROOT}/outside.txt")
    found.learn_startup("/home/u/.profile")  # home itself never becomes an allowed folder
    assert found.outside(Op.READ, "/home/u/secrets.txt")


def test_records_parse_and_torn_lines_are_skipped(tmp_path: Path) -> None:
    log = tmp_path / "effects.jsonl"
    log.write_bytes(b'{"op": "hello", "argv": ["s.py"], "ppid": 7, "t": 1000000000, "pid": 8, "prog": "s.py"}\n'
                    b'garbage\n{"op": "read", "path": "/x", "t": 2000000000, "pid": 8, "prog": "s.py", "req": 4}\n'
                    b'{"op": "write", "pa')
    records = RecordFile(str(log))
    first = records.read()
    assert [(r.pid, r.effect.op if r.effect else None, r.request, r.parent) for r in first] == [
        (8, None, None, 7), (8, Op.READ, "4", None)]
    with log.open("ab") as handle:
        handle.write(b'th": "/y", "t": 3000000000, "pid": 8, "prog": "s.py"}\n')
    again = records.read()
    assert [(r.effect.op, r.effect.path, r.at) for r in again if r.effect] == [(Op.WRITE, "/y", 3.0)]
    assert parse(b'{"op": "teleport", "t": 1, "pid": 1}') is None


def _exchange(arguments: dict, *, target: str = "tool/t", request_id: int = 5) -> Exchange:
    data = json.dumps({"jsonrpc": "2.0", "id": request_id, "method": "tools/call",
                       "params": {"name": target.split("/")[1], "arguments": arguments}}).encode()
    family, name = target.split("/")
    expect = Expectation(OracleId.INVALID_PARAMS, id=request_id)
    case = Case(id=name, family=family, title="a call", data=data, expect=expect)
    return Exchange(case, Era.LEGACY, "2025-11-25")


def _record(log: Path, record: dict) -> None:
    with log.open("a") as handle:
        handle.write(json.dumps(record) + "\n")


def test_records_go_to_the_call_in_flight_or_to_start_up(tmp_path: Path) -> None:
    log = tmp_path / "effects.jsonl"
    log.touch()
    watch = ObservationWatch(RecordFile(str(log)), places(), hints_of=lambda label: {"readOnlyHint": True})
    exchange = _exchange({"path": "../outside.txt"})
    before = int((exchange.started - 1) * 1e9)
    during = int((exchange.started + 0.001) * 1e9)
    _record(log, {"op": "hello", "t": before, "pid": 10, "ppid": 1})
    _record(log, {"op": "read", "path": "/home/u/.config/s/conf.toml", "t": before, "pid": 10, "prog": "s"})
    _record(log, {"op": "read", "path": "/home/u/.config/s/conf.toml", "t": during, "pid": 10, "prog": "s"})
    _record(log, {"op": "write", "path": f"{ROOT}/outside.txt", "t": during, "pid": 10, "prog": "s"})
    _record(log, {"op": "read", "path": f"{ROOT}/x", "t": during, "pid": 10, "prog": "s", "req": 99})
    watch.look(exchange)
    observation = exchange.observation
    assert observation is not None and observation.read_only and observation.inputs == ("../outside.txt",)
    assert [(e.op, e.outside) for e in observation.effects] == [(Op.READ, False), (Op.WRITE, True)]
    assert [record.request for record in watch.pending] == ["99"]  # another request's, kept for its own case
    later = _exchange({}, request_id=99)
    watch.look(later)
    assert later.observation is not None and [e.path for e in later.observation.effects] == [f"{ROOT}/x"]


def _answered_after(exchange: Exchange, seconds: float) -> None:
    """The exchange's answer, arrived `seconds` after it started (as a window's collector records it)."""
    rid = json.loads(exchange.case.data)["id"]
    answer = classify(json.dumps({"jsonrpc": "2.0", "id": rid, "result": {}}).encode())
    exchange.arrivals.append(Arrival(answer, seconds, ID_CURRENT))


def test_an_untagged_record_in_a_window_goes_to_the_calls_in_flight_then(tmp_path: Path) -> None:
    log = tmp_path / "effects.jsonl"
    log.touch()
    watch = ObservationWatch(RecordFile(str(log)), places(), hints_of=lambda label: {"readOnlyHint": True})
    window = [_exchange({"key": f"k{n}"}, request_id=n) for n in (1, 2, 3)]
    start = window[0].started
    for n, exchange in enumerate(window, 1):
        exchange.started = start  # sent in one write
        _answered_after(exchange, 0.010 * n)
    _record(log, {"op": "hello", "t": int((start - 1) * 1e9), "pid": 10, "ppid": 1})
    # While the second and third were in flight (the first answered): which one wrote is not known.
    _record(log, {"op": "write", "path": f"{WORKSPACE}/a", "t": int((start + 0.015) * 1e9), "pid": 10, "prog": "s"})
    # Once only the third was in flight: its own.
    _record(log, {"op": "write", "path": f"{WORKSPACE}/b", "t": int((start + 0.025) * 1e9), "pid": 10, "prog": "s"})
    watch.look_window(window)
    first, second, third = (exchange.observation for exchange in window)
    assert first is not None and second is not None and third is not None
    assert first.effects == ()
    assert [(e.path.rsplit("/", 1)[1], e.ambiguous) for e in second.effects] == [("a", True)]
    assert [(e.path.rsplit("/", 1)[1], e.ambiguous) for e in third.effects] == [("a", True), ("b", False)]
    # No finding is made of an ambiguous write; it would be one, were it known to be the call's.
    assert list(read_only_truthful(window[1])) == []
    assert would_find(window[1], (OracleId.READ_ONLY_TRUTHFUL.value,))
    assert not would_find(window[1], (OracleId.SANDBOX_ESCAPE.value,)) and not would_find(window[0], ("x",))
    [failure] = list(read_only_truthful(window[2]))
    assert f"write('{WORKSPACE}/b')" in failure.message


def test_a_saved_case_is_judged_on_what_its_tool_declared_when_called(tmp_path: Path) -> None:
    """A replay lists no tools: the case's part says what the tool declared, and the --allow-path folders."""
    log = tmp_path / "effects.jsonl"
    log.touch()
    run = ObservationWatch(RecordFile(str(log)), places(), hints_of=lambda label: {"readOnlyHint": True},
                           allowed=("/srv/also",))
    _record(log, {"op": "hello", "t": 0, "pid": 10, "ppid": 1})
    found = _exchange({})
    run.look(found)
    part = found.case.expect.part(ObservedCall)
    assert part == ObservedCall(read_only=True, open_world=False, allowed=("/srv/also",))
    saved = case_from_json(case_to_json(found.case), [found.case.data])
    assert saved.expect.part(ObservedCall) == part and needs_observation(saved.expect, "read-only-truthful")
    assert not needs_observation(saved.expect, "no-crash")
    replay = ObservationWatch(RecordFile(str(log)), Places.create([WORKSPACE], planted=[], own=[], code=[]))
    again = Exchange(saved, Era.LEGACY, "2025-11-25")
    _record(log, {"op": "hello", "t": 0, "pid": 11, "ppid": 1})
    _record(log, {"op": "write", "path": "/srv/also/x", "t": int((again.started + 1) * 1e9), "pid": 11, "prog": "s"})
    replay.look(again)
    assert again.observation is not None and again.observation.read_only
    assert [e.outside for e in again.observation.effects] == [False]  # the saved --allow-path folder
    assert [f.key for f in read_only_truthful(again)] == ["observed-write"]


def _observed(*effects: Effect, read_only: bool = False, open_world: bool = False, inputs: tuple = ()) -> Exchange:
    exchange = _exchange({})
    exchange.observation = Observation(effects, read_only=read_only, open_world=open_world, inputs=inputs,
                                       workspace=WORKSPACE)
    return exchange


def test_sandbox_escape_shows_the_worst_access_outside_and_nothing_inside() -> None:
    read = Effect(Op.STAT, path=f"{ROOT}/outside.txt", pid=3, program="s.py", outside=True)
    change = Effect(Op.DELETE, path=f"{ROOT}/outside.txt", pid=3, program="s.py", outside=True)
    [failure] = list(sandbox_escape(_observed(read, change)))
    assert failure.key == "observed-change" and f"delete('{ROOT}/outside.txt') pid 3 (s.py)" in failure.message
    assert list(sandbox_escape(_observed(Effect(Op.READ, path=f"{WORKSPACE}/a", outside=False)))) == []


def test_command_injection_needs_the_input_in_the_program_or_with_shell_syntax_in_a_shell() -> None:
    shell = Effect(Op.EXEC, argv=("/bin/sh", "-c", "wc -l x; touch /tmp/m"), pid=3, program="s.py")
    assert [f.key for f in command_injection(_observed(shell, inputs=("x; touch /tmp/m",)))] == ["shell"]
    plain = Effect(Op.EXEC, argv=("/bin/sh", "-c", "wc -l notes.txt"))
    assert list(command_injection(_observed(plain, inputs=("notes.txt",)))) == []  # no shell syntax in the input
    argv = Effect(Op.EXEC, argv=("git", "log", "x; touch /tmp/m"))
    assert list(command_injection(_observed(argv, inputs=("x; touch /tmp/m",)))) == []  # an argument, no shell
    program = Effect(Op.EXEC, argv=("/usr/bin/evil-tool", "--flag"))
    assert [f.key for f in command_injection(_observed(program, inputs=("/usr/bin/evil-tool",)))] == ["program"]


def test_read_only_truthful_and_network_egress_read_the_annotations() -> None:
    write = Effect(Op.WRITE, path=f"{WORKSPACE}/.cache")
    assert [f.key for f in read_only_truthful(_observed(write, read_only=True))] == ["observed-write"]
    assert list(read_only_truthful(_observed(write))) == []
    assert list(read_only_truthful(_observed(Effect(Op.WRITE, path="/dev/null"), read_only=True))) == []
    connect = Effect(Op.CONNECT, address="127.0.0.1:8080")
    lookup = Effect(Op.DNS, address="example.org")
    [failure] = list(network_egress(_observed(lookup, connect)))
    assert "connect('127.0.0.1:8080')" in failure.message  # the connection rather than the lookup
    assert list(network_egress(_observed(connect, open_world=True))) == []
    assert list(network_egress(_observed(Effect(Op.DNS, address="127.0.0.1")))) == []  # no lookup of a literal
    assert list(network_egress(_observed(Effect(Op.CONNECT, address="/run/nscd/socket")))) == []


def test_without_observation_the_canary_answer_is_still_the_evidence() -> None:
    exchange = _exchange({})
    assert exchange.observation is None
    assert list(network_egress(exchange)) == []


def test_blind_payloads_stay_in_the_planted_root_and_on_loopback() -> None:
    layout = CanaryLayout(ROOT, f"{TEMP}/mcpfuzz-canary-unit", "00ff", listener="http://127.0.0.1:4321")
    paths = dict(path_payloads(layout))
    assert paths["a symlink inside the workspace pointing out"] == "shared/linked.txt"
    climbed = paths["a climb past the root and back"]
    assert (Path(WORKSPACE) / climbed).resolve() == Path(f"{ROOT}/outside.txt").resolve()
    urls = [url for _, url in url_payloads(layout)]
    assert "http://127.0.0.1:4321/00ff" in urls
    assert all("127.0.0.1" in url or "[::1]" in url or "localhost" in url or url == "http:///" for url in urls)
